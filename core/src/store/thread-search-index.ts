import type Database from "better-sqlite3";
import type { EventStore } from "./ports.js";
import { type SqliteEventStore, sqliteStoreOf } from "./sqlite-only.js";
import type { EntityName } from "./records.js";
import type { TableHost } from "./table-sql.js";

/**
 * The item kinds whose text is searched: what the user and the assistant said, and proposed
 * plans. Tool output and reasoning stay out: output is large, machine-made and bounded only by
 * the paged read (a `cat` or `grep` would index whole files and match every search), and
 * reasoning is hidden by default.
 */
export const SEARCHED_ITEM_KINDS = ["user_message", "assistant_message", "proposed_plan"] as const;

/** The full-text tables the index keeps, each keyed by its projection row's rowid. */
const INDEX_TABLES = ["thread_title_search", "item_text_search"] as const;

/**
 * Events a catch-up applies in one transaction at most: a backlog (a server that ran for hours
 * without a search) is caught up in transactions of bounded length, with the engine's commands
 * running between them.
 */
export const CATCH_UP_BATCH_EVENTS = 50_000;

const KINDS_SQL = SEARCHED_ITEM_KINDS.map((kind) => `'${kind}'`).join(", ");

/** Where the index stands and where the log is: one statement, the whole cost of a tick with nothing new. */
const PROGRESS_SQL = `SELECT w.indexed_through AS indexedThrough, (SELECT COALESCE(MAX(sequence), 0) FROM events) AS newest
  FROM thread_search_watermark w`;
const SET_WATERMARK_SQL = "UPDATE thread_search_watermark SET indexed_through = ?";
/** Marks the index for a bulk rebuild at its next catch-up (its rows' rowids are no longer to be trusted). */
export const THREAD_SEARCH_STALE_SQL = "UPDATE thread_search_watermark SET indexed_through = NULL";

/**
 * The threads written after the watermark, each once however often, with its title and the
 * title the index holds (null for none): the index's rowid lookup, not a scan.
 */
const CHANGED_THREADS_SQL = `
  SELECT t.id AS id, t.rowid AS rowid, t.title AS title, t.deleted AS deleted, s.title AS indexed
  FROM (SELECT DISTINCT entity_id FROM events WHERE sequence > ? AND sequence <= ? AND entity = 'thread') c
    JOIN threads t ON t.id = c.entity_id
    LEFT JOIN thread_title_search s ON s.rowid = t.rowid`;

/**
 * The items written after the watermark, each once, with the text to index (null for a kind
 * that is not searched, or an item of a deleted thread; the JSON is parsed for message kinds
 * only, so a tool call's output is never read here) and the text the index holds.
 */
const CHANGED_ITEMS_SQL = `
  SELECT i.rowid AS rowid,
    CASE WHEN i.kind IN (${KINDS_SQL}) AND t.deleted IS NOT 1 THEN json_extract(i.data, '$.text') END AS text,
    s.text AS indexed
  FROM (SELECT DISTINCT entity_id FROM events WHERE sequence > ? AND sequence <= ? AND entity = 'item') c
    JOIN items i ON i.id = c.entity_id
    LEFT JOIN threads t ON t.id = i.thread_id
    LEFT JOIN item_text_search s ON s.rowid = i.rowid`;

/** A deleted thread's items the index still holds. */
const INDEXED_ITEMS_OF_THREAD_SQL = `
  SELECT i.rowid FROM items i JOIN item_text_search s ON s.rowid = i.rowid WHERE i.thread_id = ?`;

const BULK_TITLES_SQL =
  "INSERT INTO thread_title_search (rowid, title) SELECT rowid, title FROM threads WHERE deleted = 0";
const BULK_ITEMS_SQL = `
  INSERT INTO item_text_search (rowid, text)
  SELECT i.rowid, json_extract(i.data, '$.text') FROM items i LEFT JOIN threads t ON t.id = i.thread_id
  WHERE i.kind IN (${KINDS_SQL}) AND t.deleted IS NOT 1`;

/** An indexed row's rowid under a projection row's id, for `forget` (which removes the row). */
const ROWID_SQL: Partial<Readonly<Record<EntityName, string>>> = {
  thread: "SELECT rowid FROM threads WHERE id = ?",
  item: "SELECT rowid FROM items WHERE id = ?",
};

