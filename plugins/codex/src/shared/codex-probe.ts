import { access, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import {
  harnessNotFoundStatus,
  withHarnessVerdict,
  withStderrTail,
  type ModelDescriptor,
  type PluginContext,
  type ProbeDepth,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "@switchyard/sdk";
import { CodexRpc } from "./codex-rpc.js";
import type { v2 } from "../codex-wire.js";
import { findCodex, type CodexBinary } from "./codex-binary.js";
import { codexEnvironment } from "./codex-environment.js";
import { codexModelEfforts } from "./codex-efforts.js";

/** What `config.toml` says about the model, its provider and where credentials are kept. */
interface ConfiguredModel {
  readonly model: string | null;
  readonly provider: string | null;
  /** The env var a custom provider reads its key from, when it has one. */
  readonly envKey: string | null;
  /** `cli_auth_credentials_store` (`file`, `keyring`, `auto`), when set. */
  readonly credentialsStore: string | null;
}

/** The folder Codex uses as its home for an environment (what Codex itself would use). */
function codexHomeOf(env: Readonly<Record<string, string>>): string {
  return env.CODEX_HOME ?? join(env.HOME ?? homedir(), ".codex");
}

async function readConfiguredModel(codexHome: string): Promise<ConfiguredModel> {
  try {
    const config = parseToml(await readFile(join(codexHome, "config.toml"), "utf8")) as Record<string, unknown>;
    const model = typeof config.model === "string" ? config.model : null;
    const provider = typeof config.model_provider === "string" ? config.model_provider : null;
    const providers = (config.model_providers ?? {}) as Record<string, { env_key?: unknown } | undefined>;
    const envKey =
      provider !== null && typeof providers[provider]?.env_key === "string"
        ? (providers[provider]!.env_key as string)
        : null;
    const credentialsStore =
      typeof config.cli_auth_credentials_store === "string" ? config.cli_auth_credentials_store : null;
    return { model, provider, envKey, credentialsStore };
  } catch {
    return { model: null, provider: null, envKey: null, credentialsStore: null };
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the CODEX_HOME an instance sets (its homePath, or CODEX_HOME in its environment) cannot
 * be used, or null when it can or none is set. Codex refuses to start on a missing one; the
 * default `~/.codex` it creates itself.
 */
async function homeProblem(
  instance: ProviderInstanceDescriptor,
  env: Readonly<Record<string, string>>,
): Promise<string | null> {
  const home = env.CODEX_HOME;
  if (home === undefined) return null;
  const what = instance.homePath !== null ? `The instance's homePath "${home}" (CODEX_HOME)` : `CODEX_HOME "${home}"`;
  const fix = instance.homePath !== null ? "fix homePath" : "fix CODEX_HOME";
  try {
    if ((await stat(home)).isDirectory()) return null;
    return `${what} is not a folder. Point it at a Codex home folder, or ${fix}.`;
  } catch {
    return `${what} does not exist. Create it (then run \`codex login\` with CODEX_HOME set to it, or add a config.toml), or ${fix}.`;
  }
}

/**
 * `codex --version` with a throwaway CODEX_HOME: every Codex start writes helper links into
 * `$CODEX_HOME/tmp`, and a probe must not write into the user's home.
 */
async function runVersion(binary: CodexBinary, env: Record<string, string>, context: PluginContext) {
  const scratch = await mkdtemp(join(tmpdir(), "switchyard-codex-probe-"));
  try {
    return await context.process.run(binary.command, ["--version"], {
      cwd: scratch,
      env: { ...env, CODEX_HOME: scratch },
      extendEnv: false,
      timeoutMs: 15_000,
      label: "codex --version",
    });
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Asks a short-lived app-server for its model catalog and account (no thread, no model call). */
async function askAppServer(
  binary: CodexBinary,
  env: Record<string, string>,
  context: PluginContext,
): Promise<{ models: v2.Model[]; account: v2.GetAccountResponse | null }> {
  const child = context.process.spawn(binary.command, ["app-server"], {
    cwd: tmpdir(),
    env,
    extendEnv: false,
    stdin: "pipe",
    label: "codex app-server probe",
  });
  const rpc = new CodexRpc(child, {
    label: "codex app-server probe",
    logger: context.logger,
    onNotification: () => undefined,
    onRequest: async () => {
      throw new Error("The probe answers no requests.");
    },
  });
  try {
    try {
      await rpc.initialize(context.hostVersion, 10_000);
    } catch (error) {
      // Let the exit land first, so the stderr tail holds what Codex said on its way out.
      await Promise.race([child.exited, new Promise((resolve) => setTimeout(resolve, 500).unref())]);
      throw new Error(
        withStderrTail(
          `codex app-server did not answer initialize: ${error instanceof Error ? error.message : String(error)}`,
          child.stderrTail(),
        ),
      );
    }
    const [models, account] = await Promise.all([
      rpc.request("model/list", {}, 10_000).catch(() => null),
      rpc.request("account/read", {}, 10_000).catch(() => null),
    ]);
    return { models: models?.data ?? [], account };
  } finally {
    await rpc.stop();
  }
}

/**
 * The status of a Codex instance. Both depths: the executable is found and `codex --version`
 * answers (run with a throwaway CODEX_HOME), the instance's homePath is a folder, config.toml
 * names the model and its provider, and the credentials Codex would use are present (the
 * provider's key variable, else `auth.json` or an API key variable). `full` also asks a
 * short-lived app-server (with the real CODEX_HOME) for its `model/list` catalog and account.
 * Never starts a thread or a model turn.
 */
export async function probeCodex(input: {
  readonly codexPath: string | undefined;
  readonly instance: ProviderInstanceDescriptor;
  readonly context: PluginContext;
  readonly depth: ProbeDepth;
}): Promise<ProviderStatus> {
  const { instance, context } = input;
  const baseEnv = codexEnvironment({ instance, binary: null, grant: null });
  const custom = instance.customModels.map((id) => ({ id }));
  const { search, binary } = await findCodex(input.codexPath, context, baseEnv);
  if (binary === null) return harnessNotFoundStatus(search, custom);
  // Where Codex was found and whether its version is one this plugin was tested with.
  return withHarnessVerdict(search, await probeFound(input, binary, custom));
}

/** {@link probeCodex} once the executable is found. */
async function probeFound(
  input: { readonly instance: ProviderInstanceDescriptor; readonly context: PluginContext; readonly depth: ProbeDepth },
  binary: CodexBinary,
  custom: ModelDescriptor[],
): Promise<ProviderStatus> {
  const { instance, context } = input;
  const baseEnv = codexEnvironment({ instance, binary: null, grant: null });
  const home = await homeProblem(instance, baseEnv);
  if (home !== null) return { installed: true, executable: false, authenticated: false, models: custom, message: home };
  const env = codexEnvironment({ instance, binary, grant: null });
  const version = await runVersion(binary, env, context);
  const match = /codex(?:-cli)?\s+(\S+)/.exec(version.stdout);
  if (version.failed || match === null) {
    return {
      installed: true,
      executable: false,
      authenticated: false,
      models: custom,
      message: `"${binary.command} --version" failed: ${(version.stderr || version.stdout).trim().slice(-400) || `exit code ${version.exitCode}`}`,
    };
  }
  const codexHome = codexHomeOf(env);
  const configured = await readConfiguredModel(codexHome);
  let fromServer: Awaited<ReturnType<typeof askAppServer>> = { models: [], account: null };
  if (input.depth === "full") {
    try {
      fromServer = await askAppServer(binary, env, context);
    } catch (error) {
      return {
        installed: true,
        executable: false,
        authenticated: false,
        version: match[1]!,
        models: custom,
        message: error instanceof Error ? error.message : String(error),
      };
    }
  }

  const models: ModelDescriptor[] = [];
  const seen = new Set<string>();
  const add = (model: ModelDescriptor) => {
    if (seen.has(model.id)) return;
    seen.add(model.id);
    models.push(model);
  };
  // The configured model, with the efforts the catalog lists for it when it lists it.
  const configuredEntry = fromServer.models.find((model) => model.id === configured.model);
  if (configured.model !== null)
    add({
      id: configured.model,
      isDefault: true,
      source: "harness_config",
      ...(configuredEntry !== undefined ? codexModelEfforts(configuredEntry) : {}),
    });
  // Codex's own catalog: OpenAI's models, whatever `base_url` the configured provider has.
  for (const model of fromServer.models) {
    if (model.hidden) continue;
    add({
      id: model.id,
      displayName: model.displayName,
      source: "harness_catalog",
      ...(configured.model === null && model.isDefault ? { isDefault: true } : {}),
      ...codexModelEfforts(model),
    });
  }
  for (const model of custom) add(model);

  const hasApiKey = Boolean(env.OPENAI_API_KEY) || Boolean(env.CODEX_API_KEY);
  const loginMessage = `Codex is not logged in: there is no ${join(codexHome, "auth.json")} and no OPENAI_API_KEY or CODEX_API_KEY. Run \`codex login\` with this instance's CODEX_HOME, or set CODEX_API_KEY in the instance environment.`;
  let authenticated: ProviderStatus["authenticated"] = "unknown";
  let message: string | undefined;
  if (configured.envKey !== null) {
    authenticated = env[configured.envKey] !== undefined && env[configured.envKey] !== "";
    if (!authenticated)
      message = `Model provider "${configured.provider}" reads its key from ${configured.envKey}, which is not set for this instance.`;
  } else if (fromServer.account?.account) {
    authenticated = true;
  } else if (fromServer.account?.requiresOpenaiAuth && !hasApiKey) {
    authenticated = false;
    message = loginMessage;
  } else if (
    fromServer.account === null &&
    (configured.provider === null || configured.provider === "openai") &&
    (configured.credentialsStore ?? "file") === "file"
  ) {
    // Without an app-server to ask: the built-in OpenAI provider needs a login file or a key.
    authenticated = hasApiKey || (await exists(join(codexHome, "auth.json")));
    if (!authenticated) message = loginMessage;
  }
  return {
    installed: true,
    executable: true,
    authenticated,
    version: match[1]!,
    models,
    ...(message !== undefined ? { message } : {}),
  };
}
