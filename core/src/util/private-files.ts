import { chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Switchyard's home holds transcripts, prompts, webhook bodies and credential hashes: what it
 * creates there is for the user alone, whatever the umask (another user on the machine, or the
 * same machine's other servers, must not read it).
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * `mkdir -p` whose every new folder is 0700. mkdir's mode is masked by the umask, so each folder
 * this call created is set exactly; folders that existed are left as they are.
 */
export function makePrivateDir(dir: string): string {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return dir;
  for (let current = dir; ; current = dirname(current)) {
    chmodSync(current, PRIVATE_DIR_MODE);
    if (current === first || dirname(current) === current) break;
  }
  return dir;
}

/**
 * Creates an empty file 0600 (and its folder 0700) unless it exists, so a program that then
 * opens it (SQLite) keeps that mode instead of its own default. An existing file is untouched.
 */
export function ensurePrivateFile(file: string): void {
  makePrivateDir(dirname(file));
  let fd: number;
  try {
    fd = openSync(file, "wx", PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  closeSync(fd);
  chmodSync(file, PRIVATE_FILE_MODE);
}

/** A path whose mode was tightened: what it was and what it is now. */
export interface TightenedPath {
  readonly path: string;
  readonly from: number;
  readonly to: number;
}

/**
 * Sets `path` to `mode` when it exists and gives its group or others any access (a home made
 * before Switchyard kept it private, or copied in with a permissive umask). Returns what it
 * changed, or null.
 */
export function tightenMode(path: string, mode: number): TightenedPath | null {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  if ((current & 0o077) === 0) return null;
  try {
    chmodSync(path, mode);
  } catch (error) {
    // Not the user's to change (another owner): left as it is, and doctor goes on warning.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EPERM" || code === "EACCES") return null;
    throw error;
  }
  return { path, from: current, to: mode };
}