/**
 * What keeps a store's thread search index current with its event log, whatever the backend:
 * what the search awaits before it answers, and what the background tick calls.
 */
export interface ThreadSearchIndexing {
  /** Catches up through every event committed when it was called (in bounded batches). */
  catchUpAsync(): Promise<void>;
}

/** A store that carries its own thread search index (PostgreSQL's: `PostgresEventStore`). */
interface ThreadSearchIndexingHost extends TableHost {
  readonly threadSearchIndex: ThreadSearchIndexing;
}

/**
 * The thread search index of the store behind `host`: the one it carries, else SQLite's FTS5
 * index over the SQLite store (any other host is refused by the capability it lacks, a
 * `MissingStoreCapabilityError`). A unit of work is not a store: search opens over the store.
 */
export function threadSearchIndexOf(host: TableHost): ThreadSearchIndexing {
  const own = (host as Partial<ThreadSearchIndexingHost>).threadSearchIndex;
  return own ?? new ThreadSearchIndex(host as EventStore);
}

/** What one catch-up did. */
export interface ThreadSearchCatchUp {
  /** The event sequence the index is now current through. */
  readonly indexedThrough: number;
  /** Whether it rebuilt the index in bulk (after a migration or `rebuildProjections`). */
  readonly rebuilt: boolean;
  /** Whether events past `indexedThrough` remain (more than one batch was behind). */
  readonly behind: boolean;
}

/**
 * Keeps the full-text index of thread titles and message text (migration 31) lazily, from a
 * watermark: the event sequence it is current through. The projections' write paths do not
 * know it exists (a trigger on every projection write made an append of a message 2x dearer and
 * a replay of 100,000 events 19x: docs/decisions/0011). Every change of a title or a message's
 * text is an event, and event sequences only grow, so a catch-up reads the threads and items
 * the events past the watermark name, each once however often it was written, compares each
 * one's text with what the index holds and writes only what changed, then moves the watermark:
 * one transaction, one FTS5 segment. A search catches up before it answers (it sees every
 * committed message); a background tick keeps the backlog short (see ThreadSearchIndexer).
 *
 * A NULL watermark (a migration, `rebuildProjections`, whose rows may come back under other
 * rowids) means: rebuild in bulk, the tables dropped and re-created and filled by one INSERT …
 * SELECT each. A deleted thread's title and items leave the index when its deletion is caught
 * up, and a search never finds it meanwhile (it joins the live threads); `forget` removes a
 * forgotten thread's or item's rows at once (forgotten text must not outlive its record).
 */
export class ThreadSearchIndex implements ThreadSearchIndexing {
  private readonly store: SqliteEventStore;

  // FTS5 is SQLite's: PostgreSQL's search is its own (postgres/postgres-thread-search.ts).
  constructor(store: EventStore) {
    this.store = sqliteStoreOf(store, "full-text thread search");
  }

  /** Whether events the index has not seen exist, or a rebuild is due: one statement. */
  behind(): boolean {
    const { indexedThrough, newest } = this.progress();
    return indexedThrough === null || newest > indexedThrough;
  }

  /**
   * Brings the index up to the newest event (at most {@link CATCH_UP_BATCH_EVENTS} of them, or
   * a bulk rebuild), in one transaction. Synchronous: the caller runs it where it may write
   * (`writeAsync`, see {@link catchUpAsync}).
   */
  catchUp(maxEvents = CATCH_UP_BATCH_EVENTS): ThreadSearchCatchUp {
    const seen = this.progress();
    if (seen.indexedThrough !== null && seen.newest <= seen.indexedThrough)
      return { indexedThrough: seen.indexedThrough, rebuilt: false, behind: false };
    return this.store.transaction(() => {
      // Read again under the write lock: another connection may have committed since.
      const { indexedThrough, newest } = this.progress();
      if (indexedThrough === null) {
        this.rebuild(newest);
        return { indexedThrough: newest, rebuilt: true, behind: false };
      }
      const through = Math.min(newest, indexedThrough + maxEvents);
      if (through > indexedThrough) this.apply(indexedThrough, through);
      return { indexedThrough: Math.max(through, indexedThrough), rebuilt: false, behind: through < newest };
    });
  }

