import { hasErrorCode, SwitchyardError } from "../spec/index.js";

/**
 * The database stayed locked by another connection longer than the store waits (its busy
 * timeout). Nothing of the operation was written; it can be retried as it was.
 */
export class StoreBusyError extends SwitchyardError {
  constructor(file: string, waitedMs: number, cause: unknown) {
    super(
      "store_busy",
      `Switchyard's database ${file} stayed locked by another connection for ${waitedMs} ms, so nothing was written; retry. ` +
        `If it keeps happening, a program holds a write transaction open on that file (a sqlite3 shell, a backup tool): end it.`,
      { file, waitedMs },
      { cause },
    );
    this.name = "StoreBusyError";
  }
}

/**
 * Whether an error means the database was locked by another connection: a `store_busy` error,
 * or SQLite's own SQLITE_BUSY (a statement outside the store's transactions) from better-sqlite3.
 * Transports, which cannot see the store, branch on this to answer "busy, retry" instead of a
 * generic failure.
 */
export function isStoreBusy(error: unknown): boolean {
  if (hasErrorCode(error, "store_busy")) return true;
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}
