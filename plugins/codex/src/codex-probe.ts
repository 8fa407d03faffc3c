import { readFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import type { ModelDescriptor, PluginContext, ProviderInstanceDescriptor, ProviderStatus } from "@switchyard/sdk";
import { AppServerConnection } from "./app-server-connection.js";
import { resolveCodexBinary, type CodexBinary } from "./codex-binary.js";
import { codexEnvironment } from "./codex-environment.js";
import type { v2 } from "./codex-wire.js";

/** What `config.toml` says about the model and its provider. */
interface ConfiguredModel {
  readonly model: string | null;
  readonly provider: string | null;
  /** The env var a custom provider reads its key from, when it has one. */
  readonly envKey: string | null;
}

async function readConfiguredModel(env: Readonly<Record<string, string>>): Promise<ConfiguredModel> {
  const codexHome = env.CODEX_HOME ?? join(env.HOME ?? homedir(), ".codex");
  try {
    const config = parseToml(await readFile(join(codexHome, "config.toml"), "utf8")) as Record<string, unknown>;
    const model = typeof config.model === "string" ? config.model : null;
    const provider = typeof config.model_provider === "string" ? config.model_provider : null;
    const providers = (config.model_providers ?? {}) as Record<string, { env_key?: unknown } | undefined>;
    const envKey = provider !== null && typeof providers[provider]?.env_key === "string" ? (providers[provider]!.env_key as string) : null;
    return { model, provider, envKey };
  } catch {
    return { model: null, provider: null, envKey: null };
  }
}

/** Asks a short-lived app-server for its model catalog and account (no thread, no model call). */
async function askAppServer(
  binary: CodexBinary,
  env: Record<string, string>,
  context: PluginContext,
): Promise<{ models: v2.Model[]; account: v2.GetAccountResponse | null }> {
  const child = context.process.spawn(binary.command, ["app-server"], { cwd: tmpdir(), env, extendEnv: false, stdin: "pipe", label: "codex app-server probe" });
  const connection = new AppServerConnection(child, context.logger, () => undefined, async () => {
    throw new Error("The probe answers no requests.");
  });
  try {
    await connection.request("initialize", { clientInfo: { name: "switchyard", title: "Switchyard", version: context.hostVersion }, capabilities: null }, 10_000);
    connection.notify("initialized");
    const [models, account] = await Promise.all([
      connection.request("model/list", {}, 10_000).catch(() => null),
      connection.request("account/read", {}, 10_000).catch(() => null),
    ]);
    return { models: models?.data ?? [], account };
  } finally {
    connection.close();
    child.stdin?.end();
    await child.kill("SIGTERM", 1_000).catch(() => undefined);
  }
}

/**
 * The status of a Codex instance: installed and executable (`codex --version`), models (the
 * configured model first, then app-server's `model/list` catalog, then custom models) and
 * whether it has credentials. Never starts a thread or a model turn.
 */
export async function probeCodex(input: {
  readonly codexPath: string | undefined;
  readonly instance: ProviderInstanceDescriptor;
  readonly context: PluginContext;
  /** Ask app-server for `model/list` and `account/read` (the exec driver uses it too). */
  readonly askAppServer: boolean;
}): Promise<ProviderStatus> {
  const { instance, context } = input;
  const baseEnv = codexEnvironment({ instance, binary: null, grant: null });
  const custom = instance.customModels.map((id) => ({ id }));
  const binary = await resolveCodexBinary(input.codexPath, context, baseEnv);
  if (binary === null) {
    return {
      installed: false,
      executable: false,
      authenticated: false,
      models: custom,
      message: input.codexPath !== undefined ? `"${input.codexPath}" was not found or is not executable.` : "Codex was not found: install @openai/codex, or set codexPath.",
    };
  }
  const env = codexEnvironment({ instance, binary, grant: null });
  const version = await context.process.run(binary.command, ["--version"], { cwd: tmpdir(), env, extendEnv: false, timeoutMs: 15_000, label: "codex --version" });
  const match = /codex(?:-cli)?\s+(\S+)/.exec(version.stdout);
  if (version.failed || match === null) {
    return {
      installed: true,
      executable: false,
      authenticated: false,
      models: custom,
      message: `"${binary.command} --version" failed: ${(version.stderr || version.stdout).trim().slice(0, 300) || `exit code ${version.exitCode}`}`,
    };
  }
  const configured = await readConfiguredModel(env);
  const fromServer = input.askAppServer ? await askAppServer(binary, env, context).catch(() => ({ models: [], account: null })) : { models: [], account: null };

  const models: ModelDescriptor[] = [];
  const seen = new Set<string>();
  const add = (model: ModelDescriptor) => {
    if (seen.has(model.id)) return;
    seen.add(model.id);
    models.push(model);
  };
  if (configured.model !== null) add({ id: configured.model, isDefault: true });
  for (const model of fromServer.models) {
    if (model.hidden) continue;
    add({ id: model.id, displayName: model.displayName, ...(configured.model === null && model.isDefault ? { isDefault: true } : {}) });
  }
  for (const model of custom) add(model);

  let authenticated: ProviderStatus["authenticated"] = "unknown";
  let message: string | undefined;
  if (configured.envKey !== null) {
    authenticated = env[configured.envKey] !== undefined && env[configured.envKey] !== "";
    if (!authenticated) message = `Model provider "${configured.provider}" reads its key from ${configured.envKey}, which is not set for this instance.`;
  } else if (fromServer.account?.account) {
    authenticated = true;
  } else if (fromServer.account?.requiresOpenaiAuth && env.OPENAI_API_KEY === undefined && env.CODEX_API_KEY === undefined) {
    authenticated = false;
    message = "Codex is not logged in: run `codex login` with this instance's CODEX_HOME, or set CODEX_API_KEY.";
  }
  return { installed: true, executable: true, authenticated, version: match[1]!, models, ...(message !== undefined ? { message } : {}) };
}
