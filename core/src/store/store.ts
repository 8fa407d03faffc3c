import { AsyncLocalStorage } from "node:async_hooks";
import Database from "better-sqlite3";
import { AsyncTransactionConflictError, AsyncTransactionLevel, FifoMutex } from "./async-transaction.js";
import { ENTITY_NAMES, ENTITY_TABLES, type EntityTable } from "./entity-tables.js";
import { IdentityMap, type ProjectionRow, queryKey, key as rowKey } from "./identity-map.js";
import { CommitFeed, type CommitNudge } from "./commit-feed.js";
import { CommittedReads } from "./committed-reads.js";
import { CommittedRows } from "./committed-rows.js";
import { migrate } from "./migrations.js";
import type { EntityName, EntityRecords, StoredEvent } from "./records.js";
import { ambientUnitOfWork } from "./ambient-unit-of-work.js";
import type { CommandReceipt, EventStore, OutboxAgenda, OutboxEffect, RecordUpsert, UnitOfWork } from "./ports.js";
import type { TableSql } from "./table-sql.js";
import { forgetSearchRows, THREAD_SEARCH_STALE_SQL } from "./thread-search-index.js";
import { WalCheckpointer } from "./wal-checkpointer.js";
import { type BufferedRow, EventInserts, type FlushWriter, RowUpserts, WriteBuffer } from "./write-buffer.js";
import { isStoreBusy, StoreBusyError } from "../util/store-busy.js";
import { ensurePrivateFile } from "../util/private-files.js";

export type { CommandReceipt, OutboxEffect, RecordUpsert } from "./ports.js";

/**
 * Frames the WAL may hold before a commit checkpoints it when checkpoints cannot run on their
 * worker thread (an in-memory store, or the worker failed). SQLite's default is 1,000; a
 * one-event command dirties about six pages, mostly the same hot ones, so 4,000 copies each
 * back once per ~700 commits instead of ~170.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 4_000;

/**
 * Frames past which the writing connection checkpoints by itself although the worker does it
 * (64 MiB of WAL): the worker hears a request only when the event loop yields, so a long
 * synchronous run of commits (a bulk import, a bench loop) would otherwise grow the WAL without
 * bound (measured: 2.3 GB over 100,000 one-event commits). The worker's checkpoints start the WAL
 * over every ~1,500 frames, so a yielding writer never gets here.
 */
export const WAL_BACKSTOP_FRAMES = 16_000;

/** The code of the process warning emitted when the checkpoint worker fails. */
export const WAL_CHECKPOINT_FALLBACK_WARNING = "SWITCHYARD_WAL_CHECKPOINT_FALLBACK";

/** The largest the WAL file is left after it starts over (64 MiB). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * How long a write waits for another connection's write lock before it fails with `store_busy`
 * (SQLite's busy handler; better-sqlite3 blocks the event loop meanwhile). Other connections
 * hold it for milliseconds: the CLI's one-shot commands, a second process's migration.
 */
export const STORE_BUSY_TIMEOUT_MS = 5_000;

/** Options for {@link Store}. */
export interface StoreOptions {
  /** How long a write waits for the write lock (default {@link STORE_BUSY_TIMEOUT_MS}). */
  readonly busyTimeoutMs?: number;
  /**
   * Hears the SQL of every statement this connection runs, with its parameters bound, as SQLite
   * is about to run it: the ones inside `append`, `transaction` (its BEGIN IMMEDIATE, SAVEPOINT,
   * RELEASE and COMMIT too) and `db.exec`/`db.pragma`, not the checkpoint worker's connection.
   * For load-independent counts (see store-traffic.ts). Absent, the driver does nothing for it.
   */
  readonly onStatement?: (sql: string) => void;
}

/**
 * What tells a result read outside a transaction still holds (see CommittedReads): the rows this
 * connection changed (a counter of the connection's, read without touching the file) and the
 * commits of others (`data_version`, which opens and ends a read transaction on the file: the
 * costly half, read once per event-loop turn, see `Store.dataVersion`).
 */
const TOTAL_CHANGES_SQL = "SELECT total_changes()";
const DATA_VERSION_SQL = "PRAGMA data_version";

/** The sequence the events table last assigned (AUTOINCREMENT's: a forgotten event's is not reused), or null. */
const LAST_ASSIGNED_SEQUENCE_SQL = "SELECT seq FROM sqlite_sequence WHERE name = 'events'";

const PREVIOUS_OF_SQL = "SELECT previous_sequence FROM events WHERE sequence = ?";
const PREVIOUS_DATA_SQL =
  "SELECT p.data FROM events e JOIN events p ON p.sequence = e.previous_sequence WHERE e.sequence = ?";

/** Each entity's table name as a word, for `Store.tablesNamedIn`. */
const TABLE_NAME_PATTERNS: readonly (readonly [EntityName, RegExp])[] = ENTITY_NAMES.map((name) => [
  name,
  new RegExp(`\\b${ENTITY_TABLES[name].table}\\b`, "i"),
]);

/** For a write that names no entity table. */
const NO_TABLES: ReadonlySet<EntityName> = new Set();

/** A nested asynchronous transaction that outlived the one it was nested in (which rolled back). */
function endedUnder(cause: unknown): AsyncTransactionConflictError {
  return new AsyncTransactionConflictError(
    "transactionAsync",
    "the transaction it was nested in ended before it (its work did not await it) and rolled back",
    cause,
  );
}

/** Where `processCommits` is shared between copies of this module. */
const PROCESS_COMMITS = Symbol.for("switchyard.store.processCommits");

/**
 * Commits by every store of this process (and hand-outs of a raw connection, which may write), so
 * a store can tell that another connection in the same process committed during an event-loop
 * turn without asking SQLite (see `Store.dataVersionThisTurn`). Kept on `globalThis` under a
 * registered symbol: two copies of this module in one process (a test's sources beside a built
 * package) must count each other's commits.
 */
const processCommits = processCommitCounter();

function processCommitCounter(): { count: number } {
  const shared = globalThis as { [PROCESS_COMMITS]?: { count: number } };
  return (shared[PROCESS_COMMITS] ??= { count: 0 });
}

/** How a refusal says where the running code is. */
const OUTSIDE_OPEN_ASYNC =
  "from outside the asynchronous transaction open on this connection (await it inside transactionAsync, or after it)";

/** The page cache while projections are rebuilt (negative: KiB), 64 MiB; SQLite's default is 2 MiB. */
const REBUILD_CACHE_KIB = -65_536;

/** Events read per statement while projections are rebuilt. */
export const REPLAY_BATCH = 5_000;

interface PreparedEntity {
  readonly spec: EntityTable<EntityName>;
  /** Binds positionally: the entity's columns in `columns` order, then `data`, then `last_sequence`. */
  readonly upsert: Database.Statement;
  /** Multi-row upserts of whole rows, for a flush that writes several of the table's rows. */
  readonly rowUpserts: RowUpserts;
  /** The sequence of the record's latest event (its row's `last_sequence`), plucked. */
  readonly lastSequence: Database.Statement;
  /** A row as `[last_sequence, ...columns, data]` (raw), or undefined when the record has none. */
  readonly current: Database.Statement;
  /** UPDATE statements by the bit mask of the columns they set (besides data and last_sequence). */
  readonly updates: Map<number, Database.Statement>;
  readonly columnNames: readonly string[];
  readonly remove: Database.Statement;
  readonly get: Database.Statement;
  readonly columns: readonly ((record: EntityRecords[EntityName]) => string | number | null)[];
}

