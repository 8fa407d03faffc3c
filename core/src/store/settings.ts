import { randomBytes } from "node:crypto";
import type { EventStore } from "./ports.js";
import { sqliteStoreOf } from "./sqlite-only.js";

/** Reads a setting, creating it with `initial()` the first time (atomically). */
export function settingOrCreate(port: EventStore, key: string, initial: () => string): string {
  // Synchronous (hot paths read it without awaiting): SQLite's until the callers await.
  const store = sqliteStoreOf(port, "synchronous settings");
  // Read first: the insert is a write transaction of its own, and this runs on hot paths (every
  // thread link names the environment id), many times per delegation.
  const read = () =>
    store.statement("SELECT value FROM settings WHERE key = ?").get(key) as { value: string } | undefined;
  const existing = read();
  if (existing !== undefined) return existing.value;
  store.statement("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING").run(key, initial());
  return read()!.value;
}

/** Each store's environment id, once read: it is created once and never changes. */
const environmentIds = new WeakMap<EventStore, string>();

/**
 * This home's environment id: stable for the life of the database, named in thread links (a
 * listing names it once per thread, so it is read from the settings table once per store).
 */
export function environmentId(store: EventStore): string {
  let id = environmentIds.get(store);
  if (id === undefined) {
    id = settingOrCreate(store, "environment_id", () => `env_${randomBytes(8).toString("hex")}`);
    environmentIds.set(store, id);
  }
  return id;
}
