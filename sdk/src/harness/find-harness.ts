import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { HarnessLookup, HarnessSource, PluginContext } from "@switchyard/spec";

/**
 * Finding the harness a plugin drives, the same way for every plugin: the instance's
 * configured executable, else a command on PATH, else a package the user installed globally
 * (`npm i -g …`), else a package resolvable from the plugin itself (installed next to it, or a
 * checkout's workspace). Switchyard never installs a harness: it uses the one the user has.
 */

/** What a plugin says about the harness it drives: data, the same shape for every plugin. @public */
export interface HarnessSpec {
  /** Name for people (`Codex`). */
  readonly displayName: string;
  /** The instance option that names the executable (`codexPath`), for messages. */
  readonly option?: string;
  /** Command names looked up on PATH (`codex`); empty for a library harness (an SDK). */
  readonly commands: readonly string[];
  /** npm packages that provide it, best first (`@openai/codex`). */
  readonly packages: readonly string[];
  /** How a user installs it (`npm i -g @openai/codex`). */
  readonly install: string;
  /** The semver range of harness versions the plugin was tested with; outside it: usable, with a warning. */
  readonly testedVersions?: string;
  /**
   * Versions whose protocol the plugin speaks; outside them the harness is refused, with `why`
   * (what is known to differ). Only where a difference is known: an untested version is a
   * warning, not a refusal.
   */
  readonly supportedVersions?: { readonly range: string; readonly why: string };
}

/** Where a search found the harness. @public */
export interface FoundHarness {
  readonly source: HarnessSource;
  /**
   * The executable: the configured one, the command found on PATH, or (from a package) the bin
   * named like one of `commands`. Null for a package with no such bin (a library).
   */
  readonly command: string | null;
  /** The package folder it belongs to (a PATH command that links into one counts), else null. */
  readonly packageDir: string | null;
  readonly packageName: string | null;
  readonly packageVersion: string | null;
}

/** The outcome of {@link findHarness}. @public */
export interface HarnessSearch {
  readonly spec: HarnessSpec;
  /** The first usable place, or null. */
  readonly found: FoundHarness | null;
  /** Every place tried, in order, up to the one that answered. */
  readonly searched: readonly HarnessLookup[];
}

/** What {@link findHarness} needs. @public */
export interface HarnessSearchInput {
  /** The instance's configured executable (an option such as `codexPath`); when set, nothing else is tried. */
  readonly configured?: string | undefined;
  /** The environment the harness runs with (its PATH, HOME, npm prefix). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The host's process helpers (`which`). */
  readonly context: Pick<PluginContext, "process">;
  /** The plugin module's `import.meta.url`: packages are resolved from here last. */
  readonly from: string;
  /**
   * Says why a place cannot be used although something is there (a package installed without
   * its platform binary), or null when it can; an unusable place is recorded and the search
   * goes on.
   */
  readonly usable?: (found: FoundHarness) => string | null;
}

interface PackageManifest {
  readonly name?: unknown;
  readonly version?: unknown;
  readonly bin?: unknown;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function readManifest(file: string): PackageManifest | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as PackageManifest;
  } catch {
    return null;
  }
}

/** The bin of a package named like one of `commands` (or its only bin), as an absolute path. */
function packageBin(packageDir: string, manifest: PackageManifest, commands: readonly string[]): string | null {
  const bin = manifest.bin;
  let relative: string | undefined;
  if (typeof bin === "string") relative = bin;
  else if (bin !== null && typeof bin === "object") {
    const entries = bin as Record<string, unknown>;
    const name = commands.find((command) => typeof entries[command] === "string");
    if (name !== undefined) relative = entries[name] as string;
  }
  if (relative === undefined) return null;
  const file = path.resolve(packageDir, relative);
  return existsSync(file) ? file : null;
}

function packageAt(packageDir: string, commands: readonly string[]): FoundHarness | null {
  const manifest = readManifest(path.join(packageDir, "package.json"));
  if (manifest === null || typeof manifest.name !== "string") return null;
  return {
    source: "local",
    command: packageBin(packageDir, manifest, commands),
    packageDir,
    packageName: manifest.name,
    packageVersion: typeof manifest.version === "string" ? manifest.version : null,
  };
}

/**
 * The package one of `names` that a file belongs to (an npm bin links into its package), found
 * by walking up from the file's real path to the nearest named package.json.
 * @public
 */
