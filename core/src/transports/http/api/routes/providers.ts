import { orchestratorCapabilitiesTool } from "../../../mcp/tools/orchestrator-capabilities.js";
import { defineRoute } from "../api-route.js";

export const listProvidersRoute = defineRoute({
  method: "GET",
  path: "/providers",
  operationId: "listProviders",
  summary: "The provider snapshot: which instances can run work, their models and modes",
  description:
    "orchestrator_capabilities' providers: read from the snapshot the server keeps (never a probe on the call's path). canRunChildTasks false comes with the reason in constraints. models is a short list (omittedModels counts the rest; search finds them).",
  tag: "providers",
  requires: "orchestration:read",
  query: orchestratorCapabilitiesTool.input,
  input: orchestratorCapabilitiesTool.input,
  output: orchestratorCapabilitiesTool.output.pick({ providers: true }),
  outputName: "ProviderSnapshot",
  handle: async (input, { caller, services }) => ({ providers: (await services.capabilities.describe(caller, input)).providers }),
});
