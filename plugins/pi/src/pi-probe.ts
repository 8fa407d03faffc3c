import { readFile, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  harnessNotFoundStatus,
  withHarnessVerdict,
  type ModelDescriptor,
  type PluginContext,
  type ProbeOptions,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "@switchyard/sdk";
import { piModelEfforts } from "./pi-efforts.js";
import { findPi, piAgentDir, piEnvironment, type PiBinary } from "./pi-launch.js";
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
    models.push({
      provider: columns[0]!,
      id: columns[1]!,
      reasoning: thinkingColumn >= 0 && columns[thinkingColumn] === "yes",
    });
  }
  return models;
}

/** What Pi's models.json configures: the providers it defines or overrides, and their models (`provider/id`). */
interface PiModelsJson {
  readonly providers: ReadonlySet<string>;
  readonly models: { id: string; reasoning: boolean; xhigh: boolean }[];
}

/** Reads Pi's models.json without starting Pi (nothing configured when it is missing or unreadable). */
async function configuredModels(instance: ProviderInstanceDescriptor): Promise<PiModelsJson> {
  try {
    const parsed = JSON.parse(
      await readFile(path.join(piAgentDir(piEnvironment(instance, {})), "models.json"), "utf8"),
    ) as {
      providers?: Record<
        string,
        { models?: { id?: unknown; reasoning?: unknown; thinkingLevelMap?: Record<string, unknown> }[] } | undefined
      >;
    };
    const entries = Object.entries(parsed.providers ?? {});
    return {
      providers: new Set(entries.map(([provider]) => provider)),
      models: entries.flatMap(([provider, entry]) =>
        (entry?.models ?? []).flatMap((model) =>
          typeof model.id === "string"
            ? [
                {
                  id: `${provider}/${model.id}`,
                  reasoning: model.reasoning === true,
                  xhigh: model.thinkingLevelMap?.["xhigh"] != null,
                },
              ]
            : [],
        ),
      ),
    };
  } catch {
    return { providers: new Set(), models: [] };
  }
}

/** The configured default model (`defaultProvider/defaultModel` in Pi's settings.json). */
async function defaultModel(instance: ProviderInstanceDescriptor): Promise<string | null> {
  try {
    const settings = JSON.parse(
      await readFile(path.join(piAgentDir(piEnvironment(instance, {})), "settings.json"), "utf8"),
    ) as {
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
export async function probePi(
  { instance, options, context }: PiInstance,
  probeOptions: ProbeOptions = {},
): Promise<ProviderStatus> {
  const custom = (models: ModelDescriptor[]): ModelDescriptor[] => [
    ...models,
    ...instance.customModels.filter((id) => !models.some((model) => model.id === id)).map((id) => ({ id })),
  ];
  const { search, binary } = await findPi(options, context, piEnvironment(instance, {}));
  if (binary === null) return harnessNotFoundStatus(search, custom([]));
  // Where Pi was found and whether its version is one this plugin was tested with.
  return withHarnessVerdict(search, await probeFound({ instance, options, context }, binary, probeOptions, custom));
}

/** {@link probePi} once Pi is found. */
async function probeFound(
  { instance, options, context }: PiInstance,
  binary: PiBinary,
  probeOptions: ProbeOptions,
  custom: (models: ModelDescriptor[]) => ModelDescriptor[],
): Promise<ProviderStatus> {
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
  const readVersion = !full && binary.version !== undefined ? null : run("--version");
  const [version, list, defaultId] = await Promise.all([
    readVersion,
    full ? run("--list-models") : null,
    defaultModel(instance),
  ]);
  if (version !== null && (version.failed || version.exitCode !== 0)) {
    return {
      installed: true,
      executable: false,
      authenticated: false,
      models: custom([]),
      message: `pi --version failed: ${(version.stderr || version.stdout).trim().slice(-400) || `exit code ${version.exitCode ?? "none"}`}`,
    };
  }
  const versionText =
    version === null
      ? binary.version
      : (/\d+\.\d+\.\d+\S*/.exec(`${version.stdout}\n${version.stderr}`)?.[0] ?? binary.version);
  const configured = await configuredModels(instance);
  // A model of a provider models.json defines or overrides (its base URL, its key) is served by the
  // configured endpoint; the rest are Pi's built-in catalog, whatever endpoint they would reach.
  const sourceOf = (provider: string): ModelDescriptor["source"] =>
    configured.providers.has(provider) ? "harness_config" : "harness_catalog";
  const describe = (
    provider: string,
    id: string,
    thinking: { reasoning: boolean; xhigh?: boolean },
  ): ModelDescriptor => ({
    id,
    ...(id === defaultId ? { isDefault: true } : {}),
    ...piModelEfforts(thinking),
    source: sourceOf(provider),
  });
  if (list === null) {
    // Without --list-models only models.json is known; built-in providers show up in `full`.
    return {
      installed: true,
      executable: true,
      authenticated: configured.models.length > 0 ? true : "unknown",
      ...(versionText !== undefined ? { version: versionText } : {}),
      models: custom(
        configured.models.map((model) => describe(model.id.slice(0, model.id.indexOf("/")), model.id, model)),
      ),
    };
  }
  const listed = list.exitCode === 0 ? parseModelTable(`${list.stdout}\n${list.stderr}`) : [];
  const models = custom(
    listed.map(({ provider, id, reasoning }) => describe(provider, `${provider}/${id}`, { reasoning })),
  );
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
