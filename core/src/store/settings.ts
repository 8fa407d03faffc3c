import { randomBytes } from "node:crypto";
import type { EventStore } from "./ports.js";

/** Reads a setting, creating it with `initial()` the first time (atomically). */
export function settingOrCreate(store: EventStore, key: string, initial: () => string): string {
  // Read first: the insert is a write transaction of its own, and this runs on hot paths (every
  // thread link names the environment id), many times per delegation.
  const read = () => store.statement("SELECT value FROM settings WHERE key = ?").get(key) as { value: string } | undefined;
  const existing = read();
  if (existing !== undefined) return existing.value;
  store.statement("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING").run(key, initial());
  return read()!.value;
}

/** This home's environment id: stable for the life of the database, named in thread links. */
export function environmentId(store: EventStore): string {
  return settingOrCreate(store, "environment_id", () => `env_${randomBytes(8).toString("hex")}`);
}
