import type { CommitNudge } from "./commit-feed.js";
import type { EntityName, EntityRecords, StoredEvent } from "./records.js";
import type { TableHost, TableSql } from "./table-sql.js";
import { token } from "../util/di-token.js";

// What the layers above need of the store, as interfaces: DI tokens resolve to these, so no
// consumer (and no token) depends on the SQLite classes that implement them.

/** A record to append: which entity, and its whole new state. */
export interface RecordUpsert<E extends EntityName = EntityName> {
  readonly entity: E;
  readonly record: EntityRecords[E];
}

/** A stored command receipt. */
export interface CommandReceipt {
  readonly commandId: string;
  readonly operation: string;
  readonly requestHash: string;
  readonly result: unknown;
  readonly firstSequence: number | null;
  readonly lastSequence: number | null;
  readonly createdAt: string;
}

/** What the outbox worker reads on a tick (see `EventStore.outboxAgenda`). */
export interface OutboxAgenda {
  /** As `dueEffects` answers them. */
  readonly due: OutboxEffect[];
  /** The earliest `availableAt` of the pending effects not in `due`, or null when there are none. */
  readonly laterDueAt: number | null;
}

/** An outbox row: a provider effect to carry out after its command committed. */
export interface OutboxEffect {
  readonly seq: number;
  readonly id: string;
  /** Effects in one lane (a thread) run one at a time, in `seq` order. */
  readonly lane: string;
  readonly type: string;
  readonly payload: unknown;
  readonly status: "pending" | "claimed" | "done" | "failed" | "abandoned";
  readonly attempts: number;
  readonly availableAt: number;
  readonly lastError: string | null;
}

/** An outbox effect as a unit of work queues it (its id deterministic: queued once). */
export interface EffectToEnqueue {
  readonly id: string;
  readonly lane: string;
  readonly type: string;
  readonly payload: unknown;
}

/**
 * One transaction of the engine (issue 33), in the shape every backend can serve: reads are
 * promises (a PostgreSQL store answers them on the unit's connection, after writing what the
 * unit buffered), writes are synchronous and may be buffered until the unit's next read, its
 * `flush` or its commit. Reads see the unit's own writes. The table modules open over it
 * (`new ItemsTable(work)`) and run on its connection.
 */
export interface UnitOfWork extends TableHost {
  /** Reads one record by id. */
  get<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E] | null>;
  /** Reads records with a WHERE clause over the entity's indexed columns (as `EventStore.select`). */
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
  /**
   * A command's receipt, or null. It holds the command id until the unit ends: a unit on
   * another connection asking for the same id waits for this one to commit or roll back, then
   * reads what it left (so one id runs once however many nodes are asked at once).
   */
  receipt(commandId: string): Promise<CommandReceipt | null>;
  /** This environment's id (created once with the database, named in thread links). */
  environmentId(): Promise<string>;
  /**
   * Appends upsert events and applies them to the projections. An event's `sequence` may be 0
   * until the unit flushes: read it from the returned objects after `flush` (or after the unit
   * committed), never from the log's newest sequence, which other writers move.
   */
  append(commandId: string | null, upserts: readonly RecordUpsert[], now: string): readonly StoredEvent[];
  /** Stores a command receipt. */
  putReceipt(receipt: CommandReceipt): void;
  /** Adds an effect to the outbox; an existing id is kept (deterministic ids make this idempotent). */
  enqueueEffect(effect: EffectToEnqueue, availableAtMs: number, nowIso: string): void;
  /** Writes what is buffered (the appended events get their sequences); nothing to do on a store that does not buffer. */
  flush(): Promise<void>;
  /** Runs `body` in a nested unit (a savepoint): one that rejects rolls back alone, the outer unit goes on. */
  nested<R>(body: (work: UnitOfWork) => Promise<R>): Promise<R>;
}

/** A store that runs units of work: what the engine's command processor needs of the store. */
export interface UnitOfWorkStore {
  /**
   * Runs `body` in one transaction that may span awaits, and resolves once it committed (a
   * rejection rolls it back). Outermost units run one at a time, in call order.
   */
  transactionAsync<R>(body: (work: UnitOfWork) => Promise<R>): Promise<R>;
}

/**
 * The durable store (`Store`): an append-only event log whose events are record upserts,
 * projections updated in the same transaction, command receipts and the outbox.
 */