/**
 * The durable store: an append-only event log whose events are record upserts, projections
 * updated in the same transaction, command receipts and the outbox. One SQLite file in WAL
 * mode; every write is synchronous, so a transaction never interleaves with another.
 */
export class Store implements EventStore {
  private readonly database: Database.Database;
  readonly file: string;
  private readonly entities = new Map<EntityName, PreparedEntity>();
  /** An event's previous_sequence, plucked. */
  private readonly previousOf: Database.Statement;
  /** The data of the event an event's previous_sequence names, plucked. */
  private readonly previousData: Database.Statement;
  private readonly feed = new CommitFeed();
  private pending: StoredEvent[] = [];
  /** The rows the outermost `transaction` under way has read or written; null outside one. */
  private identity: IdentityMap | null = null;
  /** The outermost `transaction` under way's writes not yet in the file; null outside one. */
  private buffer: WriteBuffer | null = null;
  private readonly eventInserts: EventInserts;
  /** What every transaction's buffer flushes through (made once: a transaction is hot). */
  private readonly flushWriter: FlushWriter = {
    exec: (sql) => this.database.exec(sql),
    insertEvents: (events) => this.eventInserts.run(events),
    writeRows: (rows) => this.writeBufferedRows(rows),
  };
  private readonly readLastAssignedSequence = (): number => this.lastAssignedSequence();
  /** Rows as this connection's transactions committed them, for the next transactions' reads. */
  private readonly committedRows = new CommittedRows();
  /**
   * `data_version` as read inside the outermost transaction under way, after its BEGIN IMMEDIATE
   * (while it holds the write lock nobody else commits, so one read serves the whole
   * transaction); null before its first read, and outside one.
   */
  private transactionDataVersion: number | null = null;
  /** Query results read outside transactions, reused while nothing can have changed them. */
  private readonly committedReads = new CommittedReads(
    () => `${this.writerStatement(TOTAL_CHANGES_SQL).pluck().get() as number}:${this.dataVersionThisTurn()}`,
  );
  /** The `data_version` last read in this event-loop turn; null before the turn's first read. */
  private turnDataVersion: number | null = null;
  /** `processCommits.count` when `turnDataVersion` was read, moved on by this store's own commits. */
  private turnProcessCommits = 0;
  private readonly endDataVersionTurn = (): void => {
    this.turnDataVersion = null;
  };
  private readonly statements = new Map<string, Database.Statement>();
  /** What `tablesNamedIn` found in each statement's SQL. */
  private readonly namedTables = new Map<string, ReadonlySet<EntityName> | "all">();
  /** Checkpoints the WAL off the event loop; null for an in-memory store. */
  readonly checkpointer: WalCheckpointer | null;
  /** The level of the open asynchronous transaction the running code is part of, if any. */
  private readonly asyncLevel = new AsyncLocalStorage<AsyncTransactionLevel>();
  /** Outermost asynchronous transactions, one at a time (one connection holds one transaction). */
  private readonly asyncTransactions = new FifoMutex();
  /** The open asynchronous transaction's outermost level and innermost savepoint; null without one. */
  private asyncOutermost: AsyncTransactionLevel | null = null;
  private asyncInnermost: AsyncTransactionLevel | null = null;
  /** How deep the synchronous `transaction()` calls under way are nested (0: none). */
  private syncDepth = 0;
  /** The read-only connection that serves reads from outside an open asynchronous transaction. */
  private committedReader: Database.Database | null = null;
  private readonly committedReaderStatements = new Map<string, Database.Statement>();
  private readonly onStatement: ((message?: unknown) => void) | undefined;

  /** How long a write waits for the write lock before failing with `store_busy`. */
  readonly busyTimeoutMs: number;

  /**
   * The table modules' SQL, through {@link statement}: the prepared-statement cache, the open
   * transaction (its buffered writes flushed first) or, from outside an open asynchronous one,
   * the committed reader. Each statement runs in the caller's turn, before its promise returns.
   */
  readonly tableSql: TableSql = {
    dialect: "sqlite",
    all: async <Row>(sql: string, params: readonly unknown[] = []) => this.statement(sql).all(...params) as Row[],
    get: async <Row>(sql: string, params: readonly unknown[] = []) =>
      this.statement(sql).get(...params) as Row | undefined,
    run: async (sql: string, params: readonly unknown[] = []) => ({
      changes: this.statement(sql).run(...params).changes,
    }),
    runNow: (sql: string, params: readonly unknown[] = []) => ({ changes: this.statement(sql).run(...params).changes }),
    isUniqueViolation: (error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
    },
  };

  /**
   * The connection itself, for tests and fixtures. Rows written through it would not reach the
   * store's row cache (`CommittedRows`), so handing it out forgets that cache.
   */
  get db(): Database.Database {
    // What the caller reads or writes through it must meet the transaction's writes in the file.
    this.buffer?.flushFor("all", true);
    this.committedRows.clear();
    // Other stores of this process may be reading this turn: whatever is written through it,
    // they read `data_version` again.
    this.committedInProcess();
    return this.database;
  }

  constructor(file: string, options: StoreOptions = {}) {
    this.file = file;
    this.busyTimeoutMs = options.busyTimeoutMs ?? STORE_BUSY_TIMEOUT_MS;
    // Created 0600 in a 0700 folder before SQLite opens it: SQLite would create it 0644 (less
    // the umask), and gives the WAL and shared-memory files the database file's mode.
    if (file !== ":memory:") ensurePrivateFile(file);
    // better-sqlite3's `verbose` logs each statement it steps, so it counts what SQLite ran,
    // including the transaction helper's own statements, which wrapping `statement()` would miss.
    // Its argument is always the SQL string (typed `unknown` for console.log's sake).
    const verbose = options.onStatement as ((message?: unknown) => void) | undefined;
    this.onStatement = verbose;
    this.database = new Database(file, { timeout: this.busyTimeoutMs, verbose });
    this.database.pragma("journal_mode = WAL");
    // NORMAL is durable against a process crash (kill -9) in WAL mode; only an OS crash could
    // lose the last transactions, and FULL costs a sync per commit.
    this.database.pragma("synchronous = NORMAL");
    // A checkpoint copies every page the WAL holds back into the database and syncs both files.
    // With a file, it runs on a worker thread's connection (WalCheckpointer), so no commit here
    // waits for it; this connection checkpoints by itself only past WAL_BACKSTOP_FRAMES, which
    // the worker's checkpoints never let the WAL reach unless the event loop stops yielding.
    // Crash recovery is unchanged: committed frames in the WAL are replayed when the file is
    // next opened. In memory, or once the worker failed, this connection checkpoints
    // automatically every WAL_AUTOCHECKPOINT_PAGES frames.
    const automatic = () => {
      if (this.database.open) this.database.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    };
    // Correct either way, but commits pay for checkpoints again: said once, where an operator
    // sees it (the store has no logger of its own).
    const workerFailed = (error: Error) => {
      process.emitWarning(`WAL checkpoints for ${file} fell back to the writing connection: ${error.message}`, {
        code: WAL_CHECKPOINT_FALLBACK_WARNING,
      });
      automatic();
    };
    this.checkpointer = file === ":memory:" ? null : new WalCheckpointer(file, workerFailed);
    if (this.checkpointer === null) automatic();
    else this.database.pragma(`wal_autocheckpoint = ${WAL_BACKSTOP_FRAMES}`);
    // A burst of commits (or one large transaction) can outrun the worker; once the WAL starts
    // over, its file is cut back to this size instead of keeping the burst's.
    this.database.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    this.database.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    this.guardBusy(() => migrate(this.database));
    // The version the first transactions' rows are known under (see CommittedRows).
    this.committedRows.checked(this.dataVersion());
    this.previousOf = this.database.prepare(PREVIOUS_OF_SQL).pluck();
    this.previousData = this.database.prepare(PREVIOUS_DATA_SQL).pluck();
    for (const name of ENTITY_NAMES) this.entities.set(name, this.prepareEntity(name));
    this.eventInserts = new EventInserts(this.database);
    // Transactions begin with BEGIN IMMEDIATE: it takes the write lock first, where SQLite's busy handler waits for another
    // connection's commit. A deferred BEGIN reads first and upgrades at its first write, and an
    // upgrade that finds the lock taken (a CLI process issuing a token) fails at once with
    // SQLITE_BUSY, busy timeout or not: that failed agent turns with "database is locked".
    // Readers never wait: WAL readers take no lock a writer needs, and reads run outside
    // transactions. Nested calls are savepoints, opened only when something must reach the
    // file inside them (see WriteBuffer).
  }

