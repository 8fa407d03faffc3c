import { randomBytes } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { SwitchyardError } from "../spec/index.js";

/** The suffix of the copy kept of a harness config file before `connect` or `disconnect` changes it. */
export const BACKUP_SUFFIX = ".switchyard-backup";

function failure(error: unknown, file: string, doing: string): SwitchyardError {
  const code = (error as NodeJS.ErrnoException).code ?? "unknown";
  return new SwitchyardError(
    "invalid_input",
    `Cannot ${doing} ${file} (${code}). Check that the folder exists and is writable by you, or pass --scope/--project to write elsewhere.`,
    {
      file,
      code,
    },
  );
}

/** A file's text, or null when it does not exist. */
export function readTextFile(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw failure(error, file, "read");
  }
}

/**
 * Writes `text` to `file` through a temporary file and a rename, so a reader (the harness) sees
 * the old file or the new one, never half of one. An existing file keeps its mode unless
 * `mode` is given, and a copy of it is kept beside it first. Returns false when the file already
 * held exactly this text (nothing written, no backup made).
 */
export function writeTextFileAtomically(
  file: string,
  text: string,
  options: { mode?: number; backup?: boolean } = {},
): boolean {
  const current = readTextFile(file);
  let mode = options.mode;
  if (current !== null) {
    const existingMode = statSync(file).mode & 0o777;
    if (current === text && (mode === undefined || existingMode === mode)) return false;
    mode ??= existingMode;
  }
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    if (current !== null && options.backup !== false) copyFileSync(file, `${file}${BACKUP_SUFFIX}`);
    writeFileSync(temp, text, { mode: mode ?? 0o644, flag: "wx" });
    // writeFile's mode is masked by the umask; set it exactly.
    chmodSync(temp, mode ?? 0o644);
    renameSync(temp, file);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // never created
    }
    if (error instanceof SwitchyardError) throw error;
    throw failure(error, file, "write");
  }
  return true;
}

/** Removes a file Switchyard owns; a missing one is fine. */
export function removeFile(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw failure(error, file, "remove");
  }
}
