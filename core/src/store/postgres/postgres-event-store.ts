import { asTransactionConflict } from "../../util/store-busy.js";
import { FifoMutex } from "../async-transaction.js";
import { CommitFeed } from "../commit-feed.js";
import { ENTITY_NAMES, ENTITY_TABLES } from "../entity-tables.js";
import { randomBytes } from "node:crypto";
import type {
  CommandReceipt,
  EffectToEnqueue,
  OutboxAgenda,
  OutboxEffect,
  RecordUpsert,
  UnitOfWork,
  UnitOfWorkStore,
} from "../ports.js";
import type { EntityName, EntityRecords, StoredEvent } from "../records.js";
import { numberedPlaceholders, type TableHost, type TableSql } from "../table-sql.js";
import { OrderedEventReader } from "./ordered-event-reader.js";
import { migratePostgres } from "./postgres-migrations.js";
import { openPostgresPool, type PostgresPool, type PostgresPoolOptions } from "./postgres-pool.js";
import { deleteRows, projectionValues, type ProjectionValues, upsertRows } from "./postgres-projection-rows.js";
import { POSTGRES_THREAD_SEARCH_STALE_SQL, PostgresThreadSearchIndex } from "./postgres-thread-search.js";
import { postgresTableSql } from "./postgres-table-sql.js";
import { UnitConnection } from "./postgres-unit-connection.js";
import { UnitWrites } from "./postgres-unit-writes.js";

export type { EffectToEnqueue } from "../ports.js";

/**
 * The writes of a PostgreSQL unit of work: synchronous, buffered until the unit's next read or
 * its commit (see {@link UnitWrites}). An appended event's `sequence` is 0 until that flush
 * numbers it (`next_event_sequence()`); the objects `append` returned carry it from then on.
 */
export interface PostgresUnitOfWork {
  append(commandId: string | null, upserts: readonly RecordUpsert[], now: string): readonly StoredEvent[];
  /** Removes records for good (their events, rows and their commands' receipts), at the flush. */
  forget(entity: EntityName, ids: readonly string[]): void;
  putReceipt(receipt: CommandReceipt): void;
  enqueueEffect(effect: EffectToEnqueue, availableAtMs: number, nowIso: string): void;
}

/** A synchronous unit of work's writes, and its nested units (a mark in its buffer). */
export interface PostgresSyncUnitOfWork extends PostgresUnitOfWork {
  nested<R>(body: (work: PostgresSyncUnitOfWork) => R): R;
}

/**
 * A unit of work that may await: the engine's {@link UnitOfWork} (reads of its own writes on
 * its connection after its buffered writes, nested units as savepoints, the table modules
 * `new ItemsTable(work)`), and `forget`.
 */
export interface PostgresAsyncUnitOfWork extends PostgresUnitOfWork, UnitOfWork {
  append(commandId: string | null, upserts: readonly RecordUpsert[], now: string): readonly StoredEvent[];
  enqueueEffect(effect: EffectToEnqueue, availableAtMs: number, nowIso: string): void;
  nested<R>(body: (work: PostgresAsyncUnitOfWork) => Promise<R>): Promise<R>;
}

/** A unit of work under way: its buffered writes, its connection, and how it flushes. */
interface OpenUnit {
  readonly writes: UnitWrites;
  readonly connection: UnitConnection;
  /** Writes what is buffered, on the unit's connection (begun at the first). */
  flush(): Promise<void>;
  /** Runs `step` between flushes (a savepoint's rollback, which must not interleave with one). */
  locked(step: () => Promise<void>): Promise<void>;
}

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

interface ReceiptRow {
  command_id: string;
  operation: string;
  request_hash: string;
  result: string;
  first_sequence: number | null;
  last_sequence: number | null;
  created_at: string;
}

/** Lane heads: the oldest unfinished effect of each lane (a claimed one holds its lane). */
const HEADS_SQL = "SELECT lane, MIN(seq) AS seq FROM outbox WHERE status IN ('pending', 'claimed') GROUP BY lane";

/**
 * A transaction-scoped advisory lock on a command id (`$1`, hashed as the records' locks are,
 * on a key no record has): what makes a receipt lookup wait for another unit running the id.
 */
const LOCK_COMMAND_SQL = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";

/** Events read per statement while projections are rebuilt. */
const REBUILD_BATCH = 5_000;

/** Events a read of the log asks for at a time, when it reads to the end (`lastSequence`). */
const TAIL_BATCH = 1_000;