export function owningPackage(
  file: string,
  names: readonly string[],
): { readonly dir: string; readonly name: string; readonly version: string | null } | null {
  let dir: string;
  try {
    dir = path.dirname(realpathSync(file));
  } catch {
    return null;
  }
  for (;;) {
    const manifest = readManifest(path.join(dir, "package.json"));
    // A nested package.json without a name (`{"type":"module"}` in dist/) is not the package.
    if (manifest !== null && typeof manifest.name === "string") {
      return names.includes(manifest.name)
        ? { dir, name: manifest.name, version: typeof manifest.version === "string" ? manifest.version : null }
        : null;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** `prefix=` from an npmrc file, when it sets one. */
function npmrcPrefix(file: string, home: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*prefix\s*=\s*(.+?)\s*$/.exec(line);
    if (match !== null) {
      const value = match[1]!.replace(/^["']|["']$/g, "");
      return value.startsWith("~") ? path.join(home, value.slice(1)) : path.resolve(value);
    }
  }
  return null;
}

/**
 * The folders `npm i -g` installs packages into, most specific first: the prefix npm's
 * environment or the user's `.npmrc` sets, then the default one next to this Node. Worked out
 * without running npm (which would write its own logs under the user's home).
 * @public
 */
export function globalNpmRoots(
  env: Readonly<Record<string, string | undefined>> = process.env,
  execPath: string = process.execPath,
): string[] {
  const home = env["HOME"] ?? homedir();
  const prefixes = [
    env["npm_config_global_prefix"],
    env["npm_config_prefix"] ?? env["NPM_CONFIG_PREFIX"],
    npmrcPrefix(env["NPM_CONFIG_USERCONFIG"] ?? env["npm_config_userconfig"] ?? path.join(home, ".npmrc"), home),
    process.platform === "win32" ? path.dirname(execPath) : path.dirname(path.dirname(execPath)),
  ];
  const roots: string[] = [];
  for (const prefix of prefixes) {
    if (prefix === undefined || prefix === null || prefix === "") continue;
    const root =
      process.platform === "win32" ? path.join(prefix, "node_modules") : path.join(prefix, "lib", "node_modules");
    if (!roots.includes(root)) roots.push(root);
  }
  return roots;
}

/** Folders `name` would be found in walking up `node_modules` from a module (what Node's resolution tries). */
function localPackageDirs(from: string, name: string): string[] {
  const dirs: string[] = [];
  let dir = path.dirname(from.startsWith("file:") ? fileURLToPath(from) : from);
  for (;;) {
    if (path.basename(dir) !== "node_modules") dirs.push(path.join(dir, "node_modules", ...name.split("/")));
    const parent = path.dirname(dir);
    if (parent === dir) return dirs;
    dir = parent;
  }
}

/**
 * Looks for a harness in the order every plugin uses (see the module comment) and returns the
 * first usable place with everything it tried. Never throws, never runs the harness.
 * @public
 */
export async function findHarness(spec: HarnessSpec, input: HarnessSearchInput): Promise<HarnessSearch> {
  const searched: HarnessLookup[] = [];
  const accept = (found: FoundHarness, what: string, location: string): HarnessSearch | null => {
    const problem = input.usable?.(found) ?? null;
    searched.push({ source: found.source, what, found: location, ...(problem !== null ? { problem } : {}) });
    return problem === null ? { spec, found, searched } : null;
  };
  const fromFile = (source: HarnessSource, command: string): FoundHarness => {
    const owner = owningPackage(command, spec.packages);
    return {
      source,
      command,
      packageDir: owner?.dir ?? null,
      packageName: owner?.name ?? null,
      packageVersion: owner?.version ?? null,
    };
  };

  if (input.configured !== undefined) {
    const what = `${input.configured} (the ${spec.option ?? "configured"} option)`;
    // A file that is there but not executable (a `cli.js`) is the plugin's to run.
    const hit =
      (await input.context.process.which(input.configured, input.env)) ??
      (isFile(input.configured) ? path.resolve(input.configured) : null);
    if (hit === null) {
      searched.push({ source: "configured", what, found: null });
      return { spec, found: null, searched };
    }
    return accept(fromFile("configured", hit), what, hit) ?? { spec, found: null, searched };
  }

  for (const command of spec.commands) {
    const what = `\`${command}\` on PATH`;
    const hit = await input.context.process.which(command, input.env);
    if (hit === null) {
      searched.push({ source: "path", what, found: null });
      continue;
    }
    const result = accept(fromFile("path", hit), what, hit);
    if (result !== null) return result;
  }

  for (const root of globalNpmRoots(input.env)) {
    for (const name of spec.packages) {
      const dir = path.join(root, ...name.split("/"));
      const what = `${name} in the global npm root ${root}`;
      const found = packageAt(dir, spec.commands);
      if (found === null) {
        searched.push({ source: "global", what, found: null });
        continue;
      }
      const result = accept({ ...found, source: "global" }, what, dir);
      if (result !== null) return result;
    }
  }

  for (const name of spec.packages) {
    const what = `${name} next to the plugin`;
    const dir = localPackageDirs(input.from, name).find((candidate) =>
      existsSync(path.join(candidate, "package.json")),
    );
    const found = dir === undefined ? null : packageAt(realpathSync(dir), spec.commands);
    if (found === null) {
      searched.push({ source: "local", what, found: null });
      continue;
    }
    const result = accept(found, what, found.packageDir!);
    if (result !== null) return result;
  }
  return { spec, found: null, searched };
}

/** A list of the places a search tried, for a message: "`codex` on PATH, @openai/codex in …". @public */
export function describeSearched(search: HarnessSearch): string {
  return search.searched
    .map((lookup) =>
      lookup.problem !== undefined ? `${lookup.what} (${lookup.found}: ${lookup.problem})` : lookup.what,
    )
    .join("; ");
}

/**
 * Why a harness was not found, in words a user can act on: what was looked for, where, and the
 * command that installs it.
 * @public
 */
export function harnessNotFoundMessage(search: HarnessSearch): string {
  const { spec } = search;
  const configured = search.searched[0]?.source === "configured";
  if (configured) {
    return `${spec.displayName} was not found at ${search.searched[0]!.what}. Fix the option, or remove it to look on PATH and in installed packages (${spec.install}).`;
  }
  const option = spec.option !== undefined ? `, or set the instance's ${spec.option} option` : "";
  return `${spec.displayName} was not found. Looked for: ${describeSearched(search)}. Install it: ${spec.install}${option}.`;
}
