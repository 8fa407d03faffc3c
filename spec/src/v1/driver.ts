import type { Readable, Writable } from "node:stream";
import type { OrchestrationAdapterV1 } from "./adapter.js";
import type { CapabilityDeclarationV1 } from "./capabilities.js";
import type { CommandGroupV1 } from "./commands.js";
import type { PluginLoggerV1, PluginPathsV1 } from "./plugin-services.js";
import type { PluginRoutesV1 } from "./routes.js";
import type { OptionsSchemaV1 } from "./schema.js";

export type { PluginLoggerV1, PluginPathsV1 } from "./plugin-services.js";
export type { OptionsSchemaV1, OptionsValidationResultV1 } from "./schema.js";

/** A configured provider instance, as the host hands it to a driver. @public */
export interface ProviderInstanceDescriptorV1 {
  /** The instance id from the config (`codex-main`). */
  readonly id: string;
  /** The driver kind (`codex`). */
  readonly driver: string;
  /** Name for people. */
  readonly displayName: string;
  /**
   * The harness's own home (CODEX_HOME, PI_CODING_AGENT_DIR, CLAUDE_CONFIG_DIR…), or null for
   * the harness default.
   */
  readonly homePath: string | null;
  /** Extra environment variables for the harness. */
  readonly environment: Readonly<Record<string, string>>;
  /** Model ids to advertise besides the provider's own list (for example a local model). */
  readonly customModels: readonly string[];
}

/** How to start a harness process. @public */
export interface SpawnOptionsV1 {
  /** Working directory. */
  readonly cwd: string;
  /** Environment. Merged over the host's own unless `extendEnv` is false. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Inherit the host's environment under `env` (default true). */
  readonly extendEnv?: boolean;
  /** Whether the child gets a stdin pipe (default `pipe`). */
  readonly stdin?: "pipe" | "ignore";
  /** A short label for logs (`codex app-server`). */
  readonly label: string;
}

