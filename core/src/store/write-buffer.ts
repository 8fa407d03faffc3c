import type Database from "better-sqlite3";
import { ENTITY_NAMES, ENTITY_TABLES } from "./entity-tables.js";
import { key, type ProjectionRow } from "./identity-map.js";
import type { EntityName } from "./records.js";

/** An event appended inside a transaction, not yet inserted. */
export interface BufferedEvent {
  readonly sequence: number;
  readonly type: string;
  readonly entity: EntityName;
  readonly id: string;
  readonly threadId: string | null;
  readonly commandId: string | null;
  readonly data: string;
  readonly createdAt: string;
  /**
   * The sequence of the record's previous event (null: none); undefined when the transaction
   * does not know the record's row, so the insert reads it from the row (which is why a flush
   * writes events before rows).
   */
  readonly previous: number | null | undefined;
}

/** A projection row write inside a transaction. */
export interface BufferedRow {
  readonly entity: EntityName;
  readonly id: string;
  /** The row as written (`[last_sequence, ...columns, data]`); null removes it. */
  row: ProjectionRow | null;
  /**
   * The row in the file before this write, when known (null: none): an update then sets only
   * the columns that changed. Undefined: not known, so the row is upserted whole.
   */
  readonly base: ProjectionRow | null | undefined;
}

/** A buffered write and when it reached the file (0: not yet; else the flush's number). */
interface Entry<T> {
  readonly write: T;
  flushedAt: number;
}

/**
 * One level of a transaction as the buffer sees it: the outermost (index 0, BEGIN IMMEDIATE) or
 * a savepoint. A savepoint is opened in SQLite only when one of its own writes must reach the
 * file while it is open (a read that must see it, a write that is not buffered, or its end):
 * one that wrote nothing costs no statement.
 */
interface BufferLevel {
  /** Where its own events and rows start in the buffer. */
  readonly eventMark: number;
  readonly rowMark: number;
  /** The next sequence when it began, given back if it rolls back. */
  readonly sequenceMark: number | null;
  /** The flush count when its SAVEPOINT ran; null while it has not (always 0 for the outermost). */
  openedAt: number | null;
}

/** Rows per multi-row statement; larger batches are split, so each size's statement is prepared once. */
export const FLUSH_BATCH_ROWS = 32;

/**
 * The writes of one outermost transaction that have not reached the file yet: its events (their
 * sequences assigned here, from the last one the file holds) and its projection rows (one write
 * per row however often a level wrote it). They are written at the commit, at the end of the
 * savepoint that made them (inside it, so that a write that fails, a unique index, fails that
 * savepoint alone), and before a statement that names a table they would change: the events
 * in one multi-row INSERT, each table's rows in one multi-row upsert. A savepoint that rolls back
 * drops what it buffered, rolls back in SQLite what was written while it was open, and marks the
 * outer levels' writes among those unwritten again.
 */
export class WriteBuffer {
  private readonly events: Entry<BufferedEvent>[] = [];
  private readonly rows: Entry<BufferedRow>[] = [];
  /** The latest write of each row in `rows`, by key. */
  private readonly latest = new Map<string, number>();
  private readonly levels: BufferLevel[] = [{ eventMark: 0, rowMark: 0, sequenceMark: null, openedAt: 0 }];
  /** The sequence the next event gets; null until the first append asks (one read). */
  private next: number | null = null;
  /** Flushes so far (each one's writes carry its number). */
  private flushes = 0;
  /** Unwritten entries: a statement that meets none of them costs nothing more. */
  private unwrittenEvents = 0;
  private unwrittenRows = 0;

  /**
   * `lastSequence` reads the sequence the file last assigned (AUTOINCREMENT's, which a deleted
   * event does not give back), the first time one is needed.
   */
  constructor(
    private readonly writer: FlushWriter,
    private readonly lastSequence: () => number,
  ) {}

  /** The sequence assigned last (by this transaction or before it), or null when none was read. */
  get lastAssigned(): number | null {
    return this.next === null ? null : this.next - 1;
  }

