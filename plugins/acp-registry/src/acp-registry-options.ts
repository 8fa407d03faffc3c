import { RegistryCatalog } from "@switchyard/registry-cache";
import { z } from "zod";
import { RUNTIME_MODES } from "@switchyard/sdk";

/** The `initialize` advertisements an instance may tell Switchyard to ignore (paths in `agentCapabilities`). */
export const IGNORABLE_AGENT_CAPABILITIES = [
  "loadSession",
  "sessionCapabilities.resume",
  "sessionCapabilities.fork",
  "mcpCapabilities.http",
  "mcpCapabilities.sse",
] as const;

/** One of {@link IGNORABLE_AGENT_CAPABILITIES}. */
export type IgnorableAgentCapability = (typeof IGNORABLE_AGENT_CAPABILITIES)[number];

const modeId = z.string().min(1, "must be an agent mode id");

/** Validates ACP Registry driver options. */
export const acpRegistryOptionsSchema = z
  .object({
    /** The registry agent id (`codex-acp`, `gemini`, …), as `switchyard registry search` lists it. */
    agentId: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9._-]*$/,
        "must be a registry agent id (lowercase letters, digits, '.', '_' or '-'); find one with `switchyard registry search`",
      ),
    /** The index URL; default `$SWITCHYARD_ACP_REGISTRY_URL`, else the public ACP Registry. */
    registryUrl: z
      .string()
      .min(1)
      .superRefine((url, ctx) => {
        try {
          // The catalog's constructor applies the URL policy (https; http only on loopback) and touches no disk.
          new RegistryCatalog({ cacheDir: "/nonexistent", registryUrl: url });
        } catch (error) {
          ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
        }
      })
      .optional(),
    /**
     * A local executable (path, or name on PATH) to run instead of the installed one. The
     * registry-declared args and env are kept. With an override nothing has to be installed.
     */
    commandOverride: z.string().min(1).optional(),
    /** The `authenticate` method to use when the agent lists auth methods (e.g. `gemini-api-key`); default: the agent's own login. */
    authMethodId: z.string().min(1).optional(),
    /** Environment for the agent, over the registry-declared env (and the instance's `environment`). */
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "is not an environment variable name"), z.string())
      .optional(),
    /**
     * Features the agent advertises at `initialize` that Switchyard should treat as absent,
     * because this agent (version) advertises them but cannot deliver them.
     */
    ignoreAgentCapabilities: z.array(z.enum(IGNORABLE_AGENT_CAPABILITIES)).optional(),
    /**
     * Which of the agent's session modes stand for Switchyard's runtime modes and plan mode
     * (e.g. Gemini CLI: `{"runtime": {"full-access": "yolo", "auto-accept-edits": "autoEdit",
     * "approval-required": "default"}}`). Without an entry the adapter uses a mode with the same
     * id, else the agent's initial mode, and enforces the runtime mode through its answers to
     * permission requests.
     */
    modes: z
      .object({ runtime: z.partialRecord(z.enum(RUNTIME_MODES), modeId).optional(), plan: modeId.optional() })
      .strict()
      .optional(),
  })
  .strict();

/** Driver options of an ACP Registry instance. */
export type AcpRegistryOptions = z.output<typeof acpRegistryOptionsSchema>;
