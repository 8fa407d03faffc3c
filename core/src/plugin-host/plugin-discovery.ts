import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { homedir } from "node:os";
import type { PluginSource } from "./ports.js";

export type { PluginSource } from "./ports.js";

/** A folder that may hold a plugin. */
export interface PluginCandidate {
  readonly dir: string;
  readonly source: PluginSource;
  /** What the config or install named, when that differs from the folder. */
  readonly requested: string | null;
}

/** Where to look. */
export interface PluginSearchPaths {
  /** The repository's `plugins/` folder (or wherever built-in plugins ship). */
  readonly builtinDir: string | null;
  /** Built-in plugin package folders (what the `@switchyard/cli` launcher depends on). */
  readonly builtinPackageDirs?: readonly string[];
  /** `$SWITCHYARD_HOME/plugins`, managed by `switchyard plugin install`. */
  readonly managedDir: string;
  /** The config's `plugins` entries: folders or package names. */
  readonly configEntries: readonly string[];
  /** Relative folders in the config resolve against this (the config file's folder). */
  readonly configBaseDir: string;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function looksLikePath(entry: string): boolean {
  return entry.startsWith(".") || entry.startsWith("/") || entry.startsWith("~") || isAbsolute(entry);
}

/** Packages the managed directory installed (its package.json dependencies), plus copied folders. */
export function managedPluginDirs(managedDir: string): string[] {
  const dirs: string[] = [];
  const manifest = join(managedDir, "package.json");
  if (existsSync(manifest)) {
    try {
      const deps =
        (JSON.parse(readFileSync(manifest, "utf8")) as { dependencies?: Record<string, string> }).dependencies ?? {};
      for (const name of Object.keys(deps).sort()) {
        const dir = join(managedDir, "node_modules", name);
        if (isDir(dir)) dirs.push(dir);
      }
    } catch {
      // A damaged managed manifest hides nothing else; `plugin install` rewrites it.
    }
  }
  return dirs;
}

/** Resolves a config entry to a folder, or returns why it could not. */
export function resolveConfigEntry(entry: string, paths: PluginSearchPaths): { dir: string } | { error: string } {
  if (looksLikePath(entry)) {
    const expanded = entry.startsWith("~") ? join(homedir(), entry.slice(1)) : entry;
    const dir = resolve(paths.configBaseDir, expanded);
    return isDir(dir) ? { dir } : { error: `folder ${dir} does not exist` };
  }
  const managed = join(paths.managedDir, "node_modules", entry);
  if (isDir(managed)) return { dir: managed };
  try {
    const require = createRequire(join(process.cwd(), "noop.js"));
    return { dir: dirname(require.resolve(`${entry}/package.json`)) };
  } catch {
    return { error: `package "${entry}" is not installed (try: switchyard plugin install ${entry})` };
  }
}

/**
 * Lists candidate folders: config entries first, then managed installs, then built-ins, so a
 * user's own copy of a plugin wins over the bundled one.
 */
export function discoverPluginCandidates(paths: PluginSearchPaths): {
  candidates: PluginCandidate[];
  unresolved: { entry: string; error: string }[];
} {
  const candidates: PluginCandidate[] = [];
  const unresolved: { entry: string; error: string }[] = [];
  for (const entry of paths.configEntries) {
    const resolved = resolveConfigEntry(entry, paths);
    if ("error" in resolved) unresolved.push({ entry, error: resolved.error });
    else candidates.push({ dir: resolved.dir, source: "config", requested: entry });
  }
  for (const dir of managedPluginDirs(paths.managedDir)) candidates.push({ dir, source: "managed", requested: null });
  if (paths.builtinDir !== null && isDir(paths.builtinDir)) {
    for (const name of readdirSync(paths.builtinDir).sort()) {
      const dir = join(paths.builtinDir, name);
      if (isDir(dir) && existsSync(join(dir, "package.json")))
        candidates.push({ dir, source: "builtin", requested: null });
    }
  }
  for (const dir of paths.builtinPackageDirs ?? []) candidates.push({ dir, source: "builtin", requested: null });
  return { candidates, unresolved };
}
