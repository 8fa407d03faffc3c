import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join, relative, resolve, isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { SPECIFICATION_VERSION, SPEC_SEMVER, SwitchyardError, type PluginManifest } from "../spec/index.js";
import type { Logger } from "../logging/logger.js";
import { checkManifest, manifestCommands, PluginPackageSchema } from "./manifest.js";
import { checkDefinition, type CheckedDefinition } from "./plugin-definition.js";
import { SpecVersionResolver } from "./spec-version-resolver.js";
import { discoverPluginCandidates, type PluginCandidate, type PluginSearchPaths } from "./plugin-discovery.js";
import type {
  CommandContribution,
  LoadedCommandGroup,
  LoadedDriver,
  LoadedRoutes,
  PluginCatalog,
  PluginDescription,
  PluginRecord,
  PluginRefusalCode,
} from "./ports.js";

export type {
  CommandContribution,
  LoadedCommandGroup,
  LoadedDriver,
  LoadedRoutes,
  PluginDescription,
  PluginRecord,
  PluginRefusalCode,
} from "./ports.js";

function refusalMessage(name: string, dir: string | null, problem: string, wantedRange: string | null): string {
  const where = dir === null ? "" : ` (${dir})`;
  const wanted = wantedRange === null ? "none declared" : wantedRange;
  return `Plugin "${name}"${where} refused: ${problem}. Wanted spec range: ${wanted}; this host implements spec ${SPEC_SEMVER} (${SPECIFICATION_VERSION}).`;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split("\n")[0] ?? error.message;
  return String(error);
}

/** What is known of a plugin before its fate is. */
type RecordBase = PluginDescription;

/** A plugin whose manifest passed, not imported yet. */
interface ScannedPlugin {
  readonly record: RecordBase;
  readonly manifest: PluginManifest;
  readonly entryPath: string;
}

/** One candidate's fate after its manifest was read: refused already, or ready to import. */
type ScanEntry =
  | {
      readonly kind: "refused";
      readonly record: RecordBase;
      readonly code: PluginRefusalCode;
      readonly problem: string;
    }
  | { readonly kind: "scanned"; readonly plugin: ScannedPlugin };

/**
 * Finds, validates and loads plugins. The manifest and spec range are checked before any
 * plugin code is imported; a plugin that fails at any step is refused with a message naming
 * it, and the others load. Built-in plugins take exactly the same path. Reading manifests
 * (`commandContributions`) never imports plugin code.
 */
export class PluginHost implements PluginCatalog {
  private readonly records: PluginRecord[] = [];
  private readonly drivers = new Map<string, LoadedDriver>();
  private readonly commandGroups = new Map<string, LoadedCommandGroup>();
  private readonly routes: LoadedRoutes[] = [];
  private scanned: ScanEntry[] | null = null;
  private loaded = false;

  constructor(
    private readonly paths: PluginSearchPaths,
    private readonly logger: Logger,
    private readonly resolver: SpecVersionResolver = new SpecVersionResolver(),
  ) {}