/**
 * The store over PostgreSQL (issue 34), in the shape the port is becoming (issue 33): writes
 * synchronous inside a unit of work and buffered, every read a promise.
 *
 * - Units of work (`transaction`, `transactionAsync`) each hold one pooled connection from BEGIN
 *   to COMMIT; the units of one store run one at a time, in call order. Nested units are a mark
 *   in the buffer (synchronous: nothing flushes inside them) or a SAVEPOINT (asynchronous).
 * - Reads outside a unit go through the pool and see what has committed. The log is read
 *   through the {@link OrderedEventReader}: transactions commit out of sequence order, and a
 *   reader "after N" must never step over a lower sequence that commits later.
 * - `onCommitted` hears this store's own commits, in commit order (one unit at a time); other
 *   stores' commits reach a reader through the log.
 */
export class PostgresEventStore implements TableHost, UnitOfWorkStore {
  private readonly units = new FifoMutex();
  private readonly feed = new CommitFeed();
  /** The safe position `lastSequence` reports, read onwards from where it last stopped. */
  private readonly tail: OrderedEventReader;
  private readonly tailReads = new FifoMutex();
  /** The connections of units under way, which `close` ends. */
  private readonly openUnits = new Set<UnitConnection>();
  /** This database's environment id, once read (it never changes). */
  private environment: Promise<string> | null = null;

  /**
   * The table modules' SQL outside a unit of work: on the pool, so a read sees what has
   * committed and a write is a transaction of its own.
   */
  readonly tableSql: TableSql;

  /** The thread search index (`tsvector`), kept from the log up to the safe position. */
  readonly threadSearchIndex: PostgresThreadSearchIndex;

  constructor(readonly pool: PostgresPool) {
    this.tail = new OrderedEventReader(pool);
    this.tableSql = postgresTableSql((text, params) => pool.query(text, params as unknown[]));
    this.threadSearchIndex = new PostgresThreadSearchIndex(pool, () => this.lastSequence());
  }

  // ---- units of work ----

  /** Runs `body` (synchronous writes) in one transaction; resolves once it committed. */
  transaction<R>(body: (work: PostgresSyncUnitOfWork) => R): Promise<R> {
    return this.units.run(() =>
      this.inTransaction(async (unit) => {
        const result = body(this.syncWork(unit.writes));
        await unit.flush();
        return result;
      }),
    );
  }

  /** Runs `body`, which may await between its writes, in one transaction; resolves once it committed. */
  transactionAsync<R>(body: (work: PostgresAsyncUnitOfWork) => Promise<R>): Promise<R> {
    return this.units.run(() =>
      this.inTransaction(async (unit) => {
        const result = await body(this.asyncWork(unit));
        await unit.flush();
        return result;
      }),
    );
  }

  /** Hears every batch of events this store commits, in commit order, after the commit. */
  onCommitted(listener: (events: readonly StoredEvent[]) => void): () => void {
    return this.feed.onOrdered(listener);
  }

  private async inTransaction<R>(work: (unit: OpenUnit) => Promise<R>): Promise<R> {
    const connection = new UnitConnection(this.pool);
    const writes = new UnitWrites();
    const flushes = new FifoMutex();
    const unit: OpenUnit = {
      writes,
      connection,
      // One flush at a time: a flush draws sequences in the order of the writes it takes.
      flush: () =>
        flushes.run(async () => {
          if (!writes.empty) await writes.flush(await connection.client());
        }),
      locked: (step) => flushes.run(step),
    };
    this.openUnits.add(connection);
    let result: R;
    try {
      result = await work(unit);
      await connection.commit();
    } catch (error) {
      await connection.rollBackAndRelease();
      // A deadlock or serialization failure rolled the unit back whole: retryable, and typed so.
      throw asTransactionConflict(error);
    } finally {
      this.openUnits.delete(connection);
    }
    await connection.release();
    if (writes.flushed.length > 0) this.feed.publish([...writes.flushed]);
    return result;
  }

  private writesOf(writes: UnitWrites): PostgresUnitOfWork {
    return {
      append: (commandId, upserts, now) => writes.append(commandId, upserts, now),
      forget: (entity, ids) => writes.forget(entity, ids),
      putReceipt: (receipt) => writes.putReceipt(receipt),
      enqueueEffect: (effect, availableAtMs, nowIso) =>
        writes.enqueueEffect({ ...effect, availableAt: availableAtMs, createdAt: nowIso }),
    };
  }