/** A harness process in its own process group, and the tree of processes it starts. @public */
export interface ManagedProcessV1 {
  /** Its pid. */
  readonly pid: number;
  /** Its stdin, when piped. */
  readonly stdin: Writable | null;
  /** Its stdout. */
  readonly stdout: Readable;
  /** Its stderr. */
  readonly stderr: Readable;
  /**
   * Settles when it has exited and what it left running is gone: processes of its tree still
   * alive then get SIGTERM, then SIGKILL, first.
   */
  readonly exited: Promise<{ readonly exitCode: number | null; readonly signal: string | null }>;
  /**
   * The last lines it wrote on stderr (at most {@link STDERR_TAIL_LINES} lines and
   * {@link STDERR_TAIL_BYTES} characters), with secrets scrubbed: what a provider error should
   * carry when the harness failed ("CODEX_HOME points to … but that path does not exist").
   * Empty when it wrote nothing. The stream stays readable by the plugin as well.
   */
  stderrTail(): string;
  /**
   * Stops the whole process tree: the signal (default SIGTERM), then SIGKILL after `graceMs`
   * (default 3000), to the process group and (on Linux) to every process the harness started
   * that left the group (setsid, a double fork, nohup), found by the process-tree mark the host
   * put in the harness's environment. Resolves when the leader has exited and nothing of its
   * tree is left.
   */
  kill(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/** Process helpers the host lends plugins, so every harness is started and stopped the same way. @public */
export interface ProcessHelpersV1 {
  /**
   * Starts a process in its own group, with a process-tree mark in its environment that every
   * process it starts inherits; killing it (or its exit) ends all of them, detached ones too.
   */
  spawn(command: string, args: readonly string[], options: SpawnOptionsV1): ManagedProcessV1;
  /** Runs a command to completion (for version probes); never throws on a non-zero exit. */
  run(
    command: string,
    args: readonly string[],
    options: SpawnOptionsV1 & { readonly timeoutMs?: number },
  ): Promise<{
    readonly exitCode: number | null;
    readonly stdout: string;
    readonly stderr: string;
    readonly failed: boolean;
  }>;
  /** Finds an executable on PATH (or returns an absolute path that is executable), else null. */
  which(command: string, env?: Readonly<Record<string, string | undefined>>): Promise<string | null>;
}

/**
 * Everything a plugin gets from the host. Plugins never reach into the host's container or
 * modules; this object is the whole boundary.
 * @public
 */
export interface PluginContextV1 {
  /** The host's spec semver (`1.0.0`). */
  readonly specVersion: string;
  /** The Switchyard version. */
  readonly hostVersion: string;
  /** Logger bound to the plugin and instance. */
  readonly logger: PluginLoggerV1;
  /** Directories. */
  readonly paths: PluginPathsV1;
  /** Process helpers. */
  readonly process: ProcessHelpersV1;
}

/** What `create` gets. @public */
export interface CreateInstanceInputV1<TOptions> {
  /** The configured instance. */
  readonly instance: ProviderInstanceDescriptorV1;
  /** Driver options, already validated by `optionsSchema`. */
  readonly options: TOptions;
  /** Host services. */
  readonly context: PluginContextV1;
}

/**
 * A driver: one kind of provider (`codex`, `pi`, `acp-registry`). Configured instances of it
 * become {@link OrchestrationAdapterV1}s through `create`.
 * @public
 */
export interface ProviderDriverV1<TOptions = unknown> {
  /** Always `"v1"`. */
  readonly specificationVersion: "v1";
  /** The driver kind, as config files name it. Lowercase, `[a-z0-9-]`. */
  readonly driverKind: string;
  /** Name for people. */
  readonly displayName: string;
  /** Validates `options` from the config before `create` runs. Omit when there are none. */
  readonly optionsSchema?: OptionsSchemaV1<TOptions>;
  /** What instances of this driver can do before any negotiation. */
  readonly capabilities: CapabilityDeclarationV1;
  /** Creates the adapter for one configured instance. Should not start processes yet. */
  create(input: CreateInstanceInputV1<TOptions>): OrchestrationAdapterV1 | Promise<OrchestrationAdapterV1>;
}

/** What a plugin's entry module exports as `default`. @public */
export interface PluginDefinitionV1 {
  /** Always `"v1"`. */
  readonly specificationVersion: "v1";
  /** The drivers this plugin provides; each kind must be listed in its manifest. */
  readonly drivers: readonly ProviderDriverV1<any>[];
  /** Command groups it adds to `switchyard`; each name must be listed in its manifest. */
  readonly commands?: readonly CommandGroupV1[];
  /** HTTP API operations it adds under `/api/v1/plugins/<plugin>/` (routes.ts). @experimental */
  readonly routes?: PluginRoutesV1;
}

/**
 * The `switchyard` field of a plugin's package.json. Read and checked before any plugin code
 * is imported.
 * @public
 */
export interface PluginManifestV1 {
  /**
   * Semver range of spec versions the plugin supports, inside one major (`^1.0.0`, `~1.2`,
   * `>=1.1 <2`). A range spanning majors (`*`, `>=1`, `^1 || ^2`) is refused: a new major
   * changes the interfaces, so a plugin cannot claim one it was not written for.
   */
  readonly specVersion: string;
  /** The driver kinds the plugin provides (may be empty for a plugin that only adds commands or routes). */
  readonly drivers: readonly string[];
  /**
   * The command groups it adds to `switchyard` (`["registry"]`, or `{ name, description }` to
   * give `switchyard --help` a line), listed here so the CLI shows them without running
   * plugin code.
   */
  readonly commands?: readonly (string | { readonly name: string; readonly description: string })[];
  /**
   * True when the plugin adds HTTP API routes (its definition's `routes`), so what a plugin
   * contributes is known without running its code.
   * @experimental
   */
  readonly routes?: boolean;
  /** The entry module, relative to the package root (`./dist/index.js`). */
  readonly entry: string;
  /**
   * The packages whose npm install scripts (`preinstall`, `install`, `postinstall`)
   * `switchyard plugin install` runs, after this manifest passed: the plugin's own name and/or
   * dependencies it declares (a native module that builds on install). Omitted: none run. The
   * host installs with scripts off, so nothing else a package or its dependencies declare runs.
   * @experimental
   */
  readonly installScripts?: readonly string[];
}