export interface EventStore extends TableHost, UnitOfWorkStore {
  /** The table modules' SQL (core/src/store/tables), on this store's connection. */
  readonly tableSql: TableSql;
  /** The database file. */
  readonly file: string;
  /** Whether the store is still open (a loop that outlives a closed store stops on false). */
  isOpen(): boolean;
  /**
   * A number that changes whenever another connection commits to the database (SQLite's
   * `data_version`): what a cache of rows another process may write (credentials) checks.
   */
  dataVersion(): number;
  /** Runs `fn` in one transaction (nested calls become savepoints). Listeners hear events after commit. */
  transaction<T>(fn: () => T): T;
  /**
   * Runs `work` in one transaction that may span awaits (nested calls from inside its async
   * context become savepoints; outermost ones run one at a time, in call order). While one is
   * open, code outside it reads committed state only and may not write. `work` is handed the
   * transaction as a {@link UnitOfWork} (the engine's port); on this store the transaction is
   * also ambient, so the store's own methods called inside it take part in it.
   */
  transactionAsync<T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T>;
  /**
   * Runs a synchronous write made outside any command (autocommit statements, or a
   * `transaction()` of its own) in its turn among the asynchronous transactions: at once when
   * none is open or queued, else after those before it. From inside an open one's own async
   * context it runs there, part of that transaction.
   */
  writeAsync<T>(write: () => T): Promise<T>;
  /**
   * Hears every batch of events after it commits, once, in sequence order with no gap: the
   * ordered stream, for what must see every event's record (the public event feed).
   */
  onCommitted(listener: (events: readonly StoredEvent[]) => void): () => void;
  /**
   * Hears which records each commit changed, without the records: the nudge, for what only
   * needs to read again (waits, timers, the scheduler). May come late or coalesced on a
   * store with several writers; never carries what a listener should not re-read.
   */
  onCommitNudge(listener: (nudge: CommitNudge) => void): () => void;
  /** Appends upsert events and applies them to the projections. Must run inside `transaction`. */
  append(commandId: string | null, upserts: readonly RecordUpsert[], now: string): StoredEvent[];
  /** Reads one record by id. */
  get<E extends EntityName>(entity: E, id: string): EntityRecords[E] | null;
  /** Reads records with a WHERE clause over the entity's indexed columns. */
  select<E extends EntityName>(
    entity: E,
    where: string,
    params?: readonly unknown[],
    suffix?: string,
  ): EntityRecords[E][];
  /** Whether a record matches a WHERE clause (read and cached as `select` reads). */
  exists(entity: EntityName, where: string, params?: readonly unknown[]): boolean;
  /** Counts records matching a WHERE clause. */
  count(entity: EntityName, where: string, params?: readonly unknown[]): number;
  /** The newest event sequence, or 0. */
  lastSequence(): number;
  /** Events after `sequence`, oldest first. */
  eventsAfter(sequence: number, limit?: number): StoredEvent[];
  /** The record as its upsert before the event at `sequence` left it (the same record's previous event), or null. */
  previousUpsert(sequence: number): EntityRecords[EntityName] | null;
  /** The sequence of a record's oldest upsert still reachable from its projection row, or null without a row. */
  firstUpsertSequence(entity: EntityName, id: string): number | null;
  /**
   * Removes records for good (their events, projection rows and the receipts of the commands
   * that wrote them), for retention of records nothing else refers to. Inside `transaction`.
   */
  forget(entity: EntityName, ids: readonly string[]): number;
  /** Reads a command receipt. */
  getReceipt(commandId: string): CommandReceipt | null;
  /** Stores a command receipt. Must run inside `transaction`. */
  putReceipt(receipt: CommandReceipt): void;
  /** Adds an effect to the outbox; an existing id is kept (deterministic ids make this idempotent). */
  enqueueEffect(effect: EffectToEnqueue, nowMs: number, nowIso: string): void;
  /** The oldest unfinished effect of each lane that is due and not already claimed. */
  dueEffects(nowMs: number): OutboxEffect[];
  /** When the next delayed effect becomes due, or null. */
  nextEffectDueAt(): number | null;
  /**
   * `dueEffects` and, in the same statement, when the earliest pending effect among the others
   * becomes due: what the outbox worker's tick reads.
   */
  outboxAgenda(nowMs: number): OutboxAgenda;
  /** Marks an effect claimed. Returns false when another worker got it first. */
  claimEffect(id: string, nowMs: number): boolean;
  /** Settles an effect. */
  settleEffect(id: string, status: "done" | "failed" | "abandoned", error: string | null, nowIso: string): void;
  /** Puts an effect back for a later retry. */
  retryEffect(id: string, availableAt: number, error: string, nowIso: string): void;
  /** Unfinished effects (pending or claimed), oldest first. */
  unfinishedEffects(): OutboxEffect[];
  /** Reads an effect. */
  getEffect(id: string): OutboxEffect | null;
  /** A reactor's last processed sequence. */
  reactorOffset(name: string): number;
  /** Records a reactor's progress (inside the transaction that did the reacting). */
  setReactorOffset(name: string, sequence: number): void;
  /** Rebuilds every projection from the event log (the log is the truth). */
  rebuildProjections(): number;
  /** Closes the database (checkpointing the WAL). */
  close(): void;
}

/**
 * Harness processes recorded while they run (`HarnessProcessLog`), so a host restarted after a
 * crash can stop the process groups its predecessor left behind.
 */
export interface HarnessProcessLedger {
  /** A harness process started. */
  started(pid: number, label: string): void;
  /** A harness process exited. */
  exited(pid: number): void;
  /** Processes recorded by hosts that are no longer running. */
  leftovers(): { pid: number; procStart: string | null }[];
  /** Forgets processes of hosts that are gone. */
  forgetLeftovers(pids: readonly number[]): void;
}

/** DI token: `Store`. */
export const StoreToken = token<EventStore>("Store");

/** DI token: `HarnessProcessLog`. */
export const HarnessProcessLogToken = token<HarnessProcessLedger>("HarnessProcessLog");
