import { key, type ProjectionRow } from "./identity-map.js";
import type { EntityName } from "./records.js";

/**
 * Projection rows as this connection's committed transactions left them, by entity and id (null:
 * known to have no row), so that the next transaction's reads of the same records (a run, its
 * thread, its attempt: each command and ingestor tick reads them again) cost nothing, and an
 * append to one needs no read of its current row.
 *
 * Whether another connection has committed since they were known is the store's one answer to
 * that question, `PRAGMA data_version`: a transaction checks them against it as read after its
 * BEGIN IMMEDIATE (one statement per transaction that uses them; a transaction holds the write
 * lock, so nobody commits while it runs), and a read by id outside transactions against the
 * reading of the event-loop turn that committed query results are checked against too
 * (`Store.dataVersionThisTurn`). This connection's own writes to entity tables all go through
 * `Store.append` and `Store.forget`, whose rows a transaction hands over here when it commits, or
 * a rebuild, which clears them. A transaction that rolls back hands over nothing, and a savepoint
 * that rolls back clears them, since which rows its transaction wrote before it is not tracked.
 * Raw access to the connection (`Store.db`, tests' fixtures) clears them too.
 */
export class CommittedRows {
  private readonly rows = new Map<string, ProjectionRow | null>();
  private heldChars = 0;
  /** The data version the rows were known under; null until a transaction first checked it. */
  private dataVersion: number | null = null;
  /**
   * The sequence this connection's last transaction that appended assigned last (so the next
   * one numbers its events without reading the file); null when not known. Held, and dropped,
   * with the rows.
   */
  lastSequence: number | null = null;

  /** Beyond this many characters of rows (their JSON mostly), they start over. */
  private static readonly MAX_CHARS = 4_000_000;

  /**
   * Called once per transaction, with the connection's data version read inside it, before the
   * first row is taken: rows known under another version (another connection committed since,
   * or none was known) are dropped.
   */
  checked(dataVersion: number): void {
    if (this.dataVersion !== dataVersion) this.clear();
    this.dataVersion = dataVersion;
  }

  /** Whether there is anything a transaction could take (so whether checking is worth a statement). */
  get isEmpty(): boolean {
    return this.rows.size === 0 && this.lastSequence === null;
  }

  /** The known row of a record (null: known to have none), or undefined when not known. */
  row(entity: EntityName, id: string): ProjectionRow | null | undefined {
    return this.rows.get(key(entity, id));
  }

  /**
   * A committed transaction's rows (what it read and wrote, as they stand at its commit). They
   * hold under the version last checked as long as no other connection committed since, which
   * the next check finds out; rows committed before any check are dropped by the first.
   */
  committed(rows: Iterable<readonly [string, ProjectionRow | null]>): void {
    for (const [rowKey, row] of rows) {
      const previous = this.rows.get(rowKey);
      if (previous !== undefined && previous !== null) this.heldChars -= charsOf(previous);
      this.rows.set(rowKey, row);
      if (row !== null) this.heldChars += charsOf(row);
    }
    if (this.heldChars > CommittedRows.MAX_CHARS) this.clear();
  }

  clear(): void {
    this.rows.clear();
    this.lastSequence = null;
    this.heldChars = 0;
  }
}

function charsOf(row: ProjectionRow): number {
  const data = row[row.length - 1];
  return typeof data === "string" ? data.length : 0;
}
