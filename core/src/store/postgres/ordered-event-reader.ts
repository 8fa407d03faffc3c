import type { EntityName, EntityRecords, StoredEvent } from "../records.js";
import type { PostgresPool } from "./postgres-pool.js";

/**
 * What one read answered: the events now safe to hand on, in sequence order, each once; and,
 * when the reader stopped short of events already visible, the sequence it waits at.
 */
export interface OrderedRead {
  readonly events: readonly StoredEvent[];
  /** The first sequence the reader could not yet account for (a transaction still open), or null. */
  readonly waitingAt: number | null;
}

interface EventRow {
  readonly xmin: string;
  readonly sequence: number | null;
  readonly type: string | null;
  readonly entity: EntityName | null;
  readonly thread_id: string | null;
  readonly command_id: string | null;
  readonly data: string | null;
  readonly created_at: string | null;
}

/**
 * The events after a position, in one snapshot, with that snapshot's xmin (the oldest
 * transaction still running): one statement, so both describe the same moment.
 */
const READ_SQL = `
SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, e.*
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
  SELECT sequence, type, entity, thread_id, command_id, data, created_at
  FROM events WHERE sequence > $1 ORDER BY sequence LIMIT $2
) AS e ON true
ORDER BY e.sequence`;

/**
 * A gap the reader saw, and the transaction id it drew right after: every sequence below
 * `below` was drawn before `marker` was (sequences and xids only grow), by a transaction whose
 * xid came before its sequence (next_event_sequence()), so once the oldest running transaction
 * is past `marker`, each of those numbers is committed and visible, or never will be.
 */
interface PendingGap {
  readonly marker: bigint;
  readonly below: number;
}

/**
 * The ordered stream of decision 0010 on PostgreSQL: every committed event once, in sequence
 * order, though transactions commit out of sequence order.
 *
 * With several writers a sequence is drawn when a row is inserted, not when it commits, so
 * "everything after N" can show N+2 while N+1's transaction is still open; a reader that moved
 * past N+1 would never see it (issue 34 measured 20-25% of events missed by such a reader under
 * 200 writers). This one stops at a gap, draws a transaction id (the marker), and steps over
 * the gap only once `pg_snapshot_xmin` of a later snapshot is past the marker: then no
 * transaction that could hold a missing number is still running, and a number still missing in
 * that snapshot was rolled back (or drawn by a statement that failed). Not the snapshot's xmax:
 * xmax says which transactions had started, not which had finished, and a reader using it
 * still missed events.
 *
 * Not safe for concurrent `read` calls on one reader (it keeps one position); a consumer owns one.
 */
export class OrderedEventReader {
  #position: number;
  #gap: PendingGap | null = null;

  constructor(
    private readonly pool: PostgresPool,
    /** The last sequence already handed on (0 for the log's start). */
    position = 0,
  ) {
    this.#position = position;
  }

  /** The last sequence handed on. */
  get position(): number {
    return this.#position;
  }

  /** The next events safe to hand on (at most `limit`), advancing the position past them. */
  async read(limit = 1000): Promise<OrderedRead> {
    const rows = (await this.pool.query<EventRow>(READ_SQL, [this.#position, limit])).rows;
    const xmin = BigInt(rows[0]!.xmin);
    const gapSettled = this.#gap !== null && xmin > this.#gap.marker;
    const events: StoredEvent[] = [];
    let highestSeen = this.#position;
    let waitingAt: number | null = null;
    for (const row of rows) {
      if (row.sequence === null) break; // No event after the position: the LEFT JOIN's empty row.
      highestSeen = row.sequence;
      if (waitingAt !== null) continue;
      const contiguous = row.sequence === this.#position + 1;
      // A missing number below the settled gap's bound is gone for good; step over it.
      if (!contiguous && !(gapSettled && row.sequence <= this.#gap!.below)) {
        waitingAt = this.#position + 1;
        continue;
      }
      events.push(toEvent(row));
      this.#position = row.sequence;
    }
    // A gap is done with once the position reached its bound, or, settled, once this read saw
    // past the bound or saw everything there is (a settled gap stays settled: xmin only grows).
    const sawAll = rows.filter((row) => row.sequence !== null).length < limit;
    if (
      this.#gap !== null &&
      (this.#position >= this.#gap.below - 1 || (gapSettled && (highestSeen > this.#gap.below || sawAll)))
    )
      this.#gap = null;
    if (waitingAt !== null && this.#gap === null) this.#gap = { marker: await this.drawMarker(), below: highestSeen };
    return { events, waitingAt };
  }

  /** A fresh transaction id, newer than every one assigned before this call. */
  private async drawMarker(): Promise<bigint> {
    const row = (await this.pool.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]!;
    return BigInt(row.xid);
  }
}

function toEvent(row: EventRow): StoredEvent {
  return {
    sequence: row.sequence!,
    type: row.type as StoredEvent["type"],
    entity: row.entity!,
    threadId: row.thread_id,
    commandId: row.command_id,
    record: JSON.parse(row.data!) as EntityRecords[EntityName],
    createdAt: row.created_at!,
  };
}
