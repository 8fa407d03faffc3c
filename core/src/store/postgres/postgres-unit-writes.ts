import { ENTITY_TABLES, type EntityTable } from "../entity-tables.js";
import type { CommandReceipt, RecordUpsert } from "../ports.js";
import type { EntityName, StoredEvent } from "../records.js";
import type { PostgresClient } from "./postgres-pool.js";
import {
  deleteRows,
  placeholders,
  projectionValues,
  type ProjectionValues,
  upsertRows,
} from "./postgres-projection-rows.js";

/** An appended event before its flush numbers it: `sequence` is 0 until then. */
type UnnumberedEvent = { -readonly [K in keyof StoredEvent]: StoredEvent[K] };

/** An effect as a unit of work queues it, due at `availableAt` (epoch ms). */
export interface QueuedEffect {
  readonly id: string;
  readonly lane: string;
  readonly type: string;
  readonly payload: unknown;
  readonly availableAt: number;
  readonly createdAt: string;
}

type Write =
  | { readonly kind: "event"; readonly event: UnnumberedEvent; readonly id: string; readonly data: string }
  | { readonly kind: "receipt"; readonly receipt: CommandReceipt }
  | { readonly kind: "effect"; readonly effect: QueuedEffect }
  | { readonly kind: "forget"; readonly entity: EntityName; readonly ids: readonly string[] };

const EVENT_COLUMNS = [
  "sequence",
  "type",
  "entity",
  "entity_id",
  "thread_id",
  "command_id",
  "data",
  "created_at",
  "previous_sequence",
];
const RECEIPT_COLUMNS = [
  "command_id",
  "operation",
  "request_hash",
  "result",
  "first_sequence",
  "last_sequence",
  "created_at",
];
const EFFECT_COLUMNS = [
  "id",
  "lane",
  "type",
  "payload",
  "status",
  "attempts",
  "available_at",
  "created_at",
  "updated_at",
];
const ROWS_PER_STATEMENT = 1_000;

/**
 * Sequences for `$1` events, drawn by `next_event_sequence()` (the transaction's id first: the
 * safe-position reader's rule), ascending.
 */
const DRAW_SEQUENCES_SQL =
  "SELECT next_event_sequence() AS sequence FROM generate_series(1, $1::integer) ORDER BY sequence";

/**
 * Transaction-scoped advisory locks on the records a flush writes, in one order (no deadlock
 * between flushes that lock the same records): a record's events get their sequences in the
 * order their transactions commit, so its row's `last_sequence` and its events' links agree
 * with the log, as SQLite's single writer gives them.
 */
const LOCK_RECORDS_SQL =
  "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) FROM (SELECT DISTINCT unnest($1::text[]) AS k ORDER BY k) AS keys";

/**
 * Removes records' events (each row's chain of links back to the record's first upsert) and
 * the receipts of the commands that wrote them; `$1` the ids, in the entity's table.
 */
const forgetChainSql = (table: string) => `
WITH RECURSIVE chain(sequence) AS (
  SELECT last_sequence FROM ${table} WHERE id = ANY($1::text[]) AND last_sequence IS NOT NULL
  UNION ALL
  SELECT e.previous_sequence FROM events e JOIN chain c ON e.sequence = c.sequence WHERE e.previous_sequence IS NOT NULL
), gone AS (
  DELETE FROM events WHERE sequence IN (SELECT sequence FROM chain) RETURNING command_id
)
DELETE FROM command_receipts WHERE command_id IN (SELECT command_id FROM gone WHERE command_id IS NOT NULL)`;

/** A record as one text (the advisory lock hashes it): unambiguous whatever its id holds. */
const recordKey = (entity: EntityName, id: string) => JSON.stringify([entity, id]);

/**
 * The writes of one PostgreSQL unit of work, buffered as they are made (the port's writes are
 * synchronous) and flushed in order on the unit's connection: before any read of the unit and
 * at its commit. A flush draws the events' sequences, inserts the events, receipts and effects
 * in one multi-row statement per table, and writes each record's final row once (an upsert, or
 * a delete for a tombstone); a `forget` is run where it was called, after what came before it.
 */
