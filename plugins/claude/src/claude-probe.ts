import { access, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelDescriptor, PluginContext, ProbeDepth, ProviderInstanceDescriptor, ProviderStatus } from "@switchyard/sdk";
import { resolveClaudeBinary, type ClaudeBinary } from "./claude-binary.js";
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
    // Claude's effort levels, as the SDK reports them per model; a model without them takes none.
    ...(model.supportsEffort === true && (model.supportedEffortLevels?.length ?? 0) > 0 ? { efforts: [...model.supportedEffortLevels!] } : {}),
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

/** What a probe needs. */
export interface ClaudeProbeInput {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: ClaudeOptions;
  readonly context: PluginContext;
  readonly env: Readonly<Record<string, string>>;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Claude's config folder for an environment (what Claude itself would use). */
function configDirOf(env: Readonly<Record<string, string>>): string {
  return env["CLAUDE_CONFIG_DIR"] ?? join(env["HOME"] ?? homedir(), ".claude");
}

/**
 * What the files and environment say about credentials, without starting Claude: a key or
 * token in the environment, a third-party backend (credentials Claude cannot check without a
 * call), an `apiKeyHelper`, or a login stored under the config folder.
 */
export async function credentialsOnDisk(env: Readonly<Record<string, string>>): Promise<boolean | "unknown"> {
  const set = (name: string) => (env[name] ?? "") !== "";
  if (set("ANTHROPIC_API_KEY") || set("ANTHROPIC_AUTH_TOKEN") || set("CLAUDE_CODE_OAUTH_TOKEN")) return true;
  if (set("CLAUDE_CODE_USE_BEDROCK") || set("CLAUDE_CODE_USE_VERTEX") || set("CLAUDE_CODE_USE_FOUNDRY")) return "unknown";
  const dir = configDirOf(env);
  if (await exists(join(dir, ".credentials.json"))) return true;
  try {
    const settings = JSON.parse(await readFile(join(dir, "settings.json"), "utf8")) as { apiKeyHelper?: unknown };
    if (typeof settings.apiKeyHelper === "string") return "unknown";
  } catch {
    // no settings
  }
  // macOS keeps the login in the keychain, which a probe does not read.
  return process.platform === "darwin" ? "unknown" : false;
}

const NO_CREDENTIALS =
  "Claude Code has no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN with ANTHROPIC_BASE_URL for a gateway) in the instance environment, or log in with `claude` under this CLAUDE_CONFIG_DIR.";

/** Why the instance's CLAUDE_CONFIG_DIR cannot be used, or null. Claude creates a missing one itself. */
async function homeProblem(env: Readonly<Record<string, string>>): Promise<string | null> {
  const dir = env["CLAUDE_CONFIG_DIR"];
  if (dir === undefined) return null;
  try {
    return (await stat(dir)).isDirectory() ? null : `CLAUDE_CONFIG_DIR "${dir}" is not a folder. Point the instance's homePath at a folder.`;
  } catch {
    return null;
  }
}

function notFound(input: ClaudeProbeInput): ProviderStatus {
  return {
    installed: false,
    executable: false,
    authenticated: false,
    models: input.instance.customModels.map((id) => ({ id })),
    message:
      input.options.claudePath !== undefined
        ? `claude was not found at "${input.options.claudePath}" (the instance's claudePath option).`
        : `The claude binary bundled with the Claude Agent SDK is not installed for ${process.platform}-${process.arch}. Reinstall the plugin's dependencies without --omit=optional.`,
  };
}

/**
 * `claude --version` with a throwaway CLAUDE_CONFIG_DIR, so a probe never writes into the
 * instance's home.
 */
async function inspectClaude(input: ClaudeProbeInput, binary: ClaudeBinary): Promise<ProviderStatus> {
  const custom = input.instance.customModels.map((id) => ({ id }));
  const home = await homeProblem(input.env);
  if (home !== null) return { installed: true, executable: false, authenticated: false, models: custom, message: home };
  const scratch = await mkdtemp(join(tmpdir(), "switchyard-claude-probe-"));
  let result;
  try {
    result = await input.context.process.run(binary.path, ["--version"], { cwd: scratch, env: { ...input.env, CLAUDE_CONFIG_DIR: scratch }, extendEnv: false, timeoutMs: 15_000, label: "claude --version" });
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
  const version = /\d+\.\d+\.\d+\S*/.exec(result.stdout)?.[0];
  if (result.failed || result.exitCode !== 0 || version === undefined) {
    return { installed: true, executable: false, authenticated: false, models: custom, message: `claude --version failed: ${(result.stderr || result.stdout).trim().slice(-400) || `exit code ${result.exitCode ?? "none"}`}` };
  }
  const authenticated = await credentialsOnDisk(input.env);
  return { installed: true, executable: true, authenticated, version, models: custom, ...(authenticated === false ? { message: NO_CREDENTIALS } : {}) };
}

/**
 * The instance's status. `inspect` looks without touching: the binary, `claude --version` with
 * a throwaway home, the config folder, credentials in the environment or on disk; its model
 * list is the custom models. `full` (the default) starts `claude` in streaming-input mode
 * without sending a prompt and reads its initialize answer (version, the SDK's models, the
 * account), so no model turn ever starts. About half a second.
 */
export async function probeClaude(input: ClaudeProbeInput, depth: ProbeDepth = "full"): Promise<ProviderStatus> {
  const binary = resolveClaudeBinary(input.options.claudePath);
  if (binary === null) return notFound(input);
  if (depth === "inspect") return inspectClaude(input, binary);
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
        ? { message: NO_CREDENTIALS }
        : {}),
    };
  } catch (error) {
    return {
      installed: true,
      executable: false,
      authenticated: false,
      models: custom,
      message: handle.describe(`claude did not start: ${(error as Error).message}`),
    };
  } finally {
    clearTimeout(timer);
    prompt.end();
    query.close();
    await handle.stop();
  }
}
