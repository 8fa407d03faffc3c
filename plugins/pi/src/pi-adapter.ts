import { readFile, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  NO_CAPABILITIES,
  SPECIFICATION_VERSION,
  SwitchyardError,
  defineDriver,
  mergeCapabilities,
  type CreateInstanceInput,
  type ModelDescriptor,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type PluginContext,
  type ProbeOptions,
  type ProviderCapabilities,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type ProviderStatus,
} from "@switchyard/sdk";
import { PI_CAPABILITIES } from "./pi-capabilities.js";
import { writeSwitchyardExtension } from "./pi-extension-writer.js";
import { piAgentDir, piEnvironment, resolvePiBinary, type PiBinary } from "./pi-launch.js";
import { piOptionsSchema, type PiOptions } from "./pi-options.js";
import { PiProviderSession } from "./pi-session.js";

const PROBE_TIMEOUT_MS = 30_000;

/** Parses `pi --list-models` (a table on stderr: `provider  model  context …`). */
export function parseModelTable(text: string): { provider: string; id: string }[] {
  const models: { provider: string; id: string }[] = [];
  let header = true;
  for (const line of text.split("\n")) {
    const columns = line.trim().split(/\s+/);
    if (columns.length < 2 || columns[0] === "") continue;
    if (header) {
      header = !(columns[0] === "provider" && columns[1] === "model");
      continue;
    }
    models.push({ provider: columns[0]!, id: columns[1]! });
  }
  return models;
}

/**
 * The OrchestrationAdapter of one Pi instance: each session runs its own `pi --mode rpc`
 * process with the Switchyard extension.
 */
export class PiOrchestrationAdapter implements OrchestrationAdapter {
  readonly specificationVersion = SPECIFICATION_VERSION;
  readonly instanceId: string;
  readonly driverKind = "pi";
  private readonly record: ProviderCapabilities = mergeCapabilities(NO_CAPABILITIES, PI_CAPABILITIES).capabilities;
  private readonly sessions = new Set<PiProviderSession>();

  constructor(
    private readonly instance: ProviderInstanceDescriptor,
    private readonly options: PiOptions,
    private readonly context: PluginContext,
  ) {
    this.instanceId = instance.id;
  }

  capabilities(): ProviderCapabilities {
    return this.record;
  }

  private async binary(): Promise<PiBinary | null> {
    return resolvePiBinary(this.options, this.context, piEnvironment(this.instance, {}));
  }

  /** The models Pi's models.json defines (`provider/id`), read without starting Pi. */
  private async configuredModels(): Promise<string[]> {
    try {
      const parsed = JSON.parse(await readFile(path.join(piAgentDir(piEnvironment(this.instance, {})), "models.json"), "utf8")) as {
        providers?: Record<string, { models?: { id?: unknown }[] } | undefined>;
      };
      return Object.entries(parsed.providers ?? {}).flatMap(([provider, entry]) =>
        (entry?.models ?? []).flatMap((model) => (typeof model.id === "string" ? [`${provider}/${model.id}`] : [])),
      );
    } catch {
      return [];
    }
  }

  /** The configured default model (`defaultProvider/defaultModel` in Pi's settings.json). */
  private async defaultModel(): Promise<string | null> {
    try {
      const settings = JSON.parse(await readFile(path.join(piAgentDir(piEnvironment(this.instance, {})), "settings.json"), "utf8")) as {
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
  async probe(options: ProbeOptions = {}): Promise<ProviderStatus> {
    const custom = (models: ModelDescriptor[]): ModelDescriptor[] => [
      ...models,
      ...this.instance.customModels.filter((id) => !models.some((model) => model.id === id)).map((id) => ({ id })),
    ];
    const binary = await this.binary();
    if (binary === null) {
      return {
        installed: false,
        executable: false,
        authenticated: false,
        models: custom([]),
        message: `Pi was not found${this.options.piPath ? ` at "${this.options.piPath}"` : ""}. Install @mariozechner/pi-coding-agent (npm i -g @mariozechner/pi-coding-agent), or set the instance's piPath option.`,
      };
    }
    // A missing agent directory is fine (Pi creates it); one that is a file is not.
    if (this.instance.homePath !== null) {
      const home = await stat(this.instance.homePath).catch(() => null);
      if (home !== null && !home.isDirectory()) {
        return {
          installed: true,
          executable: false,
          authenticated: false,
          models: custom([]),
          message: `The instance's homePath "${this.instance.homePath}" (PI_CODING_AGENT_DIR) is not a folder. Point homePath at Pi's agent directory.`,
        };
      }
    }
    const env = piEnvironment(this.instance, {});
    const run = (flag: string) =>
      this.context.process.run(binary.command, [...binary.args, ...(this.options.offline ? ["--offline"] : []), flag], {
        cwd: os.tmpdir(),
        env,
        extendEnv: false,
        label: `pi ${flag}`,
        timeoutMs: PROBE_TIMEOUT_MS,
      });
    const full = (options.depth ?? "full") === "full";
    // `--version` writes nothing; the bundled package's version is known without starting Node.
    const readVersion = !full && binary.source === "package" && binary.version !== undefined ? null : run("--version");
    const [version, list, defaultModel] = await Promise.all([readVersion, full ? run("--list-models") : null, this.defaultModel()]);
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
    const describe = (id: string): ModelDescriptor => ({ id, ...(id === defaultModel ? { isDefault: true } : {}) });
    if (list === null) {
      // Without --list-models only models.json is known; built-in providers show up in `full`.
      const configured = await this.configuredModels();
      return {
        installed: true,
        executable: true,
        authenticated: configured.length > 0 ? true : "unknown",
        ...(versionText !== undefined ? { version: versionText } : {}),
        models: custom(configured.map(describe)),
      };
    }
    const listed = list.exitCode === 0 ? parseModelTable(`${list.stdout}\n${list.stderr}`) : [];
    const models = custom(listed.map(({ provider, id }) => describe(`${provider}/${id}`)));
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

  async openSession(input: OpenSessionInput): Promise<ProviderSession> {
    const binary = await this.binary();
    if (binary === null) {
      throw new SwitchyardError("provider_unavailable", "Pi was not found. Install @mariozechner/pi-coding-agent, or set the instance's piPath option.", {
        piPath: this.options.piPath ?? null,
      });
    }
    const extensionPath = await writeSwitchyardExtension(this.context.paths.cacheDir);
    const session: PiProviderSession = new PiProviderSession(
      {
        instance: this.instance,
        options: this.options,
        context: this.context,
        binary,
        extensionPath,
        onClosed: () => {
          this.sessions.delete(session);
        },
      },
      input,
    );
    this.sessions.add(session);
    try {
      await session.start();
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.sessions].map((session) => session.close()));
  }
}

/** The `pi` driver. */
export function createPiDriver(): ProviderDriver<PiOptions> {
  return defineDriver<PiOptions>({
    driverKind: "pi",
    displayName: "Pi",
    optionsSchema: piOptionsSchema,
    capabilities: PI_CAPABILITIES,
    create: ({ instance, options, context }: CreateInstanceInput<PiOptions>) => new PiOrchestrationAdapter(instance, options, context),
  });
}
