import { closeSync, openSync, readSync } from "node:fs";

/** How much of a session file is read to find its header line. */
const HEADER_READ_BYTES = 64 * 1024;

/**
 * Why a Pi session file cannot reopen its conversation, or null when it can. Pi itself opens a
 * file whose first line is not a session header (a crash cut it, something overwrote it) as an
 * empty session and rewrites it, so the conversation would be lost without a word: a resume
 * checks first and fails instead, and the host starts a new session with the thread's history.
 */
export function sessionFileProblem(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "it no longer exists" : `it cannot be read (${code ?? (error as Error).message})`;
  }
  let head: string;
  try {
    const buffer = Buffer.alloc(HEADER_READ_BYTES);
    head = buffer.subarray(0, readSync(fd, buffer, 0, HEADER_READ_BYTES, 0)).toString("utf8");
  } finally {
    closeSync(fd);
  }
  const firstLine = head.trimStart().split("\n", 1)[0] ?? "";
  try {
    const header = JSON.parse(firstLine) as { type?: unknown; id?: unknown };
    if (header.type === "session" && typeof header.id === "string") return null;
  } catch {
    // not JSON: said below
  }
  return "it does not start with a Pi session header (it is corrupt)";
}
