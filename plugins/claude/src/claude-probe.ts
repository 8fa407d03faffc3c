import { tmpdir } from "node:os";
import type { ModelDescriptor, PluginContext, ProviderInstanceDescriptor, ProviderStatus } from "@switchyard/sdk";
import type { ClaudeOptions } from "./claude-options.js";
import { claudeProcessHandle } from "./claude-process.js";
import { PromptStream } from "./claude-prompt-stream.js";
import { loadClaudeSdk, type ModelInfo, type SDKControlInitializeResponse } from "./claude-wire.js";

/** The SDK's models, then the instance's custom ones it does not list. */
export function claudeModels(models: readonly ModelInfo[], customModels: readonly string[]): ModelDescriptor[] {
  const listed: ModelDescriptor[] = models.map((model) => ({
    id: model.value,
    ...(model.displayName ? { displayName: model.displayName } : {}),
    ...(model.value === "default" ? { isDefault: true } : {}),
  }));
  return [...listed, ...customModels.filter((id) => !listed.some((model) => model.id === id)).map((id) => ({ id }))];
}

/**
 * Whether the instance has credentials, from the initialize answer: an API key or token source,
 * a third-party backend (Bedrock, Vertex, a gateway) whose credentials Claude cannot check
 * without a call, or nothing.
 */
export function claudeAuthentication(account: SDKControlInitializeResponse["account"] | undefined): boolean | "unknown" {
  if (account === undefined) return "unknown";
  if (account.apiProvider !== undefined && account.apiProvider !== "firstParty") return "unknown";
  const sources = [account.apiKeySource, account.tokenSource].filter((source): source is string => source !== undefined);
  if (sources.length === 0) return "unknown";
  return sources.some((source) => source !== "none");
}

/**
 * Starts `claude` in streaming-input mode without sending a prompt and reads its initialize
 * answer (version, models, account), so no model turn ever starts. About half a second.
 */
export async function probeClaude(input: {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: ClaudeOptions;
  readonly context: PluginContext;
  readonly env: Readonly<Record<string, string>>;
}): Promise<ProviderStatus> {
  const custom = input.instance.customModels.map((id) => ({ id }));
  let sdk;
  try {
    sdk = await loadClaudeSdk();
  } catch (error) {
    return {
      installed: false,
      executable: false,
      authenticated: false,
      models: custom,
      message: `The Claude Agent SDK is not installed (${(error as Error).message}). Install the plugin with its dependencies: npm install @switchyard/plugin-claude.`,
    };
  }
  const prompt = new PromptStream();
  const handle = claudeProcessHandle(input.context.process, "claude probe");
  const query = sdk.query({
    prompt,
    options: {
      cwd: tmpdir(),
      env: { ...input.env },
      permissionMode: "default",
      ...(input.options.claudePath !== undefined ? { pathToClaudeCodeExecutable: input.options.claudePath } : {}),
      spawnClaudeCodeProcess: handle.spawn,
    },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const init = await Promise.race([
      query.initializationResult(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no initialize answer within ${input.options.probeTimeoutMs} ms`)), input.options.probeTimeoutMs);
      }),
    ]);
    const authenticated = claudeAuthentication(init.account);
    return {
      installed: true,
      executable: true,
      authenticated,
      ...(init.claude_code_version !== undefined ? { version: init.claude_code_version } : {}),
      models: claudeModels(init.models, input.instance.customModels),
      ...(authenticated === false
        ? { message: "Claude Code has no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN with ANTHROPIC_BASE_URL for a gateway) in the instance environment, or log in with `claude` under this CLAUDE_CONFIG_DIR." }
        : {}),
    };
  } catch (error) {
    const notFound = /ENOENT|not found|no such file/i.test(`${(error as Error).message}\n${handle.stderr.text}`);
    return {
      installed: !notFound || input.options.claudePath === undefined,
      executable: false,
      authenticated: false,
      models: custom,
      message: handle.stderr.describe(`claude did not start: ${(error as Error).message}`),
    };
  } finally {
    clearTimeout(timer);
    prompt.end();
    query.close();
    await handle.stop();
  }
}
