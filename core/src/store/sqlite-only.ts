import type Database from "better-sqlite3";
import type { EventStore } from "./ports.js";
import { MissingStoreCapabilityError } from "./table-sql.js";

/** The SQLite store (`Store`) as this folder's own modules and tests see it: the port, and its connection. */
export interface SqliteEventStore extends EventStore {
  /** The connection itself (see `Store.db`). */
  readonly db: Database.Database;
  /** A prepared statement, cached by its SQL (see `Store.statement`). */
  statement(sql: string): Database.Statement;
}

/**
 * The SQLite store behind a port, for the store's own modules that still speak to its
 * connection synchronously (settings, the harness process log, the FTS5 thread search); any
 * other backend is refused by the capability it lacks. The port itself carries no driver.
 */
export function sqliteStoreOf(store: EventStore, capability: string): SqliteEventStore {
  if (store.tableSql.dialect === "sqlite" && typeof (store as Partial<SqliteEventStore>).statement === "function")
    return store as SqliteEventStore;
  throw new MissingStoreCapabilityError(capability, store.tableSql.dialect);
}
