import { CATCH_UP_BATCH_EVENTS, type ThreadSearchCatchUp, type ThreadSearchIndexing } from "../thread-search-index.js";
import type { PostgresPool } from "./postgres-pool.js";

/** Marks PostgreSQL's index for a bulk build at its next catch-up (`rebuildProjections`). */
export const POSTGRES_THREAD_SEARCH_STALE_SQL = "UPDATE thread_search_watermark SET indexed_through = NULL";

/** What one PostgreSQL catch-up did: SQLite's answer, and how far it applied. */
export interface PostgresThreadSearchCatchUp extends ThreadSearchCatchUp {
  /** The newest event it applied (past `indexedThrough` while a transaction below is still open). */
  readonly appliedThrough: number;
  /** The newest event committed when it began. */
  readonly newest: number;
}

/**
 * PostgreSQL's thread search index (`tsvector` columns under GIN indexes, schema:
 * POSTGRES_THREAD_SEARCH_SQL), kept from a watermark as SQLite's FTS5 index is
 * (docs/decisions/0011): a catch-up reads the threads and items the events past the watermark
 * name, each once, and writes only what changed. Each catch-up is one statement, one round trip
 * (`thread_search_catch_up`, which locks the watermark: one at a time across nodes), through at
 * most {@link CATCH_UP_BATCH_EVENTS} committed events; the watermark stops at the store's safe
 * position (every event at or below it has committed or never will), so an event a transaction
 * still open commits below a later one is read by a later catch-up, never stepped over.
 */
export class PostgresThreadSearchIndex implements ThreadSearchIndexing {
  constructor(
    private readonly pool: PostgresPool,
    /** The store's safe position (`PostgresEventStore.lastSequence`). */
    private readonly safePosition: () => Promise<number>,
  ) {}

  /**
   * One catch-up: through at most `maxEvents` events, or a bulk build after a NULL watermark.
   * `appliedAfter`: the previous batch's `appliedThrough` in a catch-up of several (0 for the first).
   */
  async catchUp(maxEvents = CATCH_UP_BATCH_EVENTS, appliedAfter = 0): Promise<PostgresThreadSearchCatchUp> {
    const safe = await this.safePosition();
    const row = (
      await this.pool.query<{ indexed_through: number; applied_through: number; newest: number; rebuilt: boolean }>(
        "SELECT indexed_through, applied_through, newest, rebuilt FROM thread_search_catch_up($1, $2, $3)",
        [safe, Math.max(1, Math.floor(maxEvents)), appliedAfter],
      )
    ).rows[0]!;
    const appliedThrough = Number(row.applied_through);
    const newest = Number(row.newest);
    return {
      indexedThrough: Number(row.indexed_through),
      rebuilt: row.rebuilt,
      behind: appliedThrough < newest,
      appliedThrough,
      newest,
    };
  }

  /** Catches up through every event committed when it was called, a batch per statement. */
  async catchUpAsync(): Promise<void> {
    let target: number | null = null;
    let appliedAfter = 0;
    for (;;) {
      const step = await this.catchUp(CATCH_UP_BATCH_EVENTS, appliedAfter);
      target ??= step.newest;
      if (!step.behind || step.appliedThrough >= target) return;
      appliedAfter = step.appliedThrough;
    }
  }
}
