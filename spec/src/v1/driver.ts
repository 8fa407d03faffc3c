import type { Readable, Writable } from "node:stream";
import type { OrchestrationAdapter } from "./adapter.js";
import type { CapabilityDeclaration } from "./capabilities.js";
import type { SpecificationVersion } from "./version.js";

/**
 * A validator in the Standard Schema v1 shape (zod 4, valibot and arktype schemas are one), so
 * the spec stays dependency-free while plugins use the validator they like.
 */
export interface OptionsSchema<T> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => OptionsValidationResult<T> | Promise<OptionsValidationResult<T>>;
  };
}

/** What an {@link OptionsSchema} returns. */
export type OptionsValidationResult<T> =
  | { readonly value: T; readonly issues?: undefined }
  | {
      readonly issues: readonly {
        readonly message: string;
        readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[];
      }[];
    };

/** A configured provider instance, as the host hands it to a driver. */
export interface ProviderInstanceDescriptor {
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

/** Structured logger handed to plugins. Secrets are redacted by the host. */
export interface PluginLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines carry `bindings`. */
  child(bindings: Record<string, unknown>): PluginLogger;
}

/** How to start a harness process. */
export interface SpawnOptions {
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

/** A harness process in its own process group. */
export interface ManagedProcess {
  /** Its pid. */
  readonly pid: number;
  /** Its stdin, when piped. */
  readonly stdin: Writable | null;
  /** Its stdout. */
  readonly stdout: Readable;
  /** Its stderr. */
  readonly stderr: Readable;
  /** Settles when it has exited. */
  readonly exited: Promise<{ readonly exitCode: number | null; readonly signal: string | null }>;
  /**
   * The last lines it wrote on stderr (at most {@link STDERR_TAIL_LINES} lines and
   * {@link STDERR_TAIL_BYTES} characters), with secrets scrubbed: what a provider error should
   * carry when the harness failed ("CODEX_HOME points to … but that path does not exist").
   * Empty when it wrote nothing. The stream stays readable by the plugin as well.
   */
  stderrTail(): string;
  /**
   * Stops the whole process group: the signal (default SIGTERM), then SIGKILL after
   * `graceMs` (default 3000). Resolves when the group leader has exited.
   */
  kill(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/** Process helpers the host lends plugins, so every harness is started and stopped the same way. */
export interface ProcessHelpers {
  /** Starts a process in its own group; killing it kills its children too. */
  spawn(command: string, args: readonly string[], options: SpawnOptions): ManagedProcess;
  /** Runs a command to completion (for version probes); never throws on a non-zero exit. */
  run(
    command: string,
    args: readonly string[],
    options: SpawnOptions & { readonly timeoutMs?: number },
  ): Promise<{ readonly exitCode: number | null; readonly stdout: string; readonly stderr: string; readonly failed: boolean }>;
  /** Finds an executable on PATH (or returns an absolute path that is executable), else null. */
  which(command: string, env?: Readonly<Record<string, string | undefined>>): Promise<string | null>;
}

/** Directories a plugin may use. */
export interface PluginPaths {
  /** `$SWITCHYARD_HOME`. */
  readonly home: string;
  /** A cache directory owned by this plugin (created on demand). */
  readonly cacheDir: string;
  /** A data directory owned by this plugin (created on demand). */
  readonly dataDir: string;
}

/**
 * Everything a plugin gets from the host. Plugins never reach into the host's container or
 * modules; this object is the whole boundary.
 */
export interface PluginContext {
  /** The host's spec semver (`1.0.0`). */
  readonly specVersion: string;
  /** The Switchyard version. */
  readonly hostVersion: string;
  /** Logger bound to the plugin and instance. */
  readonly logger: PluginLogger;
  /** Directories. */
  readonly paths: PluginPaths;
  /** Process helpers. */
  readonly process: ProcessHelpers;
}

/** What `create` gets. */
export interface CreateInstanceInput<TOptions> {
  /** The configured instance. */
  readonly instance: ProviderInstanceDescriptor;
  /** Driver options, already validated by `optionsSchema`. */
  readonly options: TOptions;
  /** Host services. */
  readonly context: PluginContext;
}

/**
 * A driver: one kind of provider (`codex`, `pi`, `acp-registry`). Configured instances of it
 * become {@link OrchestrationAdapter}s through `create`.
 */
export interface ProviderDriver<TOptions = unknown> {
  /** Always `"v1"`. */
  readonly specificationVersion: SpecificationVersion;
  /** The driver kind, as config files name it. Lowercase, `[a-z0-9-]`. */
  readonly driverKind: string;
  /** Name for people. */
  readonly displayName: string;
  /** Validates `options` from the config before `create` runs. Omit when there are none. */
  readonly optionsSchema?: OptionsSchema<TOptions>;
  /** What instances of this driver can do before any negotiation. */
  readonly capabilities: CapabilityDeclaration;
  /** Creates the adapter for one configured instance. Should not start processes yet. */
  create(input: CreateInstanceInput<TOptions>): OrchestrationAdapter | Promise<OrchestrationAdapter>;
}

/** What a plugin's entry module exports as `default`. */
export interface PluginDefinition {
  /** Always `"v1"`. */
  readonly specificationVersion: SpecificationVersion;
  /** The drivers this plugin provides; each kind must be listed in its manifest. */
  readonly drivers: readonly ProviderDriver<any>[];
}

/**
 * The `switchyard` field of a plugin's package.json. Read and checked before any plugin code
 * is imported.
 */
export interface PluginManifest {
  /** Semver range of spec versions the plugin supports (`^1.0.0`). */
  readonly specVersion: string;
  /** The driver kinds the plugin provides. */
  readonly drivers: readonly string[];
  /** The entry module, relative to the package root (`./dist/index.js`). */
  readonly entry: string;
}