  /** Whether anything is waiting to be written. */
  get pending(): boolean {
    return this.unwrittenEvents > 0 || this.unwrittenRows > 0;
  }

  nextSequence(): number {
    this.next ??= this.lastSequence() + 1;
    return this.next++;
  }

  addEvent(event: BufferedEvent): void {
    this.events.push({ write: event, flushedAt: 0 });
    this.unwrittenEvents += 1;
  }

  /** Buffers a row write; a second write of the row in the same level, unwritten, replaces the first. */
  addRow(entity: EntityName, id: string, row: ProjectionRow | null, base: ProjectionRow | null | undefined): void {
    const rowKey = key(entity, id);
    const at = this.latest.get(rowKey);
    const top = this.levels[this.levels.length - 1]!;
    // Only an unwritten write of this level: an outer level's must survive this one's rollback,
    // and a removal followed by a write must delete before it inserts (the row's rowid is new).
    if (at !== undefined && at >= top.rowMark && this.rows[at]!.flushedAt === 0 && this.rows[at]!.write.row !== null) {
      this.rows[at]!.write.row = row;
      return;
    }
    this.latest.set(rowKey, this.rows.length);
    this.rows.push({ write: { entity, id, row, base }, flushedAt: 0 });
    this.unwrittenRows += 1;
  }

  /** A savepoint begins: nothing runs in SQLite until it must. */
  beginLevel(): void {
    this.levels.push({
      eventMark: this.events.length,
      rowMark: this.rows.length,
      sequenceMark: this.next,
      openedAt: null,
    });
  }

  /**
   * The innermost savepoint ends well: its writes are written inside it, then it is released, if
   * it was ever opened. Its writes (written) become its parent's.
   */
  releaseLevel(): void {
    const depth = this.levels.length - 1;
    const level = this.levels[depth]!;
    if (this.hasUnwritten(level)) this.write(null, level.rowMark, depth);
    if (level.openedAt !== null) this.writer.exec(`RELEASE ${savepointName(depth)}`);
    this.levels.pop();
  }

  /**
   * The innermost savepoint rolls back: what it buffered goes; what was written while it was
   * open is rolled back in SQLite, and the outer levels' writes among that are unwritten again.
   * Returns the rows still unwritten, which reads must still see.
   */
  rollbackLevel(connectionInTransaction: boolean): readonly BufferedRow[] {
    const depth = this.levels.length - 1;
    const level = this.levels.pop()!;
    if (level.openedAt !== null && connectionInTransaction)
      this.writer.exec(`ROLLBACK TO ${savepointName(depth)}; RELEASE ${savepointName(depth)}`);
    this.events.length = level.eventMark;
    this.rows.length = level.rowMark;
    this.next = level.sequenceMark;
    const openedAt = level.openedAt;
    for (const entry of [...this.events, ...this.rows])
      if (openedAt !== null && entry.flushedAt > openedAt) entry.flushedAt = 0;
    this.unwrittenEvents = this.events.filter((entry) => entry.flushedAt === 0).length;
    this.unwrittenRows = this.rows.filter((entry) => entry.flushedAt === 0).length;
    this.latest.clear();
    this.rows.forEach((entry, index) => this.latest.set(key(entry.write.entity, entry.write.id), index));
    return this.rows.filter((entry) => entry.flushedAt === 0).map((entry) => entry.write);
  }

  /**
   * Brings the file up to date for a statement about to run. `tables`: the entity tables it
   * names (their unwritten rows are written first, after the unwritten events), or "all" (every
   * unwritten write, and the events table: a read of the log). `writes`: the statement writes,
   * so it belongs to the innermost level, whose savepoints must be open first.
   */
  flushFor(tables: ReadonlySet<EntityName> | "all", writes: boolean): void {
    if (this.pending) {
      if (tables === "all") this.write(null, 0, this.levels.length - 1);
      else if (this.unwrittenRows > 0 && tables.size > 0) this.write(tables, 0, this.levels.length - 1);
    }
    if (writes) this.openThrough(this.levels.length - 1);
  }

