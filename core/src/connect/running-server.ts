import { join } from "node:path";
import { liveHomeHolder } from "../host/home-lock.js";
import { readTextFile, removeFile, writeTextFileAtomically } from "./config-file.js";
import { PRIVATE_FILE_MODE } from "../util/private-files.js";

/** `server.json` in a home: where the server that holds the home's lock listens. */
export const SERVER_FILE = "server.json";

/** What `serve` records once it listens. */
export interface RunningServerInfo {
  readonly pid: number;
  readonly url: string;
  readonly mcpUrl: string;
  readonly port: number;
  readonly startedAt: string;
  readonly version: string;
}

/** Records the listening server (written by `serve`, removed when it stops). */
export function recordRunningServer(home: string, info: RunningServerInfo): void {
  writeTextFileAtomically(join(home, SERVER_FILE), `${JSON.stringify(info, null, 2)}\n`, {
    mode: PRIVATE_FILE_MODE,
    backup: false,
  });
}

/** Forgets the listening server, if this process is the one recorded. */
export function forgetRunningServer(home: string, pid: number): void {
  const current = readServerFile(home);
  if (current !== null && current.pid === pid) removeFile(join(home, SERVER_FILE));
}

function readServerFile(home: string): RunningServerInfo | null {
  const text = readTextFile(join(home, SERVER_FILE));
  if (text === null) return null;
  try {
    return JSON.parse(text) as RunningServerInfo;
  } catch {
    return null;
  }
}

/**
 * The server running on a home: the one recorded in `server.json` when it still holds the
 * home's lock (a file left by a killed server is ignored); null when none runs.
 */
export function runningServer(home: string): RunningServerInfo | null {
  const info = readServerFile(home);
  if (info === null) return null;
  const holder = liveHomeHolder(home);
  return holder !== null && holder.pid === info.pid ? info : null;
}
