import { z } from "zod";

const FindingStatus = z.enum(["ok", "info", "warn", "fail"]);

/** providerDoctor (HTTP API): switchyard doctor's provider findings, for a person's client. */
export const ProviderDoctorInput = z.object({}).strict();

export const ProviderDoctorOutput = z.object({
  configFile: z.string().describe("The config file whose providers list configures instances."),
  drivers: z.array(z.string()).describe("Driver kinds the loaded plugins offer (what an instance's driver may be)."),
  ready: z.boolean().describe("Some instance can run work now."),
  providers: z.array(
    z.object({
      providerInstanceId: z.string(),
      driverKind: z.string(),
      displayName: z.string(),
      status: FindingStatus.describe(
        "doctor's verdict: fail when it cannot run work, warn when it can with a caveat, info when disabled.",
      ),
      detail: z.string().describe("doctor's line for it."),
      canRunWork: z.boolean(),
      checking: z.boolean().describe("Its first check is still running: nothing is known yet."),
      enabled: z.boolean(),
      problem: z
        .string()
        .nullable()
        .describe("Why it cannot run work, in words that say what to do; null when it can."),
      install: z.string().nullable().describe("The command that installs its harness, when the harness was not found."),
      version: z.string().nullable(),
      authenticated: z.union([z.boolean(), z.literal("unknown")]).nullable(),
      mcp: z.enum(["http", "stdio", "none"]).describe("How it reaches Switchyard's tools."),
      warnings: z.array(z.string()),
      checkedAt: z.string().nullable(),
    }),
  ),
});
