import { z } from "zod";
import { OrchestratorCapabilitiesInput, OrchestratorCapabilitiesOutput } from "../../../../contract/orchestrator-capabilities.js";
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
  query: OrchestratorCapabilitiesInput,
  input: OrchestratorCapabilitiesInput,
  output: OrchestratorCapabilitiesOutput.pick({ providers: true }),
  outputName: "ProviderSnapshot",
  handle: async (input, { caller, services }) => ({ providers: (await services.capabilities.describe(caller, input)).providers }),
});

const FindingStatus = z.enum(["ok", "info", "warn", "fail"]);

export const providerDoctorRoute = defineRoute({
  method: "GET",
  path: "/providers/doctor",
  operationId: "providerDoctor",
  summary: "switchyard doctor's provider findings: what each instance lacks and what fixes it",
  description:
    "Read-only, from the provider snapshot (never a probe on the call's path): each configured instance with doctor's status and line, whether it can run work, and when not, why (problem, which names the fix) and the command that installs its harness when it was not found (install). configFile is where instances are configured, drivers the driver kinds loaded plugins offer. For a client (a token or the web UI): an agent or a linked environment answers capability_denied.",
  tag: "providers",
  requires: "orchestration:read",
  input: z.object({}).strict(),
  output: z.object({
    configFile: z.string().describe("The config file whose providers list configures instances."),
    drivers: z.array(z.string()).describe("Driver kinds the loaded plugins offer (what an instance's driver may be)."),
    ready: z.boolean().describe("Some instance can run work now."),
    providers: z.array(
      z.object({
        providerInstanceId: z.string(),
        driverKind: z.string(),
        displayName: z.string(),
        status: FindingStatus.describe("doctor's verdict: fail when it cannot run work, warn when it can with a caveat, info when disabled."),
        detail: z.string().describe("doctor's line for it."),
        canRunWork: z.boolean(),
        checking: z.boolean().describe("Its first check is still running: nothing is known yet."),
        enabled: z.boolean(),
        problem: z.string().nullable().describe("Why it cannot run work, in words that say what to do; null when it can."),
        install: z.string().nullable().describe("The command that installs its harness, when the harness was not found."),
        version: z.string().nullable(),
        authenticated: z.union([z.boolean(), z.literal("unknown")]).nullable(),
        mcp: z.enum(["http", "stdio", "none"]).describe("How it reaches Switchyard's tools."),
        warnings: z.array(z.string()),
        checkedAt: z.string().nullable(),
      }),
    ),
  }),
  outputName: "ProviderDoctor",
  handle: (_input, { caller, services }) => services.providerDoctor.describe(caller),
});
