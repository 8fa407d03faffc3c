import {
  defineAdapter,
  defineDriver,
  harnessEnvironment,
  packageEntry,
  type CreateInstanceInput,
  type OrchestrationAdapter,
  type ProviderDriver,
} from "@switchyard/sdk";
import { findClaudeSdk } from "./claude-binary.js";
import { CLAUDE_CAPABILITIES } from "./claude-capabilities.js";
import { claudeOptionsSchema, type ClaudeOptions } from "./claude-options.js";
import { bypassPermissionsAvailable } from "./claude-permissions.js";
import { probeClaude } from "./claude-probe.js";
import { ClaudeProviderSession } from "./claude-session.js";
import { ClaudeTranscripts } from "./claude-transcripts.js";

function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/**
 * The OrchestrationAdapter of one Claude instance, on the harness kit's adapter shell: each
 * session runs its own `claude` process through the Agent SDK.
 */
export function createClaudeAdapter({
  instance,
  options,
  context,
}: CreateInstanceInput<ClaudeOptions>): OrchestrationAdapter {
  // The instance home is Claude's CLAUDE_CONFIG_DIR; its environment (ANTHROPIC_BASE_URL, a
  // gateway's token…) reaches the harness. Background tasks are off: a sub-agent or shell job
  // Claude backgrounds outlives the turn and starts turns of its own when it settles, so a host
  // turn would end before its work did. In the foreground a sub-agent's report is its tool result.
  const env = harnessEnvironment({
    instance,
    homeVariable: "CLAUDE_CONFIG_DIR",
    own: {
      CLAUDE_AGENT_SDK_CLIENT_APP: `switchyard/${context.hostVersion}`,
      CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: "1",
    },
  });
  const bypassAvailable = bypassPermissionsAvailable(env, isRoot());
  const transcripts = new ClaudeTranscripts(context.process, env, async () => {
    const sdk = await findClaudeSdk(context, env);
    return sdk.found?.packageDir ? packageEntry(sdk.found.packageDir) : null;
  });
  return defineAdapter({
    instance,
    driverKind: "claude",
    capabilities: CLAUDE_CAPABILITIES,
    probe: (probeOptions) => probeClaude({ instance, options, context, env }, probeOptions?.depth),
    createSession: (input, onClosed) =>
      new ClaudeProviderSession({ instance, options, context, env, bypassAvailable, transcripts }, input, onClosed),
  });
}

/** The `claude` driver. */
export function createClaudeDriver(): ProviderDriver<ClaudeOptions> {
  return defineDriver<ClaudeOptions>({
    driverKind: "claude",
    displayName: "Claude",
    optionsSchema: claudeOptionsSchema,
    capabilities: CLAUDE_CAPABILITIES,
    create: createClaudeAdapter,
  });
}
