import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  makePrivateDir,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  tightenMode,
  type TightenedPath,
} from "../util/private-files.js";
import type { SwitchyardPaths } from "./paths.js";

/** The home's own files that hold what others must not read, beside the database. */
const HOME_FILES = ["config.json", "server.json", "server.lock"];

/**
 * The database and the files SQLite keeps beside it (the WAL holds recent commits in clear;
 * the shared-memory index says what is in it).
 */
export function databaseFiles(paths: SwitchyardPaths): string[] {
  return [paths.databaseFile, `${paths.databaseFile}-wal`, `${paths.databaseFile}-shm`];
}

/**
 * Makes the home private before the database opens: created 0700 when missing; an existing
 * home, its database files, its config, server and lock files, and its logs tightened to
 * 0700/0600 when group or others can reach them (a home from before Switchyard kept it private,
 * or made with a permissive umask). Returns what it changed, for the caller to say so: tightening
 * is deliberate, never silent. Folders and files inside the home that Switchyard did not create
 * keep their modes; the 0700 home is what keeps other users out of them.
 */
export function securePrivateHome(paths: SwitchyardPaths): TightenedPath[] {
  makePrivateDir(paths.home);
  const changed: (TightenedPath | null)[] = [tightenMode(paths.home, PRIVATE_DIR_MODE)];
  for (const file of [...databaseFiles(paths), ...HOME_FILES.map((name) => join(paths.home, name))])
    changed.push(tightenMode(file, PRIVATE_FILE_MODE));
  const logs = dirname(paths.logFile);
  changed.push(tightenMode(logs, PRIVATE_DIR_MODE));
  let logFiles: string[] = [];
  try {
    logFiles = readdirSync(logs);
  } catch {
    // no logs yet
  }
  for (const name of logFiles) changed.push(tightenMode(join(logs, name), PRIVATE_FILE_MODE));
  return changed.filter((entry): entry is TightenedPath => entry !== null);
}