export class UnitWrites {
  private writes: Write[] = [];
  /** Each record's `last_sequence` as this unit knows it (null: no row); others are read at flush. */
  private readonly lastSequences = new Map<string, number | null>();
  /** The events flushed, in order: what listeners hear after the commit. */
  readonly flushed: StoredEvent[] = [];

  /** A position to roll back to (a nested unit of work's start). */
  mark(): { readonly writes: number; readonly flushed: number } {
    return { writes: this.writes.length, flushed: this.flushed.length };
  }

  /**
   * Drops what was written since `mark`: the buffered writes, and the flushed events (their
   * rows the savepoint's rollback removes). What the unit knew of rows is read again.
   */
  rollBackTo(mark: { readonly writes: number; readonly flushed: number }): void {
    this.writes.length = Math.min(this.writes.length, mark.writes);
    if (this.flushed.length > mark.flushed) this.lastSequences.clear();
    this.flushed.length = Math.min(this.flushed.length, mark.flushed);
  }

  get empty(): boolean {
    return this.writes.length === 0;
  }

  append(commandId: string | null, upserts: readonly RecordUpsert[], now: string): StoredEvent[] {
    return upserts.map(({ entity, record }) => {
      const spec = ENTITY_TABLES[entity] as EntityTable<EntityName>;
      const id = (record as { id: string }).id;
      const event: UnnumberedEvent = {
        sequence: 0,
        type: `${entity}.upserted`,
        entity,
        threadId: spec.threadId(record),
        commandId,
        record,
        createdAt: now,
      };
      this.writes.push({ kind: "event", event, id, data: JSON.stringify(record) });
      return event;
    });
  }

  putReceipt(receipt: CommandReceipt): void {
    this.writes.push({ kind: "receipt", receipt });
  }

  enqueueEffect(effect: QueuedEffect): void {
    this.writes.push({ kind: "effect", effect });
  }

  forget(entity: EntityName, ids: readonly string[]): void {
    this.writes.push({ kind: "forget", entity, ids: [...ids] });
  }

  /** Writes everything buffered on `client` (inside the unit's transaction), in order. */
  async flush(client: PostgresClient): Promise<void> {
    const writes = this.writes;
    this.writes = [];
    let batch: Write[] = [];
    for (const write of writes) {
      if (write.kind !== "forget") {
        batch.push(write);
        continue;
      }
      await this.writeBatch(client, batch);
      batch = [];
      await this.runForget(client, write.entity, write.ids);
    }
    await this.writeBatch(client, batch);
  }

  private async writeBatch(client: PostgresClient, batch: readonly Write[]): Promise<void> {
    const events = batch.flatMap((write) => (write.kind === "event" ? [write] : []));
    if (events.length > 0) await this.writeEvents(client, events);
    const receipts = batch.flatMap((write) => (write.kind === "receipt" ? [write.receipt] : []));
    for (let start = 0; start < receipts.length; start += ROWS_PER_STATEMENT) {
      const chunk = receipts.slice(start, start + ROWS_PER_STATEMENT);
      await client.query(
        `INSERT INTO command_receipts (${RECEIPT_COLUMNS.join(", ")}) VALUES ${placeholders(chunk.length, RECEIPT_COLUMNS.length)}`,
        chunk.flatMap((receipt) => [
          receipt.commandId,
          receipt.operation,
          receipt.requestHash,
          // A handler that returns nothing still ran: its receipt holds null (JSON has no undefined).
          JSON.stringify(receipt.result ?? null),
          receipt.firstSequence,
          receipt.lastSequence,
          receipt.createdAt,
        ]),
      );
    }
    const effects = batch.flatMap((write) => (write.kind === "effect" ? [write.effect] : []));
    for (let start = 0; start < effects.length; start += ROWS_PER_STATEMENT) {
      const chunk = effects.slice(start, start + ROWS_PER_STATEMENT);
      // Rows take their seq in VALUES order; an id already queued (or twice here) keeps its first.
      await client.query(
        `INSERT INTO outbox (${EFFECT_COLUMNS.join(", ")}) VALUES ${placeholders(chunk.length, EFFECT_COLUMNS.length)} ON CONFLICT (id) DO NOTHING`,
        chunk.flatMap((effect) => [
          effect.id,
          effect.lane,
          effect.type,
          JSON.stringify(effect.payload),
          "pending",
          0,
          effect.availableAt,
          effect.createdAt,
          effect.createdAt,
        ]),
      );
    }
  }

