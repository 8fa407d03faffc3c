import type { TableModule } from "../store/table-sql.js";
import type { CommandReceipt, EventStore, OutboxAgenda, OutboxEffect } from "../store/ports.js";
import type { EntityName, EntityRecords, StoredEvent } from "../store/records.js";

/**
 * Anything that can read projections: a command context (inside its command's transaction) or
 * {@link storeReader} over the engine's store (outside any). Every read is a promise, since a
 * PostgreSQL store cannot answer one synchronously; the same view code serves both.
 */
export interface ProjectionReader {
  /** Reads one record by id. */
  get<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E] | null>;
  /** Reads records with a WHERE clause over the entity's indexed columns. */
  select<E extends EntityName>(
    entity: E,
    where: string,
    params?: readonly unknown[],
    suffix?: string,
  ): Promise<EntityRecords[E][]>;
  /** Counts records matching a WHERE clause. */
  count(entity: EntityName, where: string, params?: readonly unknown[]): Promise<number>;
  /** Whether a record matches a WHERE clause. */
  exists(entity: EntityName, where: string, params?: readonly unknown[]): Promise<boolean>;
  /** A table of the store (core/src/store/tables), for reads that are not records'. */
  table<T>(open: TableModule<T>): T;
}

/**
 * What code outside any command reads of the committed state (`Engine.reader`): the projections,
 * as a command context reads them, and the log and receipts, which only committed state has.
 * Every read is a promise, as on a PostgreSQL store; nothing outside core/src/store and the
 * engine's transaction reads the store synchronously (the lint rule says so).
 */
export interface CommittedReader extends ProjectionReader {
  /** The newest committed event's sequence, or 0. */
  lastSequence(): Promise<number>;
  /** Committed events after `sequence`, oldest first. */
  eventsAfter(sequence: number, limit?: number): Promise<StoredEvent[]>;
  /** The record as it was before the event at `sequence` (that record's previous upsert), or null. */
  previousUpsert(sequence: number): Promise<EntityRecords[EntityName] | null>;
  /** The sequence of a record's oldest upsert still reachable from its projection row, or null without a row. */
  firstUpsertSequence(entity: EntityName, id: string): Promise<number | null>;
  /** The receipt of a command that committed, or null. */
  receipt(commandId: string): Promise<CommandReceipt | null>;
  /** The oldest unfinished effect of each lane that is due at `nowMs` and not claimed. */
  dueEffects(nowMs: number): Promise<OutboxEffect[]>;
  /** The due effects and when the next other one becomes due, in one read (see `EventStore.outboxAgenda`). */
  outboxAgenda(nowMs: number): Promise<OutboxAgenda>;
  /** The outbox's unfinished effects (pending or claimed), oldest first. */
  unfinishedEffects(): Promise<OutboxEffect[]>;
  /** One outbox effect, or null. */
  effect(id: string): Promise<OutboxEffect | null>;
}

/** A {@link CommittedReader} over a store, for code outside a command (views, schedulers). */
export function storeReader(store: EventStore): CommittedReader {
  return {
    lastSequence: async () => store.lastSequence(),
    eventsAfter: async (sequence, limit) => store.eventsAfter(sequence, limit),
    previousUpsert: async (sequence) => store.previousUpsert(sequence),
    firstUpsertSequence: async (entity, id) => store.firstUpsertSequence(entity, id),
    receipt: async (commandId) => store.getReceipt(commandId),
    dueEffects: async (nowMs) => store.dueEffects(nowMs),
    outboxAgenda: async (nowMs) => store.outboxAgenda(nowMs),
    unfinishedEffects: async () => store.unfinishedEffects(),
    effect: async (id) => store.getEffect(id),
    get: async (entity, id) => store.get(entity, id),
    select: async (entity, where, params, suffix) => store.select(entity, where, params, suffix),
    count: async (entity, where, params) => store.count(entity, where, params),
    exists: async (entity, where, params) => store.exists(entity, where, params),
    table: (open) => new open(store),
  };
}
