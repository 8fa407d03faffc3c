import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join, relative, resolve, isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import {
  SPECIFICATION_VERSION,
  SPEC_SEMVER,
  type PluginDefinition,
  type ProviderDriver,
} from "../spec/index.js";
import type { Logger } from "../logging/logger.js";
import { checkManifest, PluginPackageSchema } from "./manifest.js";
import { discoverPluginCandidates, type PluginCandidate, type PluginSearchPaths } from "./plugin-discovery.js";
import type { LoadedDriver, PluginCatalog, PluginRecord, PluginRefusalCode } from "./ports.js";

export type { LoadedDriver, PluginRecord, PluginRefusalCode } from "./ports.js";

function refusalMessage(name: string, dir: string | null, problem: string, wantedRange: string | null): string {
  const where = dir === null ? "" : ` (${dir})`;
  const wanted = wantedRange === null ? "none declared" : wantedRange;
  return `Plugin "${name}"${where} refused: ${problem}. Wanted spec range: ${wanted}; this host implements spec ${SPEC_SEMVER} (${SPECIFICATION_VERSION}).`;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split("\n")[0] ?? error.message;
  return String(error);
}

/** Checks a plugin's default export before any of its drivers is used. */
function checkDefinition(value: unknown, declaredDrivers: readonly string[]): { definition: PluginDefinition } | { problem: string; code: "spec_incompatible" | "definition_invalid" } {
  if (typeof value !== "object" || value === null) {
    return { code: "definition_invalid", problem: "its entry module has no default export (expected definePlugin({ drivers }))" };
  }
  const candidate = value as Partial<PluginDefinition>;
  if (candidate.specificationVersion !== SPECIFICATION_VERSION) {
    return {
      code: "spec_incompatible",
      problem: `its definition declares specificationVersion ${JSON.stringify(candidate.specificationVersion)}, not "${SPECIFICATION_VERSION}"`,
    };
  }
  if (!Array.isArray(candidate.drivers) || candidate.drivers.length === 0) {
    return { code: "definition_invalid", problem: "its definition has no drivers" };
  }
  for (const driver of candidate.drivers as unknown[]) {
    const d = driver as Partial<ProviderDriver>;
    if (typeof d !== "object" || d === null || typeof d.driverKind !== "string" || typeof d.create !== "function") {
      return { code: "definition_invalid", problem: "a driver lacks driverKind or create()" };
    }
    if (d.specificationVersion !== SPECIFICATION_VERSION) {
      return {
        code: "spec_incompatible",
        problem: `driver "${d.driverKind}" declares specificationVersion ${JSON.stringify(d.specificationVersion)}, not "${SPECIFICATION_VERSION}"`,
      };
    }
    if (!declaredDrivers.includes(d.driverKind)) {
      return { code: "definition_invalid", problem: `driver "${d.driverKind}" is not listed in the manifest's drivers (${declaredDrivers.join(", ")})` };
    }
  }
  return { definition: candidate as PluginDefinition };
}

/**
 * Finds, validates and loads plugins. The manifest and spec range are checked before any
 * plugin code is imported; a plugin that fails at any step is refused with a message naming
 * it, and the others load. Built-in plugins take exactly the same path.
 */
export class PluginHost implements PluginCatalog {
  private readonly records: PluginRecord[] = [];
  private readonly drivers = new Map<string, LoadedDriver>();
  private loaded = false;

  constructor(
    private readonly paths: PluginSearchPaths,
    private readonly logger: Logger,
  ) {}

