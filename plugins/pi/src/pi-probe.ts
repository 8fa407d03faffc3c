import { readFile, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { piModelEfforts } from "./pi-efforts.js";
import type { ModelDescriptor, PluginContext, ProbeOptions, ProviderInstanceDescriptor, ProviderStatus } from "@switchyard/sdk";
import { piAgentDir, piEnvironment, resolvePiBinary } from "./pi-launch.js";
import type { PiOptions } from "./pi-options.js";

const PROBE_TIMEOUT_MS = 30_000;

/** One configured Pi instance: what probing and sessions need. */
export interface PiInstance {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: PiOptions;
  readonly context: PluginContext;
}

/** Parses `pi --list-models` (a table on stderr: `provider  model  context …`). */
export function parseModelTable(text: string): { provider: string; id: string; reasoning: boolean }[] {
  const models: { provider: string; id: string; reasoning: boolean }[] = [];
  let thinkingColumn = -1;
  let header = true;
  for (const line of text.split("\n")) {
    const columns = line.trim().split(/\s+/);
    if (columns.length < 2 || columns[0] === "") continue;
    if (header) {
      header = !(columns[0] === "provider" && columns[1] === "model");
      if (!header) thinkingColumn = columns.indexOf("thinking");
      continue;
    }
    models.push({ provider: columns[0]!, id: columns[1]!, reasoning: thinkingColumn >= 0 && columns[thinkingColumn] === "yes" });
  }
  return models;
}

/** The models Pi's models.json defines (`provider/id`), read without starting Pi. */
async function configuredModels(instance: ProviderInstanceDescriptor): Promise<{ id: string; reasoning: boolean; xhigh: boolean }[]> {
  try {
    const parsed = JSON.parse(await readFile(path.join(piAgentDir(piEnvironment(instance, {})), "models.json"), "utf8")) as {
      providers?: Record<string, { models?: { id?: unknown; reasoning?: unknown; thinkingLevelMap?: Record<string, unknown> }[] } | undefined>;
    };
    return Object.entries(parsed.providers ?? {}).flatMap(([provider, entry]) =>
      (entry?.models ?? []).flatMap((model) =>
        typeof model.id === "string" ? [{ id: `${provider}/${model.id}`, reasoning: model.reasoning === true, xhigh: model.thinkingLevelMap?.["xhigh"] != null }] : [],
      ),
    );
  } catch {
    return [];
  }
}

/** The configured default model (`defaultProvider/defaultModel` in Pi's settings.json). */
async function defaultModel(instance: ProviderInstanceDescriptor): Promise<string | null> {
  try {
    const settings = JSON.parse(await readFile(path.join(piAgentDir(piEnvironment(instance, {})), "settings.json"), "utf8")) as {
      defaultProvider?: unknown;
      defaultModel?: unknown;
    };
    return typeof settings.defaultProvider === "string" && typeof settings.defaultModel === "string"
      ? `${settings.defaultProvider}/${settings.defaultModel}`
      : null;
  } catch {
    return null;
  }
}

/**
 * `inspect`: finds Pi, checks the instance's home is a folder when it exists, reads the
 * version (from the installed package, else `pi --version`) and the models models.json
 * defines; it does not run `pi --list-models`, which writes into Pi's agent directory.
 * `full`: runs `pi --version` and `pi --list-models` (no session, no model call). Pi lists
 * custom models.json providers and the built-in providers it has credentials for, so an empty
 * list means it cannot run a turn.
 */
export async function probePi({ instance, options, context }: PiInstance, probeOptions: ProbeOptions = {}): Promise<ProviderStatus> {
  const custom = (models: ModelDescriptor[]): ModelDescriptor[] => [
    ...models,
    ...instance.customModels.filter((id) => !models.some((model) => model.id === id)).map((id) => ({ id })),
  ];
  const binary = await resolvePiBinary(options, context, piEnvironment(instance, {}));
  if (binary === null) {
    return {
      installed: false,
      executable: false,
      authenticated: false,
      models: custom([]),
      message: `Pi was not found${options.piPath ? ` at "${options.piPath}"` : ""}. Install @mariozechner/pi-coding-agent (npm i -g @mariozechner/pi-coding-agent), or set the instance's piPath option.`,
    };
  }
  // A missing agent directory is fine (Pi creates it); one that is a file is not.
  if (instance.homePath !== null) {
    const home = await stat(instance.homePath).catch(() => null);
    if (home !== null && !home.isDirectory()) {
      return {
        installed: true,
        executable: false,
        authenticated: false,
        models: custom([]),
        message: `The instance's homePath "${instance.homePath}" (PI_CODING_AGENT_DIR) is not a folder. Point homePath at Pi's agent directory.`,
      };
    }
  }
  const env = piEnvironment(instance, {});
  const run = (flag: string) =>
    context.process.run(binary.command, [...binary.args, ...(options.offline ? ["--offline"] : []), flag], {
      cwd: os.tmpdir(),
      env,
      extendEnv: false,
      label: `pi ${flag}`,
      timeoutMs: PROBE_TIMEOUT_MS,
    });
  const full = (probeOptions.depth ?? "full") === "full";
  // `--version` writes nothing; the bundled package's version is known without starting Node.
  const readVersion = !full && binary.source === "package" && binary.version !== undefined ? null : run("--version");
  const [version, list, defaultId] = await Promise.all([readVersion, full ? run("--list-models") : null, defaultModel(instance)]);
  if (version !== null && (version.failed || version.exitCode !== 0)) {
    return {
      installed: true,
      executable: false,
      authenticated: false,
      models: custom([]),
      message: `pi --version failed: ${(version.stderr || version.stdout).trim().slice(-400) || `exit code ${version.exitCode ?? "none"}`}`,
    };
  }
  const versionText = version === null ? binary.version : (/\d+\.\d+\.\d+\S*/.exec(`${version.stdout}\n${version.stderr}`)?.[0] ?? binary.version);
  const describe = (id: string, thinking: { reasoning: boolean; xhigh?: boolean }): ModelDescriptor => ({ id, ...(id === defaultId ? { isDefault: true } : {}), ...piModelEfforts(thinking) });
  if (list === null) {
    // Without --list-models only models.json is known; built-in providers show up in `full`.
    const configured = await configuredModels(instance);
    return {
      installed: true,
      executable: true,
      authenticated: configured.length > 0 ? true : "unknown",
      ...(versionText !== undefined ? { version: versionText } : {}),
      models: custom(configured.map((model) => describe(model.id, model))),
    };
  }
  const listed = list.exitCode === 0 ? parseModelTable(`${list.stdout}\n${list.stderr}`) : [];
  const models = custom(listed.map(({ provider, id, reasoning }) => describe(`${provider}/${id}`, { reasoning })));
  return {
    installed: true,
    executable: true,
    authenticated: listed.length > 0,
    ...(versionText !== undefined ? { version: versionText } : {}),
    models,
    ...(listed.length === 0
      ? {
          message:
            "Pi lists no usable model: set a provider API key in the instance environment (ANTHROPIC_API_KEY, OPENAI_API_KEY…) or define a provider in models.json under Pi's agent directory.",
        }
      : {}),
  };
}
