import type { TableHost, TableSql } from "../table-sql.js";
import type { ItemRow } from "./items.js";

/**
 * The `subagent` items among a thread's newest items, where the tree views find a thread's
 * provider-native sub-agents. Read from a window of the newest positions: `items` is indexed by
 * (thread_id, position) only, so a kind filter alone would scan a long thread's whole timeline
 * on every read; the window bounds that scan (one MAX over the index, then at most `window`
 * rows), at the price of not listing sub-agents older than it.
 */
export class NativeSubagentItemsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** Up to `limit` `subagent` items among the thread's newest `window` positions, newest first. */
  async newest(threadId: string, window: number, limit: number): Promise<ItemRow[]> {
    return this.sql.all<ItemRow>(
      `SELECT data FROM items WHERE thread_id = ? AND kind = 'subagent'
       AND position > (SELECT COALESCE(MAX(position), 0) FROM items WHERE thread_id = ?) - ?
       ORDER BY position DESC LIMIT ?`,
      [threadId, threadId, window, limit],
    );
  }
}