  /**
   * Catches up through every event committed when it was called, a batch per `writeAsync` turn
   * (the engine's commands run between batches). What a search awaits before it answers.
   */
  async catchUpAsync(): Promise<void> {
    // Read where it is allowed to (the committed state, while a command's transaction is open):
    // with nothing new, a search waits for no writer.
    const { indexedThrough, newest: target } = this.progress();
    if (indexedThrough !== null && target <= indexedThrough) return;
    for (;;) {
      const step = await this.store.writeAsync(() => this.catchUp());
      if (!step.behind || step.indexedThrough >= target) return;
    }
  }

  private progress(): { indexedThrough: number | null; newest: number } {
    return this.store.statement(PROGRESS_SQL).get() as { indexedThrough: number | null; newest: number };
  }

  /** Applies the changes of events (after, through] to the index. */
  private apply(after: number, through: number): void {
    const removeTitle = this.store.statement("DELETE FROM thread_title_search WHERE rowid = ?");
    const addTitle = this.store.statement("INSERT INTO thread_title_search (rowid, title) VALUES (?, ?)");
    const removeText = this.store.statement("DELETE FROM item_text_search WHERE rowid = ?");
    const addText = this.store.statement("INSERT INTO item_text_search (rowid, text) VALUES (?, ?)");
    const threads = this.store.statement(CHANGED_THREADS_SQL).all(after, through) as {
      id: string;
      rowid: number;
      title: string;
      deleted: number;
      indexed: string | null;
    }[];
    for (const thread of threads) {
      const wanted = thread.deleted === 0 ? thread.title : null;
      if (wanted === thread.indexed) continue;
      if (thread.indexed !== null) removeTitle.run(thread.rowid);
      if (wanted !== null) addTitle.run(thread.rowid, wanted);
    }
    // A deleted thread's messages go too: search never lists it again, so its text is dead weight.
    const indexedItemsOf = this.store.statement(INDEXED_ITEMS_OF_THREAD_SQL).pluck();
    for (const thread of threads) {
      if (thread.deleted === 0) continue;
      for (const rowid of indexedItemsOf.all(thread.id) as number[]) removeText.run(rowid);
    }
    const items = this.store.statement(CHANGED_ITEMS_SQL).all(after, through) as {
      rowid: number;
      text: unknown;
      indexed: string | null;
    }[];
    for (const item of items) {
      const wanted = typeof item.text === "string" ? item.text : null;
      if (wanted === item.indexed) continue;
      if (item.indexed !== null) removeText.run(item.rowid);
      if (wanted !== null) addText.run(item.rowid, wanted);
    }
    this.store.statement(SET_WATERMARK_SQL).run(through);
  }

  /**
   * Drops the index's tables and builds them again from the projections, one INSERT … SELECT
   * each: FTS5 builds a segment from sorted terms, where deleting 100,000 rows one by one would
   * write a delete marker per term. The tables are re-created from their own definitions, so a
   * later migration's tokenizer survives a rebuild.
   */
  private rebuild(through: number): void {
    const db = this.store.db;
    for (const table of INDEX_TABLES) {
      const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as
        string | undefined;
      if (sql === undefined) throw new Error(`thread search: the table ${table} is missing (migration 31)`);
      db.exec(`DROP TABLE ${table}`);
      db.exec(sql);
    }
    db.exec(BULK_TITLES_SQL);
    db.exec(BULK_ITEMS_SQL);
    this.store.statement(SET_WATERMARK_SQL).run(through);
  }
}

/**
 * Removes a projection row's index rows before `forget` deletes the row (a thread's title and
 * its items' text; an item's text). Other entities have none. Runs in forget's transaction.
 */
export function forgetSearchRows(db: Database.Database, entity: EntityName, id: string): void {
  const rowidSql = ROWID_SQL[entity];
  if (rowidSql === undefined) return;
  const rowid = db.prepare(rowidSql).pluck().get(id) as number | undefined;
  if (rowid === undefined) return;
  if (entity === "thread") {
    db.prepare("DELETE FROM thread_title_search WHERE rowid = ?").run(rowid);
    const remove = db.prepare("DELETE FROM item_text_search WHERE rowid = ?");
    for (const itemRowid of db.prepare(INDEXED_ITEMS_OF_THREAD_SQL).pluck().all(id) as number[]) remove.run(itemRowid);
  } else db.prepare("DELETE FROM item_text_search WHERE rowid = ?").run(rowid);
}
