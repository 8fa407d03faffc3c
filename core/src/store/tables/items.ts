import type { TableHost, TableSql } from "../table-sql.js";
import type { TimelineItemKind } from "../records.js";

/** Which way a thread's timeline is read from a position. */
export type ItemDirection = "after" | "before";

function kindFilter(kinds: readonly TimelineItemKind[] | null): string {
  return kinds === null ? "" : ` AND kind IN (${kinds.map(() => "?").join(", ")})`;
}

/** An item's row: its record's JSON, which a reader parses only as far as it reads (items can be large). */
export interface ItemRow {
  readonly data: string;
}

/** A thread's timeline (`items`), read by position. */
export class ItemsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** The highest position in a thread's timeline, or 0 when it has none. */
  async lastPosition(threadId: string): Promise<number> {
    return (await this.sql.get<{ p: number }>("SELECT COALESCE(MAX(position), 0) AS p FROM items WHERE thread_id = ?", [
      threadId,
    ]))!.p;
  }

  /**
   * Up to `limit` items of a thread (of `kinds`, or every kind) after or before a position,
   * nearest first: ascending after it, descending before it.
   */
  async page(
    threadId: string,
    kinds: readonly TimelineItemKind[] | null,
    direction: ItemDirection,
    position: number,
    limit: number,
  ): Promise<ItemRow[]> {
    const sql =
      direction === "after"
        ? `SELECT data FROM items WHERE thread_id = ?${kindFilter(kinds)} AND position > ? ORDER BY position ASC LIMIT ?`
        : `SELECT data FROM items WHERE thread_id = ?${kindFilter(kinds)} AND position < ? ORDER BY position DESC LIMIT ?`;
    return this.sql.all<ItemRow>(sql, [threadId, ...(kinds ?? []), position, limit]);
  }

  /** How many items of a thread (of `kinds`, or every kind) lie after or before a position. */
  async countBeyond(
    threadId: string,
    kinds: readonly TimelineItemKind[] | null,
    direction: ItemDirection,
    position: number,
  ): Promise<number> {
    const op = direction === "after" ? ">" : "<";
    return (await this.sql.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM items WHERE thread_id = ?${kindFilter(kinds)} AND position ${op} ?`,
      [threadId, ...(kinds ?? []), position],
    ))!.n;
  }
}