  /** Loads every plugin once. Never throws for a plugin's fault. */
  async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    for (const entry of this.scan()) {
      if (entry.kind === "refused") {
        this.refuse(entry.record, entry.code, entry.problem);
        continue;
      }
      const imported = await this.importPlugin(entry.plugin);
      if ("problem" in imported) {
        this.refuse(entry.plugin.record, imported.code, imported.problem);
        continue;
      }
      const conflicts = imported.drivers.filter((d) => this.drivers.has(d.driverKind)).map((d) => d.driverKind);
      if (conflicts.length > 0) {
        const owner = this.drivers.get(conflicts[0]!)!.plugin.name;
        this.refuse(
          entry.plugin.record,
          "driver_conflict",
          `driver "${conflicts[0]}" is already provided by plugin "${owner}"`,
        );
        continue;
      }
      const record: PluginRecord = {
        ...entry.plugin.record,
        status: "loaded",
        refusal: null,
        warning: imported.warning,
      };
      this.records.push(record);
      for (const driver of imported.drivers) this.drivers.set(driver.driverKind, { driver, plugin: record });
      for (const group of imported.commands) this.commandGroups.set(group.name, { group, plugin: record });
      if (imported.routes !== null) this.routes.push({ routes: imported.routes, plugin: record });
      if (imported.warning !== null)
        this.logger.warn("plugin loaded through a spec adapter", {
          plugin: record.name,
          adaptedFrom: imported.adaptedFrom,
          reason: imported.warning,
        });
      this.logger.info("plugin loaded", {
        plugin: record.name,
        version: record.version,
        source: record.source,
        drivers: record.drivers,
        commands: record.commands,
      });
    }
  }

  /**
   * The command groups plugins declare in their manifests, in precedence order, without
   * importing any plugin: what `switchyard --help` lists.
   */
  commandContributions(): CommandContribution[] {
    const contributions: CommandContribution[] = [];
    for (const entry of this.scan()) {
      if (entry.kind !== "scanned") continue;
      for (const command of manifestCommands(entry.plugin.manifest))
        contributions.push({ name: command.name, description: command.description, plugin: entry.plugin.record });
    }
    return contributions;
  }

  /**
   * The command group `name`, importing only the plugin that declares it (or taking it from a
   * full `load()`). Throws `not_found` when no plugin declares it and `plugin_invalid`, with the
   * plugin's refusal message, when that plugin cannot be used.
   */
  async loadCommandGroup(name: string): Promise<LoadedCommandGroup> {
    const ready = this.commandGroups.get(name);
    if (ready !== undefined) return ready;
    const entry = this.scan().find(
      (scanned) =>
        scanned.kind === "scanned" &&
        manifestCommands(scanned.plugin.manifest).some((command) => command.name === name),
    );
    if (entry === undefined || entry.kind !== "scanned") {
      throw new SwitchyardError("not_found", `No plugin contributes the command "${name}".`, { command: name });
    }
    const imported = await this.importPlugin(entry.plugin);
    if ("problem" in imported) {
      const message = refusalMessage(
        entry.plugin.record.name,
        entry.plugin.record.dir,
        imported.problem,
        entry.plugin.record.wantedRange,
      );
      throw new SwitchyardError("plugin_invalid", message, {
        plugin: entry.plugin.record.name,
        command: name,
        code: imported.code,
      });
    }
    const record: PluginRecord = { ...entry.plugin.record, status: "loaded", refusal: null, warning: imported.warning };
    const group = imported.commands.find((candidate) => candidate.name === name)!;
    const loaded = { group, plugin: record };
    this.commandGroups.set(name, loaded);
    return loaded;
  }

  /**
   * What a plugin's manifest says, importing nothing: its manifest when it passed (spec range,
   * driver kinds, commands, entry), or the refusal it gets before any of its code could run; null
   * when no candidate has that name. `plugin install` decides with this before running anything.
   */
  manifestOf(name: string):
    | { readonly record: PluginDescription; readonly manifest: PluginManifest }
    | {
        readonly record: PluginDescription;
        readonly refusal: { readonly code: PluginRefusalCode; readonly message: string };
      }
    | null {
    const entry = this.scan().find(
      (candidate) => (candidate.kind === "scanned" ? candidate.plugin.record.name : candidate.record.name) === name,
    );
    if (entry === undefined) return null;
    if (entry.kind === "scanned") return { record: entry.plugin.record, manifest: entry.plugin.manifest };
    return {
      record: entry.record,
      refusal: {
        code: entry.code,
        message: refusalMessage(entry.record.name, entry.record.dir, entry.problem, entry.record.wantedRange),
      },
    };
  }

  /** Reads every candidate's package.json and manifest once, importing nothing. */
  private scan(): ScanEntry[] {
    if (this.scanned !== null) return this.scanned;
    const entries: ScanEntry[] = [];
    const { candidates, unresolved } = discoverPluginCandidates(this.paths);
    for (const { entry, error } of unresolved) {
      entries.push({
        kind: "refused",
        record: {
          name: entry,
          version: null,
          dir: null,
          source: "config",
          drivers: [],
          commands: [],
          wantedRange: null,
        },
        code: "not_found",
        problem: error,
      });
    }
    const seenDirs = new Set<string>();
    const seenNames = new Set<string>();
    const commandOwners = new Map<string, string>();
    for (const candidate of candidates) {
      const real = safeRealpath(candidate.dir);
      if (seenDirs.has(real)) continue;
      seenDirs.add(real);
      const entry = this.scanCandidate(candidate, seenNames);
      if (entry === null) continue;
      if (entry.kind === "scanned") {
        const taken = entry.plugin.record.commands.find((command) => commandOwners.has(command));
        if (taken !== undefined) {
          entries.push({
            kind: "refused",
            record: entry.plugin.record,
            code: "command_conflict",
            problem: `command "${taken}" is already contributed by plugin "${commandOwners.get(taken)}"`,
          });
          continue;
        }
        for (const command of entry.plugin.record.commands) commandOwners.set(command, entry.plugin.record.name);
      }
      entries.push(entry);
    }
    this.scanned = entries;
    return entries;
  }

  /** One candidate's manifest, checked; null when an earlier copy of the same package shadows it. */
  private scanCandidate(candidate: PluginCandidate, seenNames: Set<string>): ScanEntry | null {
    const fallbackName = candidate.requested ?? candidate.dir;
    const base = {
      name: fallbackName,
      version: null as string | null,
      dir: candidate.dir,
      source: candidate.source,
      drivers: [] as string[],
      commands: [] as string[],
      wantedRange: null as string | null,
    };
    const refused = (record: RecordBase, code: PluginRefusalCode, problem: string): ScanEntry => ({
      kind: "refused",
      record,
      code,
      problem,
    });
    const packageFile = join(candidate.dir, "package.json");
    if (!existsSync(packageFile)) return refused(base, "manifest_invalid", "it has no package.json");
    let pkgRaw: unknown;
    try {
      pkgRaw = JSON.parse(readFileSync(packageFile, "utf8"));
    } catch (error) {
      return refused(base, "manifest_invalid", `its package.json is not valid JSON (${describeError(error)})`);
    }
    const pkg = PluginPackageSchema.safeParse(pkgRaw);
    if (!pkg.success)
      return refused(
        base,
        "manifest_invalid",
        `its package.json lacks ${pkg.error.issues.map((i) => i.path.join(".")).join(", ")}`,
      );
    const named = { ...base, name: pkg.data.name, version: pkg.data.version };
    if (seenNames.has(pkg.data.name)) {
      // A user's copy (config or managed) already won over this one; not an error.
      this.logger.debug("plugin shadowed by an earlier copy", { plugin: pkg.data.name, dir: candidate.dir });
      return null;
    }
    seenNames.add(pkg.data.name);
    if (pkg.data.switchyard === undefined)
      return refused(named, "manifest_invalid", 'its package.json has no "switchyard" manifest field');
    const checked = checkManifest(pkg.data.switchyard, SPEC_SEMVER);
    if ("problem" in checked)
      return refused({ ...named, wantedRange: checked.wantedRange }, checked.problem.code, checked.problem.message);
    const { manifest } = checked;
    const described = {
      ...named,
      drivers: [...manifest.drivers],
      commands: manifestCommands(manifest).map((command) => command.name),
      wantedRange: manifest.specVersion,
    };
    const entryPath = resolve(candidate.dir, manifest.entry);
    const rel = relative(candidate.dir, entryPath);
    if (rel.startsWith("..") || isAbsolute(rel))
      return refused(described, "manifest_invalid", `its entry ${manifest.entry} points outside the plugin folder`);
    if (!existsSync(entryPath))
      return refused(
        described,
        "manifest_invalid",
        `its entry ${manifest.entry} does not exist (was the plugin built?)`,
      );
    return { kind: "scanned", plugin: { record: described, manifest, entryPath } };
  }

  /** Imports a scanned plugin's entry and checks its definition. */
  private async importPlugin(
    plugin: ScannedPlugin,
  ): Promise<CheckedDefinition | { code: PluginRefusalCode; problem: string }> {
    let module: { default?: unknown };
    try {
      module = (await import(pathToFileURL(plugin.entryPath).href)) as { default?: unknown };
    } catch (error) {
      return { code: "import_failed", problem: `importing ${plugin.manifest.entry} threw: ${describeError(error)}` };
    }
    return checkDefinition(module.default, plugin.manifest, this.resolver);
  }

  private refuse(base: RecordBase, code: PluginRefusalCode, problem: string): void {
    const message = refusalMessage(base.name, base.dir, problem, base.wantedRange);
    this.records.push({ ...base, status: "refused", refusal: { code, message }, warning: null });
    this.logger.warn("plugin refused", { plugin: base.name, code, reason: message });
  }

  /** Every plugin seen, loaded and refused, in discovery order. */
  list(): readonly PluginRecord[] {
    return this.records;
  }

  /** The driver for a kind, if a loaded plugin provides it. */
  driver(kind: string): LoadedDriver | null {
    return this.drivers.get(kind) ?? null;
  }

  /** Every loaded driver kind. */
  driverKinds(): string[] {
    return [...this.drivers.keys()].sort();
  }

  /** The HTTP API routes loaded plugins contribute, in load order (`serve` mounts them). */
  routeContributions(): readonly LoadedRoutes[] {
    return this.routes;
  }
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
