import type { EventStore, UnitOfWork } from "./ports.js";
import { environmentId } from "./settings.js";

/**
 * The SQLite store's transaction as the engine's {@link UnitOfWork}: every call goes to the
 * store's own synchronous method, which runs in the transaction the calling code is part of
 * (the store's asynchronous transactions are ambient, found by async context). So the unit
 * runs exactly the statements the store ran before the port existed: nothing is buffered
 * here, and `flush` has nothing to do.
 */
export function ambientUnitOfWork(store: EventStore): UnitOfWork {
  return {
    get tableSql() {
      return store.tableSql;
    },
    get: async (entity, id) => store.get(entity, id),
    select: async (entity, where, params, suffix) => store.select(entity, where, params, suffix),
    count: async (entity, where, params) => store.count(entity, where, params),
    exists: async (entity, where, params) => store.exists(entity, where, params),
    // The store's write lock (BEGIN IMMEDIATE) already holds every command id of the unit.
    receipt: async (commandId) => store.getReceipt(commandId),
    environmentId: async () => environmentId(store),
    append: (commandId, upserts, now) => store.append(commandId, upserts, now),
    putReceipt: (receipt) => store.putReceipt(receipt),
    enqueueEffect: (effect, availableAtMs, nowIso) => store.enqueueEffect(effect, availableAtMs, nowIso),
    flush: async () => undefined,
    // Called from inside the unit's async context, the store makes it a savepoint.
    nested: (body) => store.transactionAsync(body),
  };
}