  private syncWork(writes: UnitWrites): PostgresSyncUnitOfWork {
    const work: PostgresSyncUnitOfWork = {
      ...this.writesOf(writes),
      // Nothing flushes while a synchronous body runs (it cannot read), so a nested unit that
      // throws rolls back by dropping what it buffered.
      nested: (body) => {
        const mark = writes.mark();
        try {
          return body(work);
        } catch (error) {
          writes.rollBackTo(mark);
          throw error;
        }
      },
    };
    return work;
  }

  private asyncWork(unit: OpenUnit): PostgresAsyncUnitOfWork {
    /** Nested units started together run one after the other. */
    const nestedUnits = new FifoMutex();
    /** A read of the unit: on its connection, after what it wrote reached the database. */
    const read = async <Row>(text: string, params: readonly unknown[]): Promise<Row[]> => {
      await unit.flush();
      return (await (await unit.connection.client()).query<Row & Record<string, unknown>>(text, params as unknown[]))
        .rows;
    };
    const work: PostgresAsyncUnitOfWork = {
      ...this.writesOf(unit.writes),
      // What the unit wrote must be in the database before a table's SQL reads or writes beside it.
      tableSql: postgresTableSql(async (text, params) => {
        await unit.flush();
        return (await unit.connection.client()).query(text, params as unknown[]);
      }),
      get: async (entity, id) => {
        const row = (
          await read<{ data: string }>(`SELECT data FROM ${ENTITY_TABLES[entity].table} WHERE id = $1`, [id])
        )[0];
        return row === undefined ? null : (JSON.parse(row.data) as EntityRecords[typeof entity]);
      },
      // The WHERE clauses are the SQLite store's (`?` placeholders, indexed columns by the same names).
      select: async <E extends EntityName>(entity: E, where: string, params: readonly unknown[] = [], suffix = "") =>
        (
          await read<{ data: string }>(
            numberedPlaceholders(`SELECT data FROM ${ENTITY_TABLES[entity].table} WHERE ${where} ${suffix}`),
            params,
          )
        ).map((row) => JSON.parse(row.data) as EntityRecords[E]),
      count: async (entity, where, params = []) =>
        (
          await read<{ n: number }>(
            numberedPlaceholders(`SELECT COUNT(*)::integer AS n FROM ${ENTITY_TABLES[entity].table} WHERE ${where}`),
            params,
          )
        )[0]!.n,
      exists: async (entity, where, params = []) =>
        (
          await read<{ found: boolean }>(
            numberedPlaceholders(
              `SELECT EXISTS (SELECT 1 FROM ${ENTITY_TABLES[entity].table} WHERE ${where}) AS found`,
            ),
            params,
          )
        )[0]!.found,
      receipt: async (commandId) => {
        // Held until the unit ends: another store's unit asking for the same id waits here for
        // this one's commit and then reads its receipt, instead of running the command again.
        await read(LOCK_COMMAND_SQL, [JSON.stringify(["command", commandId])]);
        const row = (await read<ReceiptRow>("SELECT * FROM command_receipts WHERE command_id = $1", [commandId]))[0];
        return row === undefined ? null : toReceipt(row);
      },
      environmentId: () => this.environmentId(),
      flush: () => unit.flush(),
      nested: (body) =>
        nestedUnits.run(async () => {
          // The savepoint comes after what the outer unit buffered, which it keeps.
          await unit.flush();
          const client = await unit.connection.client();
          const mark = unit.writes.mark();
          await client.query("SAVEPOINT nested_unit");
          try {
            const result = await body(this.asyncWork(unit));
            await client.query("RELEASE SAVEPOINT nested_unit");
            return result;
          } catch (error) {
            await unit.locked(async () => {
              unit.writes.rollBackTo(mark);
              await client.query("ROLLBACK TO SAVEPOINT nested_unit");
              await client.query("RELEASE SAVEPOINT nested_unit");
            });
            throw asTransactionConflict(error);
          }
        }),
    };
    return work;
  }

  // ---- reads outside a unit of work: what has committed ----

