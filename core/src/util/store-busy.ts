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

/**
 * PostgreSQL's SQLSTATEs for a transaction the server rolled back so that others could go on:
 * a serialization failure (40001) and a deadlock (40P01).
 */
const ROLLED_BACK_FOR_OTHERS: Readonly<Record<string, string>> = {
  "40001": "a serialization failure",
  "40P01": "a deadlock with another connection",
};

/**
 * The database rolled a transaction back because it conflicted with another connection's (a
 * serialization failure or a deadlock, PostgreSQL's SQLSTATE 40001 / 40P01). Nothing of it was
 * written; it can be retried as it was. The same `store_busy` code as {@link StoreBusyError}:
 * the transports already answer it as "busy, retry".
 */
export class StoreTransactionConflictError extends SwitchyardError {
  constructor(
    readonly sqlState: string,
    cause: unknown,
  ) {
    super(
      "store_busy",
      `Switchyard's database rolled this transaction back after ${ROLLED_BACK_FOR_OTHERS[sqlState] ?? `SQLSTATE ${sqlState}`} (SQLSTATE ${sqlState}), so nothing was written; retry.`,
      { sqlState },
      { cause },
    );
    this.name = "StoreTransactionConflictError";
  }
}

/** `error` as a {@link StoreTransactionConflictError} when the server rolled its transaction back for another's sake; else `error` itself. */
export function asTransactionConflict(error: unknown): unknown {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && code in ROLLED_BACK_FOR_OTHERS
    ? new StoreTransactionConflictError(code, error)
    : error;
}
