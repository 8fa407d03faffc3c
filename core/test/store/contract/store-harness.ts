import type { CommandContext } from "../../../src/engine/command-context.js";
import type { Command, CommandOutcome } from "../../../src/engine/ports.js";
import type { CommandReceipt, OutboxAgenda, OutboxEffect, RecordUpsert } from "../../../src/store/ports.js";
import type { EntityName, EntityRecords, StoredEvent } from "../../../src/store/records.js";
import type { TableHost } from "../../../src/store/table-sql.js";
import type { ThreadSearchCatchUp } from "../../../src/store/thread-search-index.js";

// What the store contract suite asks of a backend. Every store call of the suite goes through
// one of these objects, and every read is already a promise: when the port becomes asynchronous
// (issue 33), only the backends' harnesses change, and the suite keeps its `await`s.

/** An outbox effect as a command queues it. */
export interface EffectToQueue {
  readonly id: string;
  readonly lane: string;
  readonly type: string;
  readonly payload: unknown;
}

/**
 * The writes of one unit of work. Synchronous, as the port keeps them (buffered writes); a
 * body that throws rolls back everything it wrote.
 */
export interface UnitOfWork {
  /** Appends upsert events and applies them to the projections. */
  append(commandId: string | null, upserts: readonly RecordUpsert[]): readonly StoredEvent[];
  /**
   * Removes records for good: their events, rows and the receipts of the commands that wrote
   * them. No count: a backend that buffers its writes runs it at its flush.
   */
  forget(entity: EntityName, ids: readonly string[]): void;
  putReceipt(receipt: CommandReceipt): void;
  /** Queues an effect, due `delayMs` after the harness clock's now. */
  enqueueEffect(effect: EffectToQueue, delayMs?: number): void;
  /** A nested unit of work (a savepoint): one that throws rolls back alone. */
  nested<R>(body: (work: UnitOfWork) => R): R;
}

/**
 * The unit of work of a transaction that may await between its writes (issue 33's asynchronous
 * transaction): the same synchronous writes, reads of its own uncommitted state, and nested
 * units (savepoints) that are themselves asynchronous.
 */
export interface AsyncUnitOfWork extends Omit<UnitOfWork, "nested"> {
  /** What a table module (core/src/store/tables) opens over inside this unit of work: `new ItemsTable(work.tableHost)`. */
  readonly tableHost: TableHost;
  /** Reads one record as this unit of work sees it (its own writes included). */
  get<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E] | null>;
  /** A nested unit of work (a savepoint): one that rejects rolls back alone. */
  nested<R>(body: (work: AsyncUnitOfWork) => Promise<R>): Promise<R>;
}

/** Every row of some tables, by table name, in a stable order. */
export type TableRows = Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>>;

/** One store open on one database, as the suite drives it. */
export interface StoreHarness {
  /** The backend's name (the suite's `describe.each` label). */
  readonly backend: string;
  /** The time effects are queued and claimed at (the engine's clock too). */
  readonly nowMs: () => number;
  transaction<R>(body: (work: UnitOfWork) => R): Promise<R>;
  /**
   * A unit of work that may await between its writes. Such units run one at a time, in call
   * order; while one is open, the harness's other reads see only what has committed.
   */
  transactionAsync<R>(body: (work: AsyncUnitOfWork) => Promise<R>): Promise<R>;
  /** What a table module opens over outside a unit of work: reads see what has committed, a write commits alone. */
  readonly tableHost: TableHost;
  /** Hears every batch of events after it commits; returns the unsubscribe. */
  onCommitted(listener: (events: readonly StoredEvent[]) => void): () => void;

  get<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E] | null>;
  lastSequence(): Promise<number>;
  eventsAfter(sequence: number, limit?: number): Promise<readonly StoredEvent[]>;
  receipt(commandId: string): Promise<CommandReceipt | null>;

  dueEffects(nowMs: number): Promise<readonly OutboxEffect[]>;
  nextEffectDueAt(): Promise<number | null>;
  outboxAgenda(nowMs: number): Promise<OutboxAgenda>;
  claimEffect(id: string, nowMs: number): Promise<boolean>;
  settleEffect(id: string, status: "done" | "failed" | "abandoned", error: string | null): Promise<void>;
  retryEffect(id: string, availableAtMs: number, error: string): Promise<void>;
  unfinishedEffects(): Promise<readonly OutboxEffect[]>;
  effect(id: string): Promise<OutboxEffect | null>;

  /**
   * The named query of a thread search (`ThreadSearchTable.page`): the ids of a project's
   * threads whose title or messages hold every word of `text`, best first.
   */
  searchThreads(projectId: string, text: string): Promise<readonly string[]>;
  /**
   * One catch-up of the store's thread search index, through at most `maxEvents` events (a
   * search catches up through everything, batch after batch): where the index stands after it.
   */
  catchUpThreadSearch(maxEvents: number): Promise<ThreadSearchCatchUp>;

  /** Rebuilds every projection from the log; how many events it applied. */
  rebuildProjections(): Promise<number>;
  /** Every row of every entity's projection table (every column), by table, ordered by id. */
  projections(): Promise<TableRows>;
  /** Every row of every table the store keeps (the schema's bookkeeping aside), by table. */
  tables(): Promise<TableRows>;
  /** The schema version the database is at. */
  schemaVersion(): Promise<number>;
  /** The schema, as comparable lines (tables, columns, indexes), in a stable order. */
  schema(): Promise<readonly string[]>;

  /** The real engine over this store: `TransactionalEngine.execute`. */
  execute<R>(command: Command<R>): Promise<CommandOutcome<R>>;
  /** `TransactionalEngine.apply`. */
  apply<R>(change: (ctx: CommandContext) => R): Promise<R>;
  /** `TransactionalEngine.applyEach`. */
  applyEach(
    changes: readonly ((ctx: CommandContext) => void)[],
    onError: (error: unknown, index: number) => void,
  ): Promise<void>;
}

