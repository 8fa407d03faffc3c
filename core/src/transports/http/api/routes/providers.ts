import { ListProvidersInput, ListProvidersOutput } from "../../../../contract/list-providers.js";
import { ProviderDoctorInput, ProviderDoctorOutput } from "../../../../contract/provider-doctor.js";
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
  query: ListProvidersInput,
  input: ListProvidersInput,
  output: ListProvidersOutput,
  outputName: "ProviderSnapshot",
  handle: async (input, { caller, services }) => ({
    providers: (await services.capabilities.describe(caller, input)).providers,
  }),
});

export const providerDoctorRoute = defineRoute({
  method: "GET",
  path: "/providers/doctor",
  operationId: "providerDoctor",
  summary: "switchyard doctor's provider findings: what each instance lacks and what fixes it",
  description:
    "Read-only, from the provider snapshot (never a probe on the call's path): each configured instance with doctor's status and line, whether it can run work, and when not, why (problem, which names the fix) and the command that installs its harness when it was not found (install). configFile is where instances are configured, drivers the driver kinds loaded plugins offer. For a client (a token or the web UI): an agent or a linked environment answers capability_denied.",
  tag: "providers",
  requires: "orchestration:read",
  input: ProviderDoctorInput,
  output: ProviderDoctorOutput,
  outputName: "ProviderDoctor",
  handle: (_input, { caller, services }) => services.providerDoctor.describe(caller),
});
