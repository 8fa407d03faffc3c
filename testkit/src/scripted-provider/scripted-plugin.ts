import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { decodeCapabilities, type CapabilityDeclaration } from "@switchyard/spec";
import { defineDriver, definePlugin } from "@switchyard/sdk";
import { ScriptedAdapter, type ScriptedProviderOptions } from "./scripted-adapter.js";

/** Everything the scripted provider can do; tests narrow it per instance with `options.capabilities`. */
export const FULL_SCRIPTED_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: true,
    runtimeModeSwitchInSession: true,
    pendingRequestsSurviveRestart: false,
    harnessHome: true,
    environment: true,
  },
  threads: { readSnapshot: true, fork: true, forkFromTurn: false },
  turns: {
    emitsTurnStarted: true,
    interrupt: true,
    activeSteering: true,
    steeringByInterruptRestart: true,
    queuedMessages: false,
    terminalStatusQuality: "strong",
  },
  tools: {
    shell: false,
    mcp: { http: true, sse: false, stdio: false },
    dynamicToolCallbacks: false,
    mcpGrantUpdate: true,
    // Enforced on its shell, edit and MCP steps; ask rules are not (it has no prompt of its own for them).
    rules: { allow: true, deny: true, ask: false, allowOnly: true },
  },
  runtimeRequests: { approvals: true, userInputQuestions: true },
  subagents: { native: "observed", exposesChildThreadIds: false, reportsUsage: true, reportsTranscript: true },
  context: { acceptsInstructions: true, maxHandoffChars: 20_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "strong", nativeItemIds: "strong" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["plan", "default"],
};

const OptionsSchema = z
  .object({
    /** Replaces the declared capabilities (decoded pessimistically: omitted means unsupported). */
    capabilities: z.record(z.string(), z.unknown()).optional(),
    gateDir: z.string().optional(),
    stateDir: z.string().optional(),
    models: z.array(z.string()).optional(),
    defaultModel: z.string().optional(),
    modelSources: z.record(z.string(), z.enum(["harness_config", "harness_catalog", "endpoint"])).optional(),
    modelEfforts: z.record(z.string(), z.array(z.string().min(1)).min(1)).optional(),
    status: z
      .object({
        installed: z.boolean().optional(),
        executable: z.boolean().optional(),
        authenticated: z.union([z.boolean(), z.literal("unknown")]).optional(),
      })
      .optional(),
    statusFile: z.string().optional(),
    probeGate: z.string().optional(),
    probeLog: z.string().optional(),
    replyDelayMs: z.number().int().min(0).optional(),
  })
  .strict();

/** The `scripted` driver: a deterministic provider for tests, with configurable capabilities. */
export const scriptedDriver = defineDriver<z.infer<typeof OptionsSchema>>({
  driverKind: "scripted",
  displayName: "Scripted test provider",
  optionsSchema: OptionsSchema,
  capabilities: FULL_SCRIPTED_CAPABILITIES,
  create: ({ instance, options }) => {
    const declared = decodeCapabilities(options.capabilities ?? FULL_SCRIPTED_CAPABILITIES).capabilities;
    const scripted: ScriptedProviderOptions = {
      ...(options.gateDir !== undefined ? { gateDir: options.gateDir } : {}),
      ...(options.stateDir !== undefined ? { stateDir: options.stateDir } : {}),
      ...(options.models !== undefined ? { models: options.models } : {}),
      ...(options.defaultModel !== undefined ? { defaultModel: options.defaultModel } : {}),
      ...(options.modelSources !== undefined ? { modelSources: options.modelSources } : {}),
      ...(options.modelEfforts !== undefined ? { modelEfforts: options.modelEfforts } : {}),
      ...(options.status !== undefined ? { status: options.status } : {}),
      ...(options.replyDelayMs !== undefined ? { replyDelayMs: options.replyDelayMs } : {}),
      ...(options.statusFile !== undefined ? { statusFile: options.statusFile } : {}),
      ...(options.probeGate !== undefined ? { probeGate: options.probeGate } : {}),
      ...(options.probeLog !== undefined ? { probeLog: options.probeLog } : {}),
    };
    return new ScriptedAdapter(instance.id, scripted, declared);
  },
});

/** The scripted provider plugin (what its plugin folder's entry exports). */
export const scriptedProviderPlugin = definePlugin({ drivers: [scriptedDriver] });

/**
 * The plugin folder to list in a test config's `plugins`: it loads through the plugin host
 * like any third-party plugin (manifest check, spec range, import).
 */
export const SCRIPTED_PROVIDER_PLUGIN_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "plugins",
  "scripted-provider",
);