  /** Runs `fn`, turning SQLite's "database is locked" into a typed `store_busy` error. */
  private guardBusy<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (isStoreBusy(error) && !(error instanceof StoreBusyError))
        throw new StoreBusyError(this.file, this.busyTimeoutMs, error);
      throw error;
    }
  }

  /**
   * A prepared statement, cached by its SQL (preparing is far dearer than running). From outside
   * an open asynchronous transaction, a read runs on the committed reader (see `transactionAsync`)
   * and a write is refused.
   */
  statement(sql: string): Database.Statement {
    if (!this.outsideAsyncTransaction()) {
      const statement = this.writerStatement(sql);
      // Inside a transaction its buffered writes reach the file first, where the SQL can see them.
      this.buffer?.flushFor(this.tablesNamedIn(sql), !statement.readonly);
      return statement;
    }
    if (!this.writerStatement(sql).readonly)
      throw new AsyncTransactionConflictError("statement", `${sql} writes ${OUTSIDE_OPEN_ASYNC}`);
    return this.committedReaderStatement(sql);
  }

  /**
   * The entity tables a statement names (whose buffered rows it could read), or "all" when it
   * names the event log (whose buffered events it could read). A table's name as a word: a
   * column or alias that happens to share it only costs an early flush.
   */
  private tablesNamedIn(sql: string): ReadonlySet<EntityName> | "all" {
    let named = this.namedTables.get(sql);
    if (named === undefined) {
      if (/\bevents\b/i.test(sql)) named = "all";
      else {
        const tables = new Set<EntityName>();
        for (const [name, pattern] of TABLE_NAME_PATTERNS) if (pattern.test(sql)) tables.add(name);
        named = tables;
      }
      this.namedTables.set(sql, named);
    }
    return named;
  }

  /** A statement of the writing connection, cached by its SQL. */
  private writerStatement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private prepareEntity(name: EntityName): PreparedEntity {
    const spec = ENTITY_TABLES[name] as EntityTable<EntityName>;
    const columns = Object.keys(spec.columns);
    // project() reads a row's id as its first column.
    if (columns[0] !== "id") throw new Error(`${spec.table}: the first column must be id, not ${columns[0]}`);
    const all = [...columns, "data", "last_sequence"];
    const updates = all.filter((c) => c !== "id").map((c) => `${c} = excluded.${c}`);
    // Positional parameters: binding by name looks every column up on an object per upsert.
    const upsert = this.writerStatement(
      `INSERT INTO ${spec.table} (${all.join(", ")}) VALUES (${all.map(() => "?").join(", ")}) ON CONFLICT(id) DO UPDATE SET ${updates.join(", ")}`,
    );
    const get = this.writerStatement(`SELECT data FROM ${spec.table} WHERE id = ?`);
    const remove = this.writerStatement(`DELETE FROM ${spec.table} WHERE id = ?`);
    const lastSequence = this.database.prepare(`SELECT last_sequence FROM ${spec.table} WHERE id = ?`).pluck();
    const current = this.database
      .prepare(`SELECT last_sequence, ${columns.join(", ")}, data FROM ${spec.table} WHERE id = ?`)
      .raw(true);
    return {
      spec,
      upsert,
      rowUpserts: new RowUpserts(this.database, spec.table, columns),
      lastSequence,
      current,
      updates: new Map(),
      columnNames: columns,
      get,
      remove,
      columns: columns.map((column) => spec.columns[column]!),
    };
  }

  /**
   * Runs `fn` in one transaction (nested calls become savepoints). Listeners hear events after
   * commit. Inside it, `get` answers from the rows the transaction already read or wrote.
   */
  transaction<T>(fn: () => T): T {
    this.assertMayWrite("transaction");
    if (!this.database.inTransaction) return this.outermostSync(fn);
    const buffer = this.buffer!;
    const before = this.pending.length;
    this.syncDepth += 1;
    buffer.beginLevel();
    try {
      const result = fn();
      buffer.releaseLevel();
      return result;
    } catch (error) {
      // A savepoint that rolled back took its events with it: listeners must not hear them.
      this.rollbackLevel(buffer, before);
      throw error;
    } finally {
      this.syncDepth -= 1;
    }
  }

  private outermostSync<T>(fn: () => T): T {
    this.transactionStarted();
    this.syncDepth += 1;
    let result: T;
    try {
      this.writerStatement("BEGIN IMMEDIATE").run();
      result = fn();
      this.commitBuffered();
    } catch (error) {
      if (this.database.open && this.database.inTransaction) this.database.exec("ROLLBACK");
      this.pending = [];
      if (isStoreBusy(error) && !(error instanceof StoreBusyError))
        throw new StoreBusyError(this.file, this.busyTimeoutMs, error);
      throw error;
    } finally {
      this.syncDepth -= 1;
      this.identity = null;
      this.buffer = null;
    }
    this.committed();
    return result;
  }

  /**
   * Writes what the outermost transaction buffered, commits, and hands its rows (and the last
   * sequence it assigned) to the next transactions.
   */
  private commitBuffered(): void {
    const buffer = this.buffer!;
    buffer.flushFor("all", false);
    this.guardBusy(() => this.writerStatement("COMMIT").run());
    this.committedRows.committed(this.identity!.entries());
    if (buffer.lastAssigned !== null) this.committedRows.lastSequence = buffer.lastAssigned;
  }

  /**
   * The innermost savepoint rolls back: its buffered writes go, what it flushed is rolled back,
   * its events are not heard, and reads no longer see its rows. Which rows it wrote is not
   * tracked past a flush, so every known row goes, less those an outer level still buffers.
   */
  private rollbackLevel(buffer: WriteBuffer, pendingBefore: number): void {
    let stillBuffered: readonly BufferedRow[] = [];
    try {
      stillBuffered = buffer.rollbackLevel(this.database.open && this.database.inTransaction);
    } finally {
      this.pending.length = pendingBefore;
      this.forgetRows();
      for (const row of stillBuffered) this.identity?.remember(row.entity, row.id, row.row);
    }
  }

  /**
   * An outermost transaction begins: its identity map starts empty (another connection may have
   * written since the last one), it has not yet checked the committed rows, and query results
   * read before it may no longer hold.
   */
  private transactionStarted(): void {
    this.identity = new IdentityMap();
    this.buffer = new WriteBuffer(this.flushWriter, this.readLastAssignedSequence);
    this.transactionDataVersion = null;
    this.committedReads.transactionStarted();
  }

  /** Forgets every row known in memory: something wrote rows it does not track. */
  private forgetRows(): void {
    this.identity?.clear();
    this.committedRows.clear();
  }

  /**
   * A record's row as the transaction under way knows it (its identity map, or else the rows
   * this connection's last transactions committed), or undefined. The committed rows are checked
   * against `data_version` read inside the transaction, never the turn's reading: another process
   * may have committed between that reading and this transaction's BEGIN IMMEDIATE, and a write
   * built on a row it changed would lose its update.
   */
  private knownRow(identity: IdentityMap, entity: EntityName, id: string): ProjectionRow | null | undefined {
    const row = identity.row(entity, id);
    if (row !== undefined || this.committedRows.isEmpty) return row;
    this.transactionDataVersion ??= this.dataVersion();
    this.committedRows.checked(this.transactionDataVersion);
    const committed = this.committedRows.row(entity, id);
    if (committed !== undefined) identity.remember(entity, id, committed);
    return committed;
  }

  /**
   * A record's row for a read outside transactions from the rows this connection's transactions
   * committed, or undefined: checked against the turn's `data_version` (`dataVersionThisTurn`),
   * as committed query results are, so a read by id and a `select` in one turn see other
   * connections' commits from the same moment on.
   */
  private committedRowOutside(entity: EntityName, id: string): ProjectionRow | null | undefined {
    if (this.committedRows.isEmpty) return undefined;
    this.committedRows.checked(this.dataVersionThisTurn());
    return this.committedRows.row(entity, id);
  }

  /**
   * This connection committed, or may have (its raw connection is handed out): the other stores
   * of this process read `data_version` again before they trust this turn's reading. Its own
   * reading still holds: a connection's own commits leave its `data_version` as it was.
   */
  private committedInProcess(): void {
    const current = this.turnProcessCommits === processCommits.count;
    processCommits.count += 1;
    if (current) this.turnProcessCommits = processCommits.count;
  }

  /** After an outermost commit: the checkpointer counts it, listeners hear its events. */
  private committed(): void {
    this.committedInProcess();
    this.checkpointer?.noteCommit();
    if (this.pending.length > 0) {
      const committed = this.pending;
      this.pending = [];
      this.feed.publish(committed);
    }
  }

  /**
   * Runs `work` in one transaction that may span awaits: `transaction()`'s guarantees (BEGIN
   * IMMEDIATE, listeners hear the events after the commit, none on a rollback, the identity map
   * for the outermost transaction, `store_busy` when the write lock stays taken) for async code.
   *
   * Outermost calls run one at a time, in call order (one connection holds one transaction). A
   * call from inside an open one's own async context (`work`, and what it awaits) becomes a
   * savepoint instead of waiting (which would deadlock); such calls made at once run one after
   * the other, since a savepoint released early would take a later one with it. Inside, the
   * synchronous methods read and write the transaction's uncommitted state as usual.
   *
   * Meanwhile the rest of the event loop keeps calling the store, and on this connection it
   * would see the uncommitted transaction, and join it with its writes. So, while one is open,
   * from outside its async context: reads run on a second, read-only connection, which sees the
   * last commit (WAL); writes, `transaction()` and `rebuildProjections()` throw
   * `AsyncTransactionConflictError`; and so do writes from a level that has a savepoint open
   * (they would land in the savepoint). It cannot start inside the synchronous `transaction()`.
   */
  async transactionAsync<T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T> {
    if (this.syncDepth > 0)
      throw new AsyncTransactionConflictError(
        "transactionAsync",
        "it cannot start inside the synchronous transaction()",
      );
    const body = () => work(this.unitOfWork);
    const here = this.asyncLevel.getStore();
    if (here?.open === true) return here.nested.run(() => this.savepointAsync(here, body));
    return this.asyncTransactions.run(() => this.outermostAsync(body));
  }

  /** The ambient transaction as the engine's unit of work (the same one for every level: it follows the async context). */
  private readonly unitOfWork: UnitOfWork = ambientUnitOfWork(this);

  /**
   * Runs `write` (synchronous autocommit statements, or a `transaction()` of its own) where it
   * cannot join an asynchronous transaction: at once when none is open or queued (the common
   * case, and the same statements as before), else in its turn behind them, in call order. A
   * caller inside an open one's own async context is part of it: its write is a savepoint there.
   * Autocommit rather than `BEGIN IMMEDIATE`: a lone statement is its own transaction.
   */
  async writeAsync<T>(write: () => T): Promise<T> {
    if (this.syncDepth > 0) return write();
    if (this.asyncLevel.getStore()?.open === true) return this.transactionAsync(async () => write());
    return this.asyncTransactions.run(async () => write());
  }

  private async outermostAsync<T>(work: () => Promise<T>): Promise<T> {
    this.guardBusy(() => this.database.exec("BEGIN IMMEDIATE"));
    const level = new AsyncTransactionLevel(null);
    this.asyncOutermost = level;
    this.asyncInnermost = level;
    this.transactionStarted();
    const buffer = this.buffer!;
    let result: T;
    try {
      result = await this.asyncLevel.run(level, work);
      // Committing now would release the savepoint under it, and the nested work would go on
      // writing into whatever transaction came next.
      if (this.asyncInnermost !== level)
        throw new AsyncTransactionConflictError(
          "transactionAsync",
          "its work finished while a nested transactionAsync it started was still running (await it); rolled back",
        );
      this.commitBuffered();
    } catch (error) {
      if (this.database.open && this.database.inTransaction) this.database.exec("ROLLBACK");
      this.pending = [];
      throw error;
    } finally {
      level.end();
      this.asyncOutermost = null;
      this.asyncInnermost = null;
      this.identity = null;
      if (this.buffer === buffer) this.buffer = null;
    }
    this.committed();
    return result;
  }

  private async savepointAsync<T>(parent: AsyncTransactionLevel, work: () => Promise<T>): Promise<T> {
    // Queued behind a sibling, the parent may have ended meanwhile (work that did not await it).
    if (!parent.open)
      throw new AsyncTransactionConflictError("transactionAsync", "the transaction it was called in has ended");
    const level = new AsyncTransactionLevel(parent);
    const buffer = this.buffer!;
    buffer.beginLevel();
    const before = this.pending.length;
    this.asyncInnermost = level;
    let result: T;
    try {
      result = await this.asyncLevel.run(level, work);
      if (level.open) buffer.releaseLevel();
    } catch (error) {
      // The connection may hold the next transaction by now: leave it alone.
      if (!level.open) throw endedUnder(error);
      try {
        // As in `transaction()`: its writes and events go, and the rows known.
        this.rollbackLevel(buffer, before);
      } finally {
        this.endSavepoint(level);
      }
      throw error;
    }
    if (!level.open) throw endedUnder(undefined);
    this.endSavepoint(level);
    return result;
  }

  private endSavepoint(level: AsyncTransactionLevel): void {
    level.end();
    this.asyncInnermost = level.parent;
  }

  /** Whether an asynchronous transaction is open and the running code is not part of it. */
  private outsideAsyncTransaction(): boolean {
    return this.asyncOutermost !== null && this.asyncLevel.getStore()?.open !== true;
  }

  /** Throws unless the running code may write: no asynchronous transaction is open, or it runs in its innermost level. */
  private assertMayWrite(operation: string): void {
    if (this.asyncOutermost === null) return;
    const here = this.asyncLevel.getStore();
    if (here === this.asyncInnermost) return;
    throw new AsyncTransactionConflictError(
      operation,
      here?.open === true
        ? "it runs in a level of the asynchronous transaction that has a savepoint open; await the savepoint first"
        : `it writes ${OUTSIDE_OPEN_ASYNC}`,
    );
  }

  /**
   * A statement of the read-only connection, which sees only what has committed; `plucked`
   * answers the first column alone (a mode that sticks to the statement, so cached apart).
   */
  private committedReaderStatement(sql: string, plucked = false): Database.Statement {
    const key = plucked ? `pluck\u0000${sql}` : sql;
    let statement = this.committedReaderStatements.get(key);
    if (statement === undefined) {
      statement = this.committedReaderConnection().prepare(sql);
      if (plucked) statement.pluck();
      this.committedReaderStatements.set(key, statement);
    }
    return statement;
  }

  private committedReaderConnection(): Database.Database {
    if (this.committedReader !== null) return this.committedReader;
    // A second connection to an in-memory database is another, empty database.
    if (this.file === ":memory:")
      throw new AsyncTransactionConflictError(
        "read",
        `an in-memory store has no second connection to read committed state from ${OUTSIDE_OPEN_ASYNC}`,
      );
    this.committedReader = new Database(this.file, {
      readonly: true,
      fileMustExist: true,
      timeout: this.busyTimeoutMs,
      verbose: this.onStatement,
    });
    return this.committedReader;
  }

  /** Hears every batch of events after it commits, in sequence order (see `CommitFeed`). */
  onCommitted(listener: (events: readonly StoredEvent[]) => void): () => void {
    return this.feed.onOrdered(listener);
  }

  /** Hears which records each commit changed, without them (see `CommitFeed`). */
  onCommitNudge(listener: (nudge: CommitNudge) => void): () => void {
    return this.feed.onNudge(listener);
  }

  /**
   * Appends upsert events and applies them to the projections. Must run inside `transaction`.
   * Nothing reaches the file yet: the events (numbered here, after the last sequence the file
   * assigned) and the rows wait in the transaction's write buffer until its commit, the end of
   * the savepoint they were appended in, or a read that could see them (see WriteBuffer); reads
   * by id see them at once through the identity map.
   */
  append(commandId: string | null, upserts: readonly RecordUpsert[], now: string): StoredEvent[] {
    this.assertMayWrite("append");
    if (!this.database.inTransaction) throw new Error("Store.append must run inside Store.transaction");
    const identity = this.identity!;
    const buffer = this.buffer!;
    const out: StoredEvent[] = [];
    for (const upsert of upserts) {
      const prepared = this.entities.get(upsert.entity)!;
      // Serialized once: the same text is the event's data and the projection row's.
      const data = JSON.stringify(upsert.record);
      const threadId = prepared.spec.threadId(upsert.record);
      const id = (upsert.record as { id: string }).id;
      const type = `${upsert.entity}.upserted` as const;
      // The record's row, when this transaction already read or wrote it: its link to the
      // previous event, and the column values an update leaves alone. A row it does not know (most
      // often a record being created) is not read: the event's insert reads the link from the row
      // itself, and the row is upserted whole. The cost falls on an existing row the transaction
      // never read, which rewrites all its index entries.
      const current = this.knownRow(identity, upsert.entity, id);
      const sequence = buffer.nextSequence();
      const previous = current === undefined ? undefined : ((current?.[0] as number | null | undefined) ?? null);
      buffer.addEvent({
        sequence,
        type,
        entity: upsert.entity,
        id,
        threadId,
        commandId,
        data,
        createdAt: now,
        previous,
      });
      const written = this.projectionRow(prepared, upsert.record, data, sequence);
      buffer.addRow(upsert.entity, id, written, current);
      identity.remember(upsert.entity, id, written);
      identity.wrote(upsert.entity);
      out.push({
        sequence,
        type,
        entity: upsert.entity,
        threadId,
        commandId,
        record: upsert.record,
        createdAt: now,
      });
    }
    this.pending.push(...out);
    return out;
  }

  /** A record's projection row as written (`[last_sequence, ...columns, data]`), null when it removes it. */
  private projectionRow(
    prepared: PreparedEntity,
    record: EntityRecords[EntityName],
    data: string,
    sequence: number,
  ): ProjectionRow | null {
    if (prepared.spec.removes?.(record) === true) return null;
    const written: (string | number | null)[] = [sequence];
    for (const column of prepared.columns) written.push(column(record));
    written.push(data);
    return written;
  }

  /**
   * The sequence the file assigned last: known from this connection's last appending transaction
   * while no other connection has committed since (checked as the committed rows are), else read.
   */
  private lastAssignedSequence(): number {
    if (this.committedRows.lastSequence !== null) {
      this.transactionDataVersion ??= this.dataVersion();
      this.committedRows.checked(this.transactionDataVersion);
      if (this.committedRows.lastSequence !== null) return this.committedRows.lastSequence;
    }
    return (this.writerStatement(LAST_ASSIGNED_SEQUENCE_SQL).pluck().get() as number | undefined) ?? 0;
  }

  /**
   * A flush's row writes, in buffer order: each table's rows in one multi-row upsert (in the order
   * they were first written, so new rows take their rowids in that order, as a replay gives them),
   * or, for a table with one row, that row's own write; a removal ends its table's batch.
   */
  private writeBufferedRows(rows: readonly BufferedRow[]): void {
    if (rows.length === 1 && rows[0]!.row !== null) {
      this.writeRow(this.entities.get(rows[0]!.entity)!, rows[0]!.row, rows[0]!.base);
      return;
    }
    const batches = new Map<EntityName, BufferedRow[]>();
    const writeBatch = (entity: EntityName) => {
      const batch = batches.get(entity);
      if (batch === undefined) return;
      batches.delete(entity);
      const prepared = this.entities.get(entity)!;
      if (batch.length === 1) this.writeRow(prepared, batch[0]!.row!, batch[0]!.base);
      else prepared.rowUpserts.run(batch.map((row) => row.row!));
    };
    for (const row of rows) {
      if (row.row === null) {
        writeBatch(row.entity);
        this.entities.get(row.entity)!.remove.run(row.id);
        continue;
      }
      let batch = batches.get(row.entity);
      if (batch === undefined) batches.set(row.entity, (batch = []));
      batch.push(row);
    }
    for (const entity of [...batches.keys()]) writeBatch(entity);
  }

  /**
   * Writes a record's projection row (a replay's, or a flush's). Given its `current` row (null
   * for none), an existing row is updated in only the columns that changed: SQLite rewrites the
   * entry of every index over a column an UPDATE sets, even to the value it had, so setting them
   * all wrote a page per index on every upsert (a run's status change rewrote its by-thread entry
   * too). Without it (a replay), the row is upserted whole.
   */
  private project(
    entity: EntityName,
    record: EntityRecords[EntityName],
    data: string,
    sequence: number,
    current?: ProjectionRow | null,
  ): void {
    const prepared = this.entities.get(entity)!;
    const written = this.projectionRow(prepared, record, data, sequence);
    if (written === null) prepared.remove.run((record as { id: string }).id);
    else this.writeRow(prepared, written, current);
  }

  private writeRow(prepared: PreparedEntity, written: ProjectionRow, current: ProjectionRow | null | undefined): void {
    const sequence = written[0]!;
    const data = written[written.length - 1]!;
    if (current === undefined || current === null) {
      const values = written.slice(1, -1);
      values.push(data, sequence);
      prepared.upsert.run(values);
      return;
    }
    let mask = 0;
    const changed: (string | number | null)[] = [];
    // Column 0 (written[1]) is the id, which an upsert never changes.
    for (let index = 1; index < written.length - 2; index += 1) {
      if (written[index + 1] !== current[index + 1]) {
        mask |= 1 << index;
        changed.push(written[index + 1]!);
      }
    }
    changed.push(data, sequence, written[1]!);
    this.updateStatement(prepared, mask).run(changed);
  }

  private updateStatement(prepared: PreparedEntity, mask: number): Database.Statement {
    let statement = prepared.updates.get(mask);
    if (statement === undefined) {
      const set = prepared.columnNames.filter((_, index) => (mask & (1 << index)) !== 0).map((name) => `${name} = ?`);
      statement = this.database.prepare(
        `UPDATE ${prepared.spec.table} SET ${[...set, "data = ?", "last_sequence = ?"].join(", ")} WHERE id = ?`,
      );
      prepared.updates.set(mask, statement);
    }
    return statement;
  }

  /**
   * Reads one record by id. Inside a `transaction`, a record the transaction already read or
   * wrote, or that an earlier one committed, comes from memory (the latter after one check per
   * transaction); outside one, a record this connection's transactions committed or its reads
   * saw comes from memory after one check per turn of the event loop (see `committedRowOutside`),
   * others from the file. From outside an open asynchronous transaction, from the committed
   * reader. Each call returns an object of its own.
   */
  get<E extends EntityName>(entity: E, id: string): EntityRecords[E] | null {
    const outside = this.outsideAsyncTransaction();
    const identity = outside ? null : this.identity;
    if (outside) {
      const found = this.committedReaderStatement(this.entities.get(entity)!.get.source).get(id) as
        { data: string } | undefined;
      return found ? (JSON.parse(found.data) as EntityRecords[E]) : null;
    }
    if (identity === null) {
      let row = this.committedRowOutside(entity, id);
      if (row === undefined) {
        // The whole row, kept for the next reads and transactions (read as cheaply as its data).
        row = (this.entities.get(entity)!.current.get(id) as ProjectionRow | undefined) ?? null;
        this.committedRows.committed([[rowKey(entity, id), row]]);
      }
      return row === null ? null : (JSON.parse(row[row.length - 1] as string) as EntityRecords[E]);
    }
    let row = this.knownRow(identity, entity, id);
    if (row === undefined) {
      // The row as append reads it, so a write after this read needs no read of its own.
      row = (this.entities.get(entity)!.current.get(id) as ProjectionRow | undefined) ?? null;
      identity.remember(entity, id, row);
    }
    return row === null ? null : (JSON.parse(row[row.length - 1] as string) as EntityRecords[E]);
  }

  /**
   * Reads records with a WHERE clause over the entity's indexed columns. Inside a `transaction`,
   * the same query with the same values answers from memory until the transaction next writes
   * (unless it reads more than its table, or the clock: see `queryKey`); outside one, until this
   * connection runs a transaction or changes a row, or another commits (see `CommittedReads`).
   * Each call returns objects of its own.
   */
  select<E extends EntityName>(
    entity: E,
    where: string,
    params: readonly unknown[] = [],
    suffix = "",
  ): EntityRecords[E][] {
    return this.selectTexts(entity, where, params, suffix).map((text) => JSON.parse(text) as EntityRecords[E]);
  }

  /** Whether a record matches a WHERE clause, read and cached as {@link select} reads, without parsing it. */
  exists(entity: EntityName, where: string, params: readonly unknown[] = []): boolean {
    return this.selectTexts(entity, where, params, "").length > 0;
  }

  private selectTexts(
    entity: EntityName,
    where: string,
    params: readonly unknown[],
    suffix: string,
  ): readonly string[] {
    const table = ENTITY_TABLES[entity].table;
    const sql = `SELECT data FROM ${table} WHERE ${where} ${suffix}`;
    // From outside an open asynchronous transaction, neither cache: one holds its uncommitted
    // rows, and the other's stamps are this connection's, whose changes that transaction makes.
    const outside = this.outsideAsyncTransaction();
    const identity = this.identity;
    const key = outside ? null : queryKey(`${where} ${suffix}`, sql, params);
    let texts = key === null ? undefined : identity !== null ? identity.queryResult(key) : this.committedReads.get(key);
    if (texts === undefined) {
      texts = (this.statement(sql).all(...params) as { data: string }[]).map((row) => row.data);
      if (key !== null) {
        if (identity !== null) identity.rememberQuery(key, texts, entity);
        else this.committedReads.remember(key, texts);
      }
    }
    return texts;
  }

  /** Counts records matching a WHERE clause. */
  count(entity: EntityName, where: string, params: readonly unknown[] = []): number {
    const table = ENTITY_TABLES[entity].table;
    return (this.statement(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get(...params) as { n: number }).n;
  }

  /** The newest event sequence, or 0. */
  lastSequence(): number {
    return (this.statement("SELECT COALESCE(MAX(sequence), 0) AS s FROM events").get() as { s: number }).s;
  }

  /** Events after `sequence`, oldest first. */
  eventsAfter(sequence: number, limit = 1000): StoredEvent[] {
    const rows = this.statement(
      "SELECT sequence, type, entity, thread_id, command_id, data, created_at FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?",
    ).all(sequence, limit) as {
      sequence: number;
      type: string;
      entity: EntityName;
      thread_id: string | null;
      command_id: string | null;
      data: string;
      created_at: string;
    }[];
    return rows.map((row) => ({
      sequence: row.sequence,
      type: row.type as StoredEvent["type"],
      entity: row.entity,
      threadId: row.thread_id,
      commandId: row.command_id,
      record: JSON.parse(row.data) as EntityRecords[EntityName],
      createdAt: row.created_at,
    }));
  }

  /** The record as the upsert before the event at `sequence` left it (that record's previous event), or null. */
  previousUpsert(sequence: number): EntityRecords[EntityName] | null {
    if (!this.outsideAsyncTransaction()) this.buffer?.flushFor("all", false);
    const data = (
      this.outsideAsyncTransaction() ? this.committedReaderStatement(PREVIOUS_DATA_SQL, true) : this.previousData
    ).get(sequence) as string | undefined;
    return data === undefined ? null : (JSON.parse(data) as EntityRecords[EntityName]);
  }

  /**
   * The sequence of a record's oldest upsert, following each event's link to the one before
   * from the record's latest: as many steps as the record has upserts. Null without a row (a
   * removed record's chain starts again when it is next written).
   */
  firstUpsertSequence(entity: EntityName, id: string): number | null {
    const prepared = this.entities.get(entity)!;
    const outside = this.outsideAsyncTransaction();
    if (!outside) this.buffer?.flushFor("all", false);
    const lastSequence = outside
      ? this.committedReaderStatement(prepared.lastSequence.source, true)
      : prepared.lastSequence;
    const previousOf = outside ? this.committedReaderStatement(PREVIOUS_OF_SQL, true) : this.previousOf;
    let sequence = (lastSequence.get(id) as number | null | undefined) ?? null;
    if (sequence === null) return null;
    for (;;) {
      const previous: number | null = (previousOf.get(sequence) as number | null | undefined) ?? null;
      if (previous === null) return sequence;
      sequence = previous;
    }
  }

  /**
   * Removes records for good: each one's events (its row's chain of links back to its first
   * upsert), its projection row, and the receipts of the commands that wrote those events. For
   * retention of records nothing else refers to (a scheduled task's old triggers): the log stays
   * the truth of what remains, so a rebuild makes the same projections. A forgotten thread's or
   * item's text leaves the search index too. Must run inside `transaction`. Returns how many
   * records had a row.
   */
  forget(entity: EntityName, ids: readonly string[]): number {
    this.assertMayWrite("forget");
    if (!this.database.inTransaction) throw new Error("Store.forget must run inside Store.transaction");
    this.buffer?.flushFor("all", true);
    const prepared = this.entities.get(entity)!;
    const commandOf = this.writerStatement("SELECT command_id, previous_sequence FROM events WHERE sequence = ?");
    const removeEvent = this.writerStatement("DELETE FROM events WHERE sequence = ?");
    const removeReceipt = this.writerStatement("DELETE FROM command_receipts WHERE command_id = ?");
    let forgotten = 0;
    for (const id of ids) {
      let sequence = (prepared.lastSequence.get(id) as number | null | undefined) ?? null;
      // Forgotten text must not outlive its record in the search index (keyed by the row's rowid).
      forgetSearchRows(this.database, entity, id);
      const removed = prepared.remove.run(id).changes;
      this.identity?.remember(entity, id, null);
      this.identity?.wrote(entity);
      if (removed === 0) continue;
      forgotten += 1;
      while (sequence !== null) {
        const event = commandOf.get(sequence) as
          { command_id: string | null; previous_sequence: number | null } | undefined;
        if (event === undefined) break;
        removeEvent.run(sequence);
        if (event.command_id !== null) removeReceipt.run(event.command_id);
        sequence = event.previous_sequence;
      }
    }
    return forgotten;
  }

  /** Reads a command receipt. */
  getReceipt(commandId: string): CommandReceipt | null {
    const row = this.statement("SELECT * FROM command_receipts WHERE command_id = ?").get(commandId) as
      | {
          command_id: string;
          operation: string;
          request_hash: string;
          result: string;
          first_sequence: number | null;
          last_sequence: number | null;
          created_at: string;
        }
      | undefined;
    if (!row) return null;
    return {
      commandId: row.command_id,
      operation: row.operation,
      requestHash: row.request_hash,
      result: JSON.parse(row.result),
      firstSequence: row.first_sequence,
      lastSequence: row.last_sequence,
      createdAt: row.created_at,
    };
  }

  /** Stores a command receipt. Must run inside `transaction`. */
  putReceipt(receipt: CommandReceipt): void {
    this.assertMayWrite("putReceipt");
    this.buffer?.flushFor(NO_TABLES, true);
    this.writerStatement(
      "INSERT INTO command_receipts (command_id, operation, request_hash, result, first_sequence, last_sequence, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ).run(
      receipt.commandId,
      receipt.operation,
      receipt.requestHash,
      // A handler that returns nothing still ran: its receipt holds null (JSON has no undefined).
      JSON.stringify(receipt.result ?? null),
      receipt.firstSequence,
      receipt.lastSequence,
      receipt.createdAt,
    );
  }

  /** Adds an effect to the outbox; an existing id is kept (deterministic ids make this idempotent). */
  enqueueEffect(
    effect: { id: string; lane: string; type: string; payload: unknown },
    nowMs: number,
    nowIso: string,
  ): void {
    this.assertMayWrite("enqueueEffect");
    this.buffer?.flushFor(NO_TABLES, true);
    this.writerStatement(
      "INSERT INTO outbox (id, lane, type, payload, status, attempts, available_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
    ).run(effect.id, effect.lane, effect.type, JSON.stringify(effect.payload), nowMs, nowIso, nowIso);
  }

  /** The oldest unfinished effect of each lane that is due and not already claimed. */
  dueEffects(nowMs: number): OutboxEffect[] {
    const rows = this.statement(
      `SELECT o.* FROM outbox o
         JOIN (SELECT lane, MIN(seq) AS seq FROM outbox WHERE status IN ('pending', 'claimed') GROUP BY lane) head ON head.seq = o.seq
         WHERE o.status = 'pending' AND o.available_at <= ?
         ORDER BY o.seq`,
    ).all(nowMs) as OutboxRow[];
    return rows.map(toEffect);
  }

  /**
   * `dueEffects` and when the earliest of the other pending effects becomes due, in one
   * statement (the worker's tick read them in two).
   */
  outboxAgenda(nowMs: number): OutboxAgenda {
    const rows = this.statement(
      `WITH head AS (SELECT lane, MIN(seq) AS seq FROM outbox WHERE status IN ('pending', 'claimed') GROUP BY lane),
         due AS (SELECT o.* FROM outbox o JOIN head ON head.seq = o.seq WHERE o.status = 'pending' AND o.available_at <= ?)
       SELECT later.due_at AS later_due_at, due.* FROM
         (SELECT MIN(available_at) AS due_at FROM outbox WHERE status = 'pending' AND seq NOT IN (SELECT seq FROM due)) later
         LEFT JOIN due ON 1
         ORDER BY due.seq`,
    ).all(nowMs) as (OutboxRow & { later_due_at: number | null })[];
    // Without a due effect, the one row the LEFT JOIN keeps has no effect's columns.
    const due = rows.filter((row) => row.seq !== null).map(toEffect);
    return { due, laterDueAt: rows[0]?.later_due_at ?? null };
  }

  /** When the next delayed effect becomes due, or null. */
  nextEffectDueAt(): number | null {
    const row = this.statement("SELECT MIN(available_at) AS t FROM outbox WHERE status = 'pending'").get() as {
      t: number | null;
    };
    return row.t;
  }

  /** Marks an effect claimed. Returns false when another worker got it first. */
  claimEffect(id: string, nowMs: number): boolean {
    this.assertMayWrite("claimEffect");
    const info = this.guardBusy(() =>
      this.writerStatement(
        "UPDATE outbox SET status = 'claimed', claimed_at = ?, attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'pending'",
      ).run(nowMs, new Date(nowMs).toISOString(), id),
    );
    return info.changes === 1;
  }

  /** Settles an effect. */
  settleEffect(id: string, status: "done" | "failed" | "abandoned", error: string | null, nowIso: string): void {
    this.assertMayWrite("settleEffect");
    this.guardBusy(() =>
      this.writerStatement("UPDATE outbox SET status = ?, last_error = ?, updated_at = ? WHERE id = ?").run(
        status,
        error,
        nowIso,
        id,
      ),
    );
  }

  /** Puts an effect back for a later retry. */
  retryEffect(id: string, availableAt: number, error: string, nowIso: string): void {
    this.assertMayWrite("retryEffect");
    this.guardBusy(() =>
      this.writerStatement(
        "UPDATE outbox SET status = 'pending', available_at = ?, last_error = ?, updated_at = ? WHERE id = ?",
      ).run(availableAt, error, nowIso, id),
    );
  }

  /** Unfinished effects (pending or claimed), oldest first. */
  unfinishedEffects(): OutboxEffect[] {
    return (
      this.statement("SELECT * FROM outbox WHERE status IN ('pending', 'claimed') ORDER BY seq").all() as OutboxRow[]
    ).map(toEffect);
  }

  /** Reads an effect. */
  getEffect(id: string): OutboxEffect | null {
    const row = this.statement("SELECT * FROM outbox WHERE id = ?").get(id) as OutboxRow | undefined;
    return row ? toEffect(row) : null;
  }

  /** A reactor's last processed sequence. */
  reactorOffset(name: string): number {
    const row = this.statement("SELECT sequence FROM reactor_offsets WHERE name = ?").get(name) as
      { sequence: number } | undefined;
    return row?.sequence ?? 0;
  }

  /** Records a reactor's progress (inside the transaction that did the reacting). */
  setReactorOffset(name: string, sequence: number): void {
    this.assertMayWrite("setReactorOffset");
    this.buffer?.flushFor(NO_TABLES, true);
    this.writerStatement(
      "INSERT INTO reactor_offsets (name, sequence) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET sequence = excluded.sequence",
    ).run(name, sequence);
  }

  /**
   * Rebuilds every projection from the event log (the log is the truth), in one transaction: a
   * kill part way leaves the old projections. A projection row is its record's newest upsert, so
   * of a record's upserts in one batch of the log only the last is parsed and written (a run
   * upserted five times costs one write, not five). Rows are inserted in the order their records
   * were first upserted and tombstones delete them in log order, so every row gets the rowid it
   * had when live (`ORDER BY rowid` reads rely on their order), as when each event was applied in
   * turn; only `forget` leaves gaps that a rebuild closes. The thread search index is left to
   * its next catch-up, which rebuilds it in bulk (ThreadSearchIndex).
   */
  rebuildProjections(): number {
    this.assertMayWrite("rebuildProjections");
    this.buffer?.flushFor("all", true);
    const tables = ENTITY_NAMES.map((name) => ENTITY_TABLES[name].table);
    const secondaryIndexes = this.database
      .prepare(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${tables.map(() => "?").join(", ")})`,
      )
      .all(...tables) as { name: string; sql: string }[];
    // The rebuild touches every projection page; SQLite's default 2 MiB cache re-reads them.
    const cacheSize = this.database.pragma("cache_size", { simple: true }) as number;
    this.database.pragma(`cache_size = ${REBUILD_CACHE_KIB}`);
    try {
      return this.database
        .transaction(() => {
          const applied = this.replayAll(tables, secondaryIndexes);
          // Rows may come back under other rowids (forget's gaps close): the search index is
          // rebuilt in bulk at its next catch-up, not row by row here.
          this.database.exec(THREAD_SEARCH_STALE_SQL);
          return applied;
        })
        .immediate();
    } finally {
      // Every row was rewritten (or, on failure, rolled back) behind a transaction under way,
      // and behind what other stores of this process read this turn.
      this.forgetRows();
      this.committedInProcess();
      this.database.pragma(`cache_size = ${cacheSize}`);
    }
  }

  /** Empties the projections and applies every event; returns how many. */
  private replayAll(tables: readonly string[], secondaryIndexes: readonly { name: string; sql: string }[]): number {
    // Building an index over the finished table is one sort; keeping it up to date is a b-tree
    // insert per row. Unique indexes are checked when rebuilt, against the final state, which
    // is what live appends kept unique.
    for (const index of secondaryIndexes) this.database.exec(`DROP INDEX "${index.name}"`);
    for (const table of tables) this.database.exec(`DELETE FROM ${table}`);
    const batch = this.database
      .prepare(
        `SELECT sequence, entity, data, previous_sequence FROM events WHERE sequence > ? ORDER BY sequence LIMIT ${REPLAY_BATCH}`,
      )
      .raw(true);
    let applied = 0;
    let after = 0;
    // Batches, not one iterator: the connection cannot write while a read statement is open.
    for (;;) {
      const rows = batch.all(after) as ReplayRow[];
      if (rows.length === 0) break;
      this.replayBatch(rows, after);
      applied += rows.length;
      after = rows[rows.length - 1]![0];
    }
    for (const index of secondaryIndexes) this.database.exec(index.sql);
    return applied;
  }

  /**
   * Applies a batch of events (those after sequence `after`), each record's in one write: where
   * its first event in the batch was, so a new row takes the rowid it took live, with its last
   * event's data. A record's events in the batch are found by their links (each event's
   * previous_sequence names the record's event before it). A tombstone's entity is applied event
   * by event: a delete between a record's upserts changes the rowids of the rows after it.
   */
  private replayBatch(rows: readonly ReplayRow[], after: number): void {
    // The index of the event each event in the batch is followed by, for the record's next one.
    const followedBy = new Map<number, number>();
    for (let index = 0; index < rows.length; index += 1) {
      const [, entity, , previous] = rows[index]!;
      if (previous === null || previous <= after || ENTITY_TABLES[entity].removes !== undefined) continue;
      // Two events naming one previous: links this store never writes; each event on its own
      // (as when no record has two events in the batch).
      if (followedBy.has(previous)) {
        followedBy.clear();
        break;
      }
      followedBy.set(previous, index);
    }
    if (followedBy.size === 0) {
      for (const [sequence, entity, data] of rows)
        this.project(entity, JSON.parse(data) as EntityRecords[EntityName], data, sequence);
      return;
    }
    const written = new Set<number>();
    for (let [sequence, entity, data] of rows) {
      if (written.has(sequence)) continue;
      // Walks to the record's last event in the batch; the ones passed need no write of their own.
      for (let next = followedBy.get(sequence); next !== undefined; next = followedBy.get(sequence)) {
        [sequence, entity, data] = rows[next]!;
        written.add(sequence);
      }
      this.project(entity, JSON.parse(data) as EntityRecords[EntityName], data, sequence);
    }
  }

  isOpen(): boolean {
    return this.database.open;
  }

  /**
   * Reads `data_version` now (a credential check at the start of a request: a commit elsewhere
   * before it is seen), and keeps it for the rest of this event-loop turn.
   */
  dataVersion(): number {
    const version = this.writerStatement(DATA_VERSION_SQL).pluck().get() as number;
    if (this.turnDataVersion === null) setImmediate(this.endDataVersionTurn);
    this.turnDataVersion = version;
    this.turnProcessCommits = processCommits.count;
    return version;
  }

  /**
   * `data_version` as this event-loop turn last read it (or reads it now): the one answer to
   * "has another connection committed since?" for what is kept outside transactions, committed
   * query results (`CommittedReads`) and committed rows (`CommittedRows`) alike. One read serves
   * a request's credential check, its project check, its listing and its reads by id, instead of
   * one read transaction on the file each (each cost about as much as the query it spared, under
   * bench/mcp.bench.js). A commit by another process that lands during the turn is seen from the
   * next turn on, as if it had landed just after it (a request that must see it, a credential
   * check, reads `dataVersion()` afresh). A commit by another store of this process, which can
   * happen in the middle of a turn and be followed by a read here, voids the reading at once.
   * This connection's own changes are never missed (its transactions and total changes are
   * checked on every read, and its transactions hand their rows over).
   */
  private dataVersionThisTurn(): number {
    if (this.turnDataVersion !== null && this.turnProcessCommits === processCommits.count) return this.turnDataVersion;
    return this.dataVersion();
  }

  /** Closes the database (checkpointing the WAL: the checkpoint worker's connection closes first). */
  close(): void {
    this.checkpointer?.close();
    if (this.committedReader?.open === true) this.committedReader.close();
    if (this.database.open) this.database.close();
  }
}

/** An event as a rebuild reads it: sequence, entity, data, previous_sequence. */
type ReplayRow = [sequence: number, entity: EntityName, data: string, previous: number | null];

interface OutboxRow {
  seq: number;
  id: string;
  lane: string;
  type: string;
  payload: string;
  status: OutboxEffect["status"];
  attempts: number;
  available_at: number;
  last_error: string | null;
}

function toEffect(row: OutboxRow): OutboxEffect {
  return {
    seq: row.seq,
    id: row.id,
    lane: row.lane,
    type: row.type,
    payload: JSON.parse(row.payload),
    status: row.status,
    attempts: row.attempts,
    availableAt: row.available_at,
    lastError: row.last_error,
  };
}