  async get<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E] | null> {
    const row = (
      await this.pool.query<{ data: string }>(`SELECT data FROM ${ENTITY_TABLES[entity].table} WHERE id = $1`, [id])
    ).rows[0];
    return row === undefined ? null : (JSON.parse(row.data) as EntityRecords[E]);
  }

  /**
   * The safe position: the highest sequence at or below which every event has committed or
   * never will (its transaction rolled back). An event committed above a transaction still
   * open is not counted until that transaction ends; `eventsAfter(lastSequence())` never skips.
   */
  lastSequence(): Promise<number> {
    return this.tailReads.run(async () => {
      await readOn(this.tail, TAIL_BATCH, () => undefined);
      return this.tail.position;
    });
  }

  /** Committed events after `sequence`, in sequence order, stopping before any gap a transaction still open may fill. */
  async eventsAfter(sequence: number, limit = 1000): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    await readOn(new OrderedEventReader(this.pool, sequence), limit, (read) => events.push(...read), limit);
    return events;
  }

  async receipt(commandId: string): Promise<CommandReceipt | null> {
    const row = (await this.pool.query<ReceiptRow>("SELECT * FROM command_receipts WHERE command_id = $1", [commandId]))
      .rows[0];
    return row === undefined ? null : toReceipt(row);
  }

  /**
   * This database's environment id, created by the first store that asks (on the pool, in a
   * statement of its own: the id must not vanish with a unit of work that rolls back).
   */
  environmentId(): Promise<string> {
    this.environment ??= (async () => {
      await this.pool.query(
        "INSERT INTO settings (key, value) VALUES ('environment_id', $1) ON CONFLICT (key) DO NOTHING",
        [`env_${randomBytes(8).toString("hex")}`],
      );
      return (await this.pool.query<{ value: string }>("SELECT value FROM settings WHERE key = 'environment_id'"))
        .rows[0]!.value;
    })();
    // A failed read is not kept: the next caller tries again.
    this.environment.catch(() => (this.environment = null));
    return this.environment;
  }

  // ---- the outbox (SQLite's semantics) ----

  /** The oldest unfinished effect of each lane that is due and not already claimed. */
  async dueEffects(nowMs: number): Promise<OutboxEffect[]> {
    const rows = await this.pool.query<OutboxRow>(
      `SELECT o.* FROM outbox o JOIN (${HEADS_SQL}) head ON head.seq = o.seq
       WHERE o.status = 'pending' AND o.available_at <= $1 ORDER BY o.seq`,
      [nowMs],
    );
    return rows.rows.map(toEffect);
  }

  /** `dueEffects` and when the earliest of the other pending effects is due, in one statement. */
  async outboxAgenda(nowMs: number): Promise<OutboxAgenda> {
    const rows = (
      await this.pool.query<OutboxRow & { later_due_at: number | null }>(
        `WITH head AS (${HEADS_SQL}),
           due AS (SELECT o.* FROM outbox o JOIN head ON head.seq = o.seq WHERE o.status = 'pending' AND o.available_at <= $1)
         SELECT later.due_at AS later_due_at, due.* FROM
           (SELECT MIN(available_at) AS due_at FROM outbox WHERE status = 'pending' AND seq NOT IN (SELECT seq FROM due)) later
           LEFT JOIN due ON true
           ORDER BY due.seq`,
        [nowMs],
      )
    ).rows;
    return { due: rows.filter((row) => row.seq !== null).map(toEffect), laterDueAt: rows[0]?.later_due_at ?? null };
  }

  async nextEffectDueAt(): Promise<number | null> {
    return (
      await this.pool.query<{ t: number | null }>("SELECT MIN(available_at) AS t FROM outbox WHERE status = 'pending'")
    ).rows[0]!.t;
  }

  /**
   * Marks an effect claimed; false when it is not pending (another worker, on any connection,
   * claimed it first: the status guard makes one UPDATE win, the other finds no pending row).
   */
  async claimEffect(id: string, nowMs: number): Promise<boolean> {
    const result = await this.pool.query(
      "UPDATE outbox SET status = 'claimed', claimed_at = $1, attempts = attempts + 1, updated_at = $2 WHERE id = $3 AND status = 'pending' RETURNING id",
      [nowMs, new Date(nowMs).toISOString(), id],
    );
    return result.rowCount === 1;
  }

  async settleEffect(
    id: string,
    status: "done" | "failed" | "abandoned",
    error: string | null,
    nowIso: string,
  ): Promise<void> {
    await this.pool.query("UPDATE outbox SET status = $1, last_error = $2, updated_at = $3 WHERE id = $4", [
      status,
      error,
      nowIso,
      id,
    ]);
  }

  /** Puts an effect back for a later retry: its seq (its place in the lane) and attempts stay. */
  async retryEffect(id: string, availableAtMs: number, error: string, nowIso: string): Promise<void> {
    await this.pool.query(
      "UPDATE outbox SET status = 'pending', available_at = $1, last_error = $2, updated_at = $3 WHERE id = $4",
      [availableAtMs, error, nowIso, id],
    );
  }

  async unfinishedEffects(): Promise<OutboxEffect[]> {
    return (
      await this.pool.query<OutboxRow>("SELECT * FROM outbox WHERE status IN ('pending', 'claimed') ORDER BY seq")
    ).rows.map(toEffect);
  }

  async effect(id: string): Promise<OutboxEffect | null> {
    const row = (await this.pool.query<OutboxRow>("SELECT * FROM outbox WHERE id = $1", [id])).rows[0];
    return row === undefined ? null : toEffect(row);
  }

  // ---- rebuild ----

  /**
   * Rebuilds every projection from the log, in one transaction (a failure part way leaves the
   * old projections), taken as a unit of work of this store. The log is locked against
   * appends meanwhile (SHARE: other stores' appends wait, reads go on). A projection row is
   * its record's newest upsert, so of a batch's upserts of a record only the last is written.
   * Answers how many events it applied.
   */
  rebuildProjections(): Promise<number> {
    return this.units.run(() =>
      this.inTransaction(async (unit) => {
        const client = await unit.connection.client();
        await client.query("LOCK TABLE events IN SHARE MODE");
        // The rows go and come back (their index rows with them, by the foreign keys): the
        // thread search builds again in bulk at its next catch-up.
        await client.query(POSTGRES_THREAD_SEARCH_STALE_SQL);
        for (const name of ENTITY_NAMES) await client.query(`DELETE FROM ${ENTITY_TABLES[name].table}`);
        let applied = 0;
        let after = 0;
        for (;;) {
          const rows = (
            await client.query<{ sequence: number; entity: EntityName; data: string }>(
              `SELECT sequence, entity, data FROM events WHERE sequence > $1 ORDER BY sequence LIMIT ${REBUILD_BATCH}`,
              [after],
            )
          ).rows;
          if (rows.length === 0) break;
          const finalRows = new Map<EntityName, Map<string, ProjectionValues | null>>();
          for (const row of rows) {
            const record = JSON.parse(row.data) as EntityRecords[EntityName];
            let table = finalRows.get(row.entity);
            if (table === undefined) finalRows.set(row.entity, (table = new Map()));
            table.set((record as { id: string }).id, projectionValues(row.entity, record, row.data, row.sequence));
          }
          for (const [entity, table] of finalRows) {
            await deleteRows(
              client,
              entity,
              [...table].filter(([, values]) => values === null).map(([id]) => id),
            );
            await upsertRows(
              client,
              entity,
              [...table.values()].filter((values): values is ProjectionValues => values !== null),
            );
          }
          applied += rows.length;
          after = rows.at(-1)!.sequence;
        }
        return applied;
      }),
    );
  }

  /** Ends the pool (every connection); a unit of work still open rolls back and fails. */
  async close(): Promise<void> {
    for (const connection of this.openUnits) await connection.abandon();
    if (!this.pool.ended) await this.pool.end();
  }
}