  /** Whether the level has writes of its own that have not reached the file. */
  private hasUnwritten(level: BufferLevel): boolean {
    for (let index = level.eventMark; index < this.events.length; index += 1)
      if (this.events[index]!.flushedAt === 0) return true;
    for (let index = level.rowMark; index < this.rows.length; index += 1)
      if (this.rows[index]!.flushedAt === 0) return true;
    return false;
  }

  /**
   * Writes the unwritten rows of `tables` (null: of every table) from `rowStart` on, after every
   * unwritten event (an event may read its link from a row about to change); with nothing of
   * the rows to write and `tables` given, writes nothing. Opens first the savepoints the writes
   * belong to, up to `maxDepth`.
   */
  private write(tables: ReadonlySet<EntityName> | null, rowStart: number, maxDepth: number): void {
    const rows: number[] = [];
    for (let index = rowStart; index < this.rows.length; index += 1) {
      const entry = this.rows[index]!;
      if (entry.flushedAt === 0 && (tables === null || tables.has(entry.write.entity))) rows.push(index);
    }
    if (rows.length === 0 && (tables !== null || this.unwrittenEvents === 0)) return;
    const events: number[] = [];
    this.events.forEach((entry, index) => {
      if (entry.flushedAt === 0) events.push(index);
    });
    // The deepest level owning a write about to be made: its savepoint must be open to undo it.
    const lastRow = rows.length === 0 ? -1 : rows[rows.length - 1]!;
    const lastEvent = events.length === 0 ? -1 : events[events.length - 1]!;
    let deepest = maxDepth;
    while (deepest > 0 && this.levels[deepest]!.rowMark > lastRow && this.levels[deepest]!.eventMark > lastEvent)
      deepest -= 1;
    this.openThrough(deepest);
    this.flushes += 1;
    if (events.length > 0) {
      this.writer.insertEvents(events.map((index) => this.events[index]!.write));
      for (const index of events) this.events[index]!.flushedAt = this.flushes;
      this.unwrittenEvents = 0;
    }
    if (rows.length > 0) {
      this.writer.writeRows(rows.map((index) => this.rows[index]!.write));
      for (const index of rows) this.rows[index]!.flushedAt = this.flushes;
      this.unwrittenRows -= rows.length;
    }
  }

  /** Opens every savepoint down to `depth` that has not been opened. */
  private openThrough(depth: number): void {
    for (let index = 1; index <= depth; index += 1) {
      const level = this.levels[index]!;
      if (level.openedAt !== null) continue;
      this.writer.exec(`SAVEPOINT ${savepointName(index)}`);
      level.openedAt = this.flushes;
    }
  }
}

/** The SAVEPOINT a buffer level of this depth opens (1 for the first). */
function savepointName(depth: number): string {
  return `store_level_${depth}`;
}

/** What a flush runs on: the store's connection. */
export interface FlushWriter {
  exec(sql: string): void;
  insertEvents(events: readonly BufferedEvent[]): void;
  writeRows(rows: readonly BufferedRow[]): void;
}

/** The event columns a flush binds for each event, in order. */
const EVENT_COLUMNS = "sequence, type, entity, entity_id, thread_id, command_id, data, created_at";

/**
 * Multi-row INSERTs of events, one prepared statement per batch size up to FLUSH_BATCH_ROWS. Each
 * event's link to its record's previous event is bound when known; otherwise (flag 1) it is read
 * from the record's row in the entity's table, which a CASE over the entity picks.
 */
export class EventInserts {
  private readonly bySize = new Map<number, Database.Statement>();
  /** One-event inserts: "" for a bound link, else the entity whose row the link is read from. */
  private readonly single = new Map<string, Database.Statement>();
  private readonly lookup: string;