  /** Loads every plugin once. Never throws for a plugin's fault. */
  async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    const { candidates, unresolved } = discoverPluginCandidates(this.paths);
    for (const { entry, error } of unresolved) {
      this.refuse({ name: entry, version: null, dir: null, source: "config", drivers: [], wantedRange: null }, "not_found", error);
    }
    const seenDirs = new Set<string>();
    const seenNames = new Set<string>();
    for (const candidate of candidates) {
      const real = safeRealpath(candidate.dir);
      if (seenDirs.has(real)) continue;
      seenDirs.add(real);
      await this.loadCandidate(candidate, seenNames);
    }
  }

  private async loadCandidate(candidate: PluginCandidate, seenNames: Set<string>): Promise<void> {
    const fallbackName = candidate.requested ?? candidate.dir;
    const base = { name: fallbackName, version: null as string | null, dir: candidate.dir, source: candidate.source, drivers: [] as string[], wantedRange: null as string | null };
    const packageFile = join(candidate.dir, "package.json");
    if (!existsSync(packageFile)) {
      this.refuse(base, "manifest_invalid", "it has no package.json");
      return;
    }
    let pkgRaw: unknown;
    try {
      pkgRaw = JSON.parse(readFileSync(packageFile, "utf8"));
    } catch (error) {
      this.refuse(base, "manifest_invalid", `its package.json is not valid JSON (${describeError(error)})`);
      return;
    }
    const pkg = PluginPackageSchema.safeParse(pkgRaw);
    if (!pkg.success) {
      this.refuse(base, "manifest_invalid", `its package.json lacks ${pkg.error.issues.map((i) => i.path.join(".")).join(", ")}`);
      return;
    }
    const named = { ...base, name: pkg.data.name, version: pkg.data.version };
    if (seenNames.has(pkg.data.name)) {
      // A user's copy (config or managed) already won over this one; not an error.
      this.logger.debug("plugin shadowed by an earlier copy", { plugin: pkg.data.name, dir: candidate.dir });
      return;
    }
    seenNames.add(pkg.data.name);
    if (pkg.data.switchyard === undefined) {
      this.refuse(named, "manifest_invalid", 'its package.json has no "switchyard" manifest field');
      return;
    }
    const checked = checkManifest(pkg.data.switchyard, SPEC_SEMVER);
    if ("problem" in checked) {
      this.refuse({ ...named, wantedRange: checked.wantedRange }, checked.problem.code, checked.problem.message);
      return;
    }
    const { manifest } = checked;
    const described = { ...named, drivers: [...manifest.drivers], wantedRange: manifest.specVersion };
    const entryPath = resolve(candidate.dir, manifest.entry);
    const rel = relative(candidate.dir, entryPath);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      this.refuse(described, "manifest_invalid", `its entry ${manifest.entry} points outside the plugin folder`);
      return;
    }
    if (!existsSync(entryPath)) {
      this.refuse(described, "manifest_invalid", `its entry ${manifest.entry} does not exist (was the plugin built?)`);
      return;
    }
    let module: { default?: unknown };
    try {
      module = (await import(pathToFileURL(entryPath).href)) as { default?: unknown };
    } catch (error) {
      this.refuse(described, "import_failed", `importing ${manifest.entry} threw: ${describeError(error)}`);
      return;
    }
    const definition = checkDefinition(module.default, manifest.drivers);
    if ("problem" in definition) {
      this.refuse(described, definition.code, definition.problem);
      return;
    }
    const conflicts = definition.definition.drivers.filter((d) => this.drivers.has(d.driverKind)).map((d) => d.driverKind);
    if (conflicts.length > 0) {
      const owner = this.drivers.get(conflicts[0]!)!.plugin.name;
      this.refuse(described, "driver_conflict", `driver "${conflicts[0]}" is already provided by plugin "${owner}"`);
      return;
    }
    const record: PluginRecord = { ...described, status: "loaded", refusal: null };
    this.records.push(record);
    for (const driver of definition.definition.drivers) this.drivers.set(driver.driverKind, { driver: driver as ProviderDriver<unknown>, plugin: record });
    this.logger.info("plugin loaded", { plugin: record.name, version: record.version, source: record.source, drivers: record.drivers });
  }

  private refuse(
    base: Omit<PluginRecord, "status" | "refusal">,
    code: PluginRefusalCode,
    problem: string,
  ): void {
    const message = refusalMessage(base.name, base.dir, problem, base.wantedRange);
    this.records.push({ ...base, status: "refused", refusal: { code, message } });
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
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
