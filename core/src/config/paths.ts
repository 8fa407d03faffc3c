import { homedir } from "node:os";
import { join, resolve } from "node:path";

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
}

/** Resolves the home from an explicit value, then SWITCHYARD_HOME, then `~/.switchyard`. */
export function resolveHome(explicit?: string): string {
  const fromEnv = process.env.SWITCHYARD_HOME;
  if (explicit !== undefined && explicit !== "") return resolve(explicit);
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv);
  return join(homedir(), ".switchyard");
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
  };
}
