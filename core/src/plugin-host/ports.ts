import type { CommandGroup, PluginRoutes, ProcessHelpers, ProviderDriver } from "../spec/index.js";
import { token } from "../util/di-token.js";

// What the provider registry and the host need of the plugin host, as interfaces: the
// `PluginHost` token resolves to {@link PluginCatalog}.

/** Where a plugin came from. Built-in plugins load through exactly the same path as the rest. */
export type PluginSource = "config" | "managed" | "builtin";

/** Why a plugin was refused. */
export type PluginRefusalCode =
  | "not_found"
  | "manifest_invalid"
  | "spec_incompatible"
  | "import_failed"
  | "definition_invalid"
  | "driver_conflict"
  | "command_conflict";

/** What the host knows about one plugin, loaded or not. */
export interface PluginRecord {
  /** The package name (or the config entry, when the folder could not be read). */
  readonly name: string;
  readonly version: string | null;
  readonly dir: string | null;
  readonly source: PluginSource;
  readonly status: "loaded" | "refused";
  /** Driver kinds the manifest declares. */
  readonly drivers: readonly string[];
  /** Command groups the manifest declares (`registry` → `switchyard registry …`). */
  readonly commands: readonly string[];
  /** The spec range the manifest asks for. */
  readonly wantedRange: string | null;
  /** Why it was refused, in a message naming the plugin, the problem, the range and the host spec. */
  readonly refusal: { readonly code: PluginRefusalCode; readonly message: string } | null;
  /** Set when it loaded through a spec-version adapter: the one warning about it. */
  readonly warning: string | null;
}

/** What is known of a plugin from its package.json alone, before its code is imported. */
export type PluginDescription = Omit<PluginRecord, "status" | "refusal" | "warning">;

/** A command group a manifest declares, known without running any plugin code. */
export interface CommandContribution {
  /** The group's name (`registry`). */
  readonly name: string;
  /** The manifest's line for help, when it gives one. */
  readonly description: string | null;
  /** The plugin that declares it, as its manifest describes it (not loaded). */
  readonly plugin: PluginDescription;
}

/** A command group ready to run, with the plugin that provided it. */
export interface LoadedCommandGroup {
  readonly group: CommandGroup;
  readonly plugin: PluginRecord;
}

/** A driver the host can use, with the plugin that provided it. */
export interface LoadedDriver {
  readonly driver: ProviderDriver<unknown>;
  readonly plugin: PluginRecord;
}

/** HTTP API routes a loaded plugin contributes, with the plugin that provided them. */
export interface LoadedRoutes {
  readonly routes: PluginRoutes;
  readonly plugin: PluginRecord;
}

/** The plugins this host found (`PluginHost`): loaded once, then listed and asked for drivers. */
export interface PluginCatalog {
  /** Loads every plugin once. Never throws for a plugin's fault. */
  load(): Promise<void>;
  /** Every plugin seen, loaded and refused, in discovery order. */
  list(): readonly PluginRecord[];
  /** The driver for a kind, if a loaded plugin provides it. */
  driver(kind: string): LoadedDriver | null;
  /** Every loaded driver kind. */
  driverKinds(): string[];
  /** The HTTP API routes loaded plugins contribute, in load order. */
  routeContributions(): readonly LoadedRoutes[];
}

/**
 * What the engine may do to the harness processes of a thread (`HarnessProcessTrees`): a stop
 * freezes the processes its harnesses started before the stop commits, and ends them once it
 * has (or lets them go on when it did not commit); shutdown and boot end what is left.
 */
export interface HarnessProcessControl {
  /** Freezes (SIGSTOP) the thread's harness trees outside the harnesses' own process groups; how many. */
  freezeDetached(owner: string): number;
  /** Ends (SIGKILL) those processes; how many. */
  endDetached(owner: string): number;
  /** Lets frozen processes go on. */
  thawDetached(owner: string): void;
  /** Ends every process tree this host started; how many processes were still running. */
  endAll(): number;
  /**
   * Ends the trees dead hosts of this home left behind; how many processes. `killedGroups`: the
   * process groups already sent SIGKILL (a process of theirs may still be dying: not counted twice).
   */
  reapLeftovers(killedGroups?: readonly number[]): number;
}

/** DI token: `ProcessRunner`. */
export const ProcessRunnerToken = token<ProcessHelpers>("ProcessRunner");

/** DI token: `HarnessProcessTrees`: every harness's processes, detached ones included. */
export const HarnessProcessTreesToken = token<HarnessProcessControl>("HarnessProcessTrees");

/** DI token: `PluginHost`. */
export const PluginHostToken = token<PluginCatalog>("PluginHost");
