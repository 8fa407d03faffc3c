import {
  OrchestratorCapabilitiesInput,
  OrchestratorCapabilitiesOutput,
} from "../../../contract/orchestrator-capabilities.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";
import { linkedGrantOf } from "../linked-caller.js";

export const orchestratorCapabilitiesTool = defineTool({
  name: "orchestrator_capabilities",
  title: "Orchestrator capabilities",
  description:
    "What you inherit (provider, model, modes), which provider instances can run a delegated task or a new thread (and why not), a short list of each provider's models (omittedModels counts the rest; pass search to find them), feature flags, limits and the token, cost and wall-clock budgets in force. Call this once before concluding the orchestration tools are missing.",
  input: OrchestratorCapabilitiesInput,
  output: OrchestratorCapabilitiesOutput,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => {
    const caller = callerFromScope(scope);
    const described = await services.capabilities.describe(caller, input);
    const grant = linkedGrantOf(scope);
    // A linked environment learns what its grant allows here, never what this side links to.
    if (grant !== null) {
      return {
        ...described,
        environmentId: services.environmentId,
        grant: {
          grantId: grant.id,
          verbs: [...grant.verbs],
          maxRuntimeMode: grant.maxRuntimeMode,
          projects: grant.projects === "*" ? ("*" as const) : [...grant.projects],
          profiles: [...grant.profiles],
        },
      };
    }
    const environments = await services.reach.environments(caller);
    return environments.length === 0 ? described : { ...described, environments };
  },
});