  private async writeEvents(
    client: PostgresClient,
    events: readonly Extract<Write, { kind: "event" }>[],
  ): Promise<void> {
    const keys = events.map((write) => recordKey(write.event.entity, write.id));
    await client.query(LOCK_RECORDS_SQL, [keys]);
    await this.readLastSequences(client, events);
    const sequences = (await client.query<{ sequence: number }>(DRAW_SEQUENCES_SQL, [events.length])).rows.map(
      (row) => row.sequence,
    );
    const eventValues: unknown[][] = [];
    /** Each record's final row in this batch, by table: the last upsert wins, a tombstone deletes. */
    const finalRows = new Map<EntityName, Map<string, ProjectionValues | null>>();
    events.forEach((write, index) => {
      const sequence = sequences[index]!;
      const key = keys[index]!;
      write.event.sequence = sequence;
      eventValues.push([
        sequence,
        write.event.type,
        write.event.entity,
        write.id,
        write.event.threadId,
        write.event.commandId,
        write.data,
        write.event.createdAt,
        this.lastSequences.get(key) ?? null,
      ]);
      const row = projectionValues(write.event.entity, write.event.record, write.data, sequence);
      this.lastSequences.set(key, row === null ? null : sequence);
      let table = finalRows.get(write.event.entity);
      if (table === undefined) finalRows.set(write.event.entity, (table = new Map()));
      table.delete(write.id); // Re-inserted: the map keeps first-write order, which a test may read.
      table.set(write.id, row);
    });
    for (let start = 0; start < eventValues.length; start += ROWS_PER_STATEMENT) {
      const chunk = eventValues.slice(start, start + ROWS_PER_STATEMENT);
      await client.query(
        `INSERT INTO events (${EVENT_COLUMNS.join(", ")}) VALUES ${placeholders(chunk.length, EVENT_COLUMNS.length)}`,
        chunk.flat(),
      );
    }
    for (const [entity, rows] of finalRows) {
      await deleteRows(
        client,
        entity,
        [...rows].filter(([, row]) => row === null).map(([id]) => id),
      );
      await upsertRows(
        client,
        entity,
        [...rows.values()].filter((row): row is ProjectionValues => row !== null),
      );
    }
    this.flushed.push(...events.map((write) => write.event));
  }

  /** Reads the `last_sequence` of the records this unit does not know yet (locked: it cannot move). */
  private async readLastSequences(
    client: PostgresClient,
    events: readonly Extract<Write, { kind: "event" }>[],
  ): Promise<void> {
    const unknown = new Map<EntityName, Set<string>>();
    for (const write of events) {
      if (this.lastSequences.has(recordKey(write.event.entity, write.id))) continue;
      let ids = unknown.get(write.event.entity);
      if (ids === undefined) unknown.set(write.event.entity, (ids = new Set()));
      ids.add(write.id);
    }
    for (const [entity, ids] of unknown) {
      const found = new Map(
        (
          await client.query<{ id: string; last_sequence: number | null }>(
            `SELECT id, last_sequence FROM ${ENTITY_TABLES[entity].table} WHERE id = ANY($1::text[])`,
            [[...ids]],
          )
        ).rows.map((row) => [row.id, row.last_sequence]),
      );
      for (const id of ids) this.lastSequences.set(recordKey(entity, id), found.get(id) ?? null);
    }
  }

  private async runForget(client: PostgresClient, entity: EntityName, ids: readonly string[]): Promise<void> {
    const table = ENTITY_TABLES[entity].table;
    await client.query(forgetChainSql(table), [ids]);
    await client.query(`DELETE FROM ${table} WHERE id = ANY($1::text[])`, [ids]);
    for (const id of ids) this.lastSequences.set(recordKey(entity, id), null);
  }
}