/**
 * A store on the database at `url`: a pool, the schema migrated to the newest version (under
 * the migration lock, so stores starting together migrate once), and the store over them.
 */
export async function openPostgresEventStore(
  url: string,
  options: PostgresPoolOptions = {},
): Promise<PostgresEventStore> {
  const pool = openPostgresPool(url, options);
  try {
    await migratePostgres(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return new PostgresEventStore(pool);
}

/**
 * Reads `reader` onwards until it has handed on `limit` events or stops: at the log's end, or at
 * a gap it read twice (the second read settles a gap whose transaction already ended).
 */
async function readOn(
  reader: OrderedEventReader,
  batch: number,
  take: (events: readonly StoredEvent[]) => void,
  limit = Number.POSITIVE_INFINITY,
): Promise<void> {
  let taken = 0;
  let settling = false;
  while (taken < limit) {
    const asked = Math.min(batch, limit - taken);
    const read = await reader.read(asked);
    take(read.events);
    taken += read.events.length;
    // Fewer than asked, and no gap: the end of the log.
    if (read.waitingAt === null) {
      if (read.events.length < asked) return;
      continue;
    }
    if (read.events.length > 0) settling = false;
    else if (settling) return;
    else settling = true;
  }
}

function toReceipt(row: ReceiptRow): CommandReceipt {
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