  constructor(private readonly db: Database.Database) {
    const branches = ENTITY_NAMES.map(
      (name) => `WHEN '${name}' THEN (SELECT last_sequence FROM ${ENTITY_TABLES[name].table} WHERE id = v.column4)`,
    ).join(" ");
    this.lookup = `CASE WHEN v.column10 = 0 THEN v.column9 ELSE CASE v.column3 ${branches} END END`;
  }

  run(events: readonly BufferedEvent[]): void {
    if (events.length === 1) return this.runOne(events[0]!);
    for (let start = 0; start < events.length; start += FLUSH_BATCH_ROWS) {
      const batch = events.slice(start, start + FLUSH_BATCH_ROWS);
      const values: (string | number | null)[] = [];
      for (const event of batch)
        values.push(
          event.sequence,
          event.type,
          event.entity,
          event.id,
          event.threadId,
          event.commandId,
          event.data,
          event.createdAt,
          event.previous ?? null,
          event.previous === undefined ? 1 : 0,
        );
      this.statement(batch.length).run(values);
    }
  }

  /**
   * One event (most transactions append one): a plain INSERT, its link bound or read from its
   * record's row in a subquery of the entity's own, cheaper than the CASE over every table.
   */
  private runOne(event: BufferedEvent): void {
    const values = [
      event.sequence,
      event.type,
      event.entity,
      event.id,
      event.threadId,
      event.commandId,
      event.data,
      event.createdAt,
    ];
    const shape = event.previous === undefined ? event.entity : "";
    let statement = this.single.get(shape);
    if (statement === undefined) {
      const previous =
        event.previous === undefined
          ? `(SELECT last_sequence FROM ${ENTITY_TABLES[event.entity].table} WHERE id = ?)`
          : "?";
      statement = this.db.prepare(
        `INSERT INTO events (${EVENT_COLUMNS}, previous_sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${previous})`,
      );
      this.single.set(shape, statement);
    }
    statement.run(...values, event.previous === undefined ? event.id : event.previous);
  }

  private statement(size: number): Database.Statement {
    let statement = this.bySize.get(size);
    if (statement === undefined) {
      const rows = Array.from({ length: size }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
      statement = this.db.prepare(
        `INSERT INTO events (${EVENT_COLUMNS}, previous_sequence) SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8, ${this.lookup} FROM (VALUES ${rows}) v ORDER BY v.column1`,
      );
      this.bySize.set(size, statement);
    }
    return statement;
  }
}

/** Multi-row upserts of one entity table's rows, one prepared statement per batch size. */
export class RowUpserts {
  private readonly bySize = new Map<number, Database.Statement>();
  private readonly columns: readonly string[];

  constructor(
    private readonly db: Database.Database,
    private readonly table: string,
    columnNames: readonly string[],
  ) {
    this.columns = [...columnNames, "data", "last_sequence"];
  }

  /** Writes whole rows (`[last_sequence, ...columns, data]`), inserted in this order. */
  run(rows: readonly ProjectionRow[]): void {
    for (let start = 0; start < rows.length; start += FLUSH_BATCH_ROWS) {
      const batch = rows.slice(start, start + FLUSH_BATCH_ROWS);
      const values: (string | number | null)[] = [];
      for (const row of batch) {
        for (let index = 1; index < row.length; index += 1) values.push(row[index]!);
        values.push(row[0]!);
      }
      this.statement(batch.length).run(values);
    }
  }

  private statement(size: number): Database.Statement {
    let statement = this.bySize.get(size);
    if (statement === undefined) {
      const row = `(${this.columns.map(() => "?").join(", ")})`;
      const updates = this.columns.filter((c) => c !== "id").map((c) => `${c} = excluded.${c}`);
      statement = this.db.prepare(
        `INSERT INTO ${this.table} (${this.columns.join(", ")}) VALUES ${Array.from({ length: size }, () => row).join(", ")} ON CONFLICT(id) DO UPDATE SET ${updates.join(", ")}`,
      );
      this.bySize.set(size, statement);
    }
    return statement;
  }
}
