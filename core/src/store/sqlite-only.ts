import type { EventStore } from "./ports.js";
import type { Store } from "./store.js";
import { MissingStoreCapabilityError } from "./table-sql.js";

/**
 * The SQLite store behind a port, for the store's own modules that still speak to its
 * connection synchronously (settings, the harness process log, the FTS5 thread search); any
 * other backend is refused by the capability it lacks. The port itself carries no driver.
 * (Recognised by its dialect and its `statement`, not `instanceof`: this folder's modules
 * import one another in a cycle through store.ts.)
 */
export function sqliteStoreOf(store: EventStore, capability: string): Store {
  if (store.tableSql.dialect === "sqlite" && typeof (store as Partial<Store>).statement === "function")
    return store as Store;
  throw new MissingStoreCapabilityError(capability, store.tableSql.dialect);
}