/**
 * A database at the schema version before the newest, written as that version's store wrote
 * (its own tables and columns), for the migration from the previous version.
 */
export interface PreviousVersionDatabase {
  readonly version: number;
  append(commandId: string | null, upserts: readonly RecordUpsert[]): void;
  putReceipt(receipt: CommandReceipt): void;
  enqueueEffect(effect: EffectToQueue): void;
  /** Every row of every table, as `StoreHarness.tables`. */
  tables(): Promise<TableRows>;
  /** Closes it and opens it with the newest store, which migrates it. */
  upgrade(): Promise<StoreHarness>;
}

/**
 * A store in a process of its own on a harness's database, which a test kills with SIGKILL:
 * each call resolves once what it did committed there (the process acknowledged it).
 */
export interface StoreProcess {
  append(commandId: string | null, upserts: readonly RecordUpsert[]): Promise<readonly number[]>;
  enqueueEffect(effect: EffectToQueue, nowMs: number): Promise<void>;
  claimEffect(id: string, nowMs: number): Promise<boolean>;
  /**
   * Opens a unit of work that may await, appends `upserts` in it and never finishes it; resolves
   * once they are appended (uncommitted).
   */
  appendInOpenTransaction(commandId: string | null, upserts: readonly RecordUpsert[]): Promise<void>;
  /** Appends one item event per commit until killed; `onAck` hears each committed sequence. */
  appendUntilKilled(onAck: (sequence: number) => void): void;
  /**
   * Runs a command through the process's own engine: its handler writes `upserts` and answers
   * the command's `request`. `starting` resolves just before the engine is called; with `hold`,
   * `holding` resolves once the handler wrote and waits inside its transaction for `release`.
   */
  execute(command: ProcessCommand): ProcessExecution;
  /** kill -9, and waits for the process to be gone. */
  kill(): Promise<void>;
}

/** A command a store process runs (see {@link StoreProcess.execute}). */
export interface ProcessCommand {
  readonly commandId: string;
  readonly operation: string;
  readonly request: Record<string, unknown>;
  readonly upserts: readonly RecordUpsert[];
  readonly hold: boolean;
}

/** A command under way in a store process. */
export interface ProcessExecution {
  readonly starting: Promise<void>;
  readonly holding: Promise<void>;
  /** The engine's outcome, whether the handler ran in this process, or the error it threw. */
  readonly settled: Promise<
    | { readonly outcome: CommandOutcome<unknown>; readonly ran: boolean }
    | { readonly error: { readonly code: string | null; readonly message: string } }
  >;
  /** Lets a held handler return. */
  release(): void;
}

/** The parts of the port a backend may not have yet. */
export interface BackendFeatures {
  /** The real engine over the store (`execute`, `apply`, `applyEach`; store processes' `execute`). */
  readonly engine: boolean;
}

/**
 * A backend the contract suite runs on. Each `open*` makes a new database of its own (a
 * folder, a schema) that `closeAll` removes.
 */
export interface StoreBackend {
  readonly name: string;
  /**
   * What the backend can serve yet; a test of what it lacks runs only where present (the
   * contract README lists, per backend, the tests that do not run and why).
   */
  readonly has: BackendFeatures;
  /** The newest schema version this backend's migrations reach. */
  readonly newestVersion: number;
  /** A new empty database at the newest version, and a store open on it. */
  open(): Promise<StoreHarness>;
  /** Closes `harness`'s store and opens its database again: a restart. */
  reopen(harness: StoreHarness): Promise<StoreHarness>;
  /** A second store on `harness`'s database, as another process (or node) holds one. */
  connectAgain(harness: StoreHarness): Promise<StoreHarness>;
  /** A new database brought to the newest version one migration at a time, each by a store of its own. */
  openStepByStep(): Promise<StoreHarness>;
  /** A store in another process on `harness`'s database, to be killed mid-work. */
  spawnStoreProcess(harness: StoreHarness): Promise<StoreProcess>;
  /**
   * The older schema versions `openPreviousVersion` can create, newest first: the version
   * before the newest at least, and as many before it as the backend's migrations reach (a
   * backend whose first version is its baseline lists what it has).
   */
  readonly previousVersions: readonly number[];
  /** A new database at `version` (one of `previousVersions`; by default the first). */
  openPreviousVersion(version?: number): Promise<PreviousVersionDatabase>;
  /** Closes every store this backend opened (kills its processes) and removes their databases. */
  closeAll(): Promise<void>;
}
