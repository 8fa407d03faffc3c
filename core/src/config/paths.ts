import { statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { SwitchyardError } from "../spec/index.js";
import { token } from "../util/di-token.js";

/** Where Switchyard keeps its state. */
export interface SwitchyardPaths {
  /** `$SWITCHYARD_HOME`, default `~/.switchyard`. */
  readonly home: string;
  /** `config.json` in the home. */
  readonly configFile: string;
  /** The SQLite database. */
  readonly databaseFile: string;
  /** Managed plugin directory (`switchyard plugin install` puts plugins here). */
  readonly pluginsDir: string;
  /** Caches (plugin caches, generated extensions, the ACP registry cache). */
  readonly cacheDir: string;
  /** Data owned by plugins. */
  readonly dataDir: string;
  /** Scratch workspaces for threads launched without a project. */
  readonly scratchDir: string;
  /** The server's log file (JSON lines), `logs/switchyard.log`. */
  readonly logFile: string;
}

/**
 * Refuses a home that exists but is not a folder (or lies under a file), before anything tries
 * to create files in it and fails with a less helpful error.
 */
function requireFolder(home: string, source: string): string {
  let isFolder: boolean;
  try {
    isFolder = statSync(home).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return home;
    if (code !== "ENOTDIR") throw error;
    isFolder = false;
  }
  if (!isFolder)
    throw new SwitchyardError(
      "invalid_input",
      `${source} (${home}) is not a folder. Point it at a folder; a missing one is created.`,
      { home },
    );
  return home;
}

/**
 * Resolves the home from an explicit value (`--home`), then SWITCHYARD_HOME, then
 * `~/.switchyard`; throws `invalid_input` when it names a file.
 */
export function resolveHome(explicit?: string): string {
  const fromEnv = process.env.SWITCHYARD_HOME;
  if (explicit !== undefined && explicit !== "") return requireFolder(resolve(explicit), "--home");
  if (fromEnv !== undefined && fromEnv !== "") return requireFolder(resolve(fromEnv), "$SWITCHYARD_HOME");
  return requireFolder(join(homedir(), ".switchyard"), "The Switchyard home");
}

/** All paths under a home. */
export function pathsFor(home: string): SwitchyardPaths {
  return {
    home,
    configFile: join(home, "config.json"),
    databaseFile: join(home, "switchyard.db"),
    pluginsDir: join(home, "plugins"),
    cacheDir: join(home, "cache"),
    dataDir: join(home, "data"),
    scratchDir: join(home, "scratch"),
    logFile: join(home, "logs", "switchyard.log"),
  };
}

/** DI token: the paths of the home the host runs in. */
export const PathsToken = token<SwitchyardPaths>("Paths");
