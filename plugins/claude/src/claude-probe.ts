import { access, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import {
  harnessNotFoundStatus,
  harnessVersionVerdict,
  withHarnessVerdict,
  type ModelDescriptor,
  type PluginContext,
  type ProbeDepth,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "@switchyard/sdk";
import { findClaude, type ClaudeBinary, type ClaudeLookup } from "./claude-binary.js";
import type { ClaudeOptions } from "./claude-options.js";
import { claudeProcessHandle } from "./claude-process.js";
import { PromptStream } from "./claude-prompt-stream.js";
import { loadClaudeSdk, type ModelInfo, type SDKControlInitializeResponse } from "./claude-wire.js";

/**
 * The model `ANTHROPIC_MODEL` names (Claude Code's default when set: a gateway's or a local
 * endpoint's model), or null.
 */
export function configuredClaudeModel(env: Readonly<Record<string, string | undefined>>): string | null {
  const model = env["ANTHROPIC_MODEL"]?.trim() ?? "";
  return model === "" ? null : model;
}

/**
 * The configured model (`ANTHROPIC_MODEL`, the default when set), then the SDK's models (Claude
 * Code's own aliases and models, whatever `ANTHROPIC_BASE_URL` says), then the instance's custom
 * ones neither lists.
 */
export function claudeModels(
  models: readonly ModelInfo[],
  customModels: readonly string[],
  configured: string | null = null,
): ModelDescriptor[] {
  const listed: ModelDescriptor[] = models
    .filter((model) => model.value !== configured)
    .map((model) => ({
      id: model.value,
      ...(model.displayName ? { displayName: model.displayName } : {}),
      ...(model.value === "default" && configured === null ? { isDefault: true } : {}),
      source: "harness_catalog" as const,
      // Claude's effort levels, as the SDK reports them per model; a model without them takes none.
      ...(model.supportsEffort === true && (model.supportedEffortLevels?.length ?? 0) > 0
        ? { efforts: [...model.supportedEffortLevels!] }
        : {}),
    }));
  if (configured !== null) listed.unshift({ id: configured, isDefault: true, source: "harness_config" });
  return [...listed, ...customModels.filter((id) => !listed.some((model) => model.id === id)).map((id) => ({ id }))];
}

/**
 * Whether the instance has credentials, from the initialize answer: an API key or token source,
 * a third-party backend (Bedrock, Vertex, a gateway) whose credentials Claude cannot check
 * without a call, or nothing.
 */
export function claudeAuthentication(
  account: SDKControlInitializeResponse["account"] | undefined,
): boolean | "unknown" {
  if (account === undefined) return "unknown";
  if (account.apiProvider !== undefined && account.apiProvider !== "firstParty") return "unknown";
  const sources = [account.apiKeySource, account.tokenSource].filter(
    (source): source is string => source !== undefined,
  );
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
  if (set("CLAUDE_CODE_USE_BEDROCK") || set("CLAUDE_CODE_USE_VERTEX") || set("CLAUDE_CODE_USE_FOUNDRY"))
    return "unknown";
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
    return (await stat(dir)).isDirectory()
      ? null
      : `CLAUDE_CONFIG_DIR "${dir}" is not a folder. Point the instance's homePath at a folder.`;
  } catch {
    return null;
  }
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
    result = await input.context.process.run(binary.path, ["--version"], {
      cwd: scratch,
      env: { ...input.env, CLAUDE_CONFIG_DIR: scratch },
      extendEnv: false,
      timeoutMs: 15_000,
      label: "claude --version",
    });
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
  const version = /\d+\.\d+\.\d+\S*/.exec(result.stdout)?.[0];
  if (result.failed || result.exitCode !== 0 || version === undefined) {
    return {
      installed: true,
      executable: false,
      authenticated: false,
      models: custom,
      message: `claude --version failed: ${(result.stderr || result.stdout).trim().slice(-400) || `exit code ${result.exitCode ?? "none"}`}`,
    };
  }
  const authenticated = await credentialsOnDisk(input.env);
  const models = claudeModels([], input.instance.customModels, configuredClaudeModel(input.env));
  return {
    installed: true,
    executable: true,
    authenticated,
    version,
    models,
    ...(authenticated === false ? { message: NO_CREDENTIALS } : {}),
  };
}

/**
 * The instance's status. `inspect` looks without touching: the binary, `claude --version` with
 * a throwaway home, the config folder, credentials in the environment or on disk; its model
 * list is the custom models. `full` (the default) starts `claude` in streaming-input mode
 * without sending a prompt and reads its initialize answer (version, the SDK's models, the
 * account), so no model turn ever starts. About half a second.
 */
export async function probeClaude(input: ClaudeProbeInput, depth: ProbeDepth = "full"): Promise<ProviderStatus> {
  const custom = input.instance.customModels.map((id) => ({ id }));
  const lookup = await findClaude(input.options.claudePath, input.context, input.env);
  if (lookup.sdk.found === null) return harnessNotFoundStatus(lookup.sdk, custom);
  if (lookup.binary === null) return harnessNotFoundStatus(lookup.search, custom);
  const status =
    depth === "inspect" ? await inspectClaude(input, lookup.binary) : await initializeClaude(input, lookup);
  // Where claude was found, whether its version is tested (or, before 2.1.332, refused), and
  // whether the SDK's own version is one this plugin was tested with.
  const checked = withHarnessVerdict(lookup.search, status);
  const sdk = harnessVersionVerdict(
    lookup.sdk.spec,
    lookup.sdk.found.packageVersion,
    lookup.sdk.found.packageDir ?? undefined,
  );
  return sdk.kind === "untested" ? { ...checked, warnings: [...(checked.warnings ?? []), sdk.warning] } : checked;
}

/** The `full` probe: starts `claude` through the SDK without a prompt and reads its initialize answer. */
async function initializeClaude(input: ClaudeProbeInput, lookup: ClaudeLookup): Promise<ProviderStatus> {
  const custom = input.instance.customModels.map((id) => ({ id }));
  let sdk;
  try {
    sdk = await loadClaudeSdk(lookup.sdk);
  } catch (error) {
    return {
      installed: false,
      executable: false,
      authenticated: false,
      models: custom,
      message: (error as Error).message,
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
      pathToClaudeCodeExecutable: lookup.binary!.path,
      spawnClaudeCodeProcess: handle.spawn,
    },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const init = await Promise.race([
      query.initializationResult(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no initialize answer within ${input.options.probeTimeoutMs} ms`)),
          input.options.probeTimeoutMs,
        );
      }),
    ]);
    const authenticated = claudeAuthentication(init.account);
    return {
      installed: true,
      executable: true,
      authenticated,
      ...(init.claude_code_version !== undefined ? { version: init.claude_code_version } : {}),
      models: claudeModels(init.models, input.instance.customModels, configuredClaudeModel(input.env)),
      ...(authenticated === false ? { message: NO_CREDENTIALS } : {}),
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
