import type { EventStore } from "../../src/store/ports.js";
import { type SqliteEventStore, sqliteStoreOf } from "../../src/store/sqlite-only.js";

/**
 * The SQLite store behind a host's or engine's port, for a test's fixtures and assertions on
 * its connection (`db`, `statement()`), which the port no longer carries.
 */
export function sqliteStore(store: EventStore): SqliteEventStore {
  return sqliteStoreOf(store, "a test's SQLite connection");
}
