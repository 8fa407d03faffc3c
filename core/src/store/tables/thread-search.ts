import { isFalse, type SqlDialect, type TableHost } from "../table-sql.js";
import { type SEARCHED_ITEM_KINDS, type ThreadSearchIndexing, threadSearchIndexOf } from "../thread-search-index.js";
import type { TimelineItemKind } from "../records.js";
import type { ThreadListing } from "./threads.js";

/** Where a thread matched a search: its title, or one of its items (by kind). */
export type ThreadSearchSource = "title" | Extract<TimelineItemKind, (typeof SEARCHED_ITEM_KINDS)[number]>;

/** One thread a search found: its best match, with a few words around it. */
export interface ThreadSearchHit {
  readonly threadId: string;
  readonly matchedIn: ThreadSearchSource;
  /** The matching item's id and position (null for a title match). */
  readonly itemId: string | null;
  readonly position: number | null;
  /**
   * The words around the match; each matched term is wrapped in {@link SNIPPET_MATCH_START}
   * and {@link SNIPPET_MATCH_END}, characters no tokenizer keeps, for the caller to turn into
   * ranges (never markup: the text is the user's).
   */
  readonly snippet: string;
}

/** Marks the start of a matched term in a snippet (a control character: never part of a word). */
export const SNIPPET_MATCH_START = "\u0002";
/** Marks the end of a matched term in a snippet. */
export const SNIPPET_MATCH_END = "\u0003";

/** Tokens (FTS5) or words (PostgreSQL) around a match a snippet shows (FTS5's limit is 64). */
const SNIPPET_TOKENS = 16;

/**
 * A title match counts this many times an item match of the same bm25 score: a title is short
 * and chosen to say what the thread is about.
 */
const TITLE_WEIGHT = 2;

/**
 * The words of what a person typed that a search looks for: whitespace-separated, each with at
 * least one letter or digit (a word of none would tokenize to nothing on either backend).
 */
export function searchWords(text: string): string[] {
  return text.split(/\s+/u).filter((word) => /[\p{L}\p{N}]/u.test(word));
}

/**
 * Turns what a person typed into an FTS5 query (SQLite's) that treats every character as text: each
 * whitespace-separated word becomes a quoted phrase (its `"` doubled), so `NEAR`, `AND`, `-`,
 * `*`, `:` and `^` are words, not operators; all must match (implicit AND), and the last one
 * also matches as a prefix (search as you type). Words with no letter or digit would tokenize
 * to nothing (an empty phrase matches no row) and are left out. Null when nothing is left.
 */
export function ftsQuery(text: string): string | null {
  const words = searchWords(text);
  if (words.length === 0) return null;
  return words
    .map((word, index) => `"${word.replaceAll('"', '""')}"${index === words.length - 1 ? "*" : ""}`)
    .join(" ");
}

function listingWhere(dialect: SqlDialect, listing: ThreadListing): string {
  const live = `t.project_id = ? AND ${isFalse(dialect, "t.deleted")}`;
  return listing.includeSubagents ? live : `${live} AND t.relationship != 'subagent'`;
}

/**
 * PostgreSQL's query for the words (see {@link searchWords}): every word must match, each as a
 * phrase of the lexemes the `simple` configuration makes of it (`phraseto_tsquery`, which reads
 * every character as text); the last word's lexemes also match as prefixes (search as you type).
 * One `?` per word, in order.
 */
function tsQuerySql(wordCount: number): string {
  const phrases = Array.from({ length: wordCount - 1 }, () => "phraseto_tsquery('simple', ?)");
  // The last word's lexemes as `'lexeme':*` terms, quoted for tsquery's own syntax.
  const prefixes = `(SELECT COALESCE(string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*', ' & '), '')
      FROM unnest(to_tsvector('simple', ?)))::tsquery`;
  return [...phrases, prefixes].join(" && ");
}

/** ts_headline's options: the match markers, and about as many words as FTS5's snippet. */
const HEADLINE_OPTIONS = `StartSel=${SNIPPET_MATCH_START}, StopSel=${SNIPPET_MATCH_END}, MaxWords=${SNIPPET_TOKENS}, MinWords=${SNIPPET_TOKENS / 2}, ShortWord=0`;

/**
 * Full-text search over a project's threads, on either backend: SQLite's FTS5 tables (migration
 * 31) or PostgreSQL's `tsvector` columns (POSTGRES_THREAD_SEARCH_SQL), each kept from a
 * watermark by its store's index (`threadSearchIndexOf`). Deleted threads are never found: the
 * live threads are joined at query time, whatever the index still holds. What differs between
 * the backends (docs/thread-search.md): the tokenizer, the ranking (bm25 against `ts_rank`) and
 * the snippet's cut.
 */
export class ThreadSearchTable {
  private readonly index: ThreadSearchIndexing;

  constructor(private readonly host: TableHost) {
    // The index is the store's (a unit of work has none): refused here if the backend has none.
    this.index = threadSearchIndexOf(host);
  }

  /**
   * A page of the threads whose title or searched messages hold every word of `text` (what a
   * person typed; the last word also as a prefix), best first: by the rank of each thread's
   * best match (a title's weighted up), then the most recently updated. One row per thread,
   * with its best match's snippet; none when `text` has no word to search for. The index first
   * catches up with every event committed before the call (usually one statement).
   */
  async page(
    projectId: string,
    listing: ThreadListing,
    text: string,
    limit: number,
    offset: number,
  ): Promise<ThreadSearchHit[]> {
    const words = searchWords(text);
    if (words.length === 0) return [];
    await this.index.catchUpAsync();
    const sql = this.host.tableSql;
    const where = listingWhere(sql.dialect, listing);
    if (sql.dialect === "postgresql")
      return sql.all<ThreadSearchHit>(
        `WITH query AS (SELECT ${tsQuerySql(words.length)} AS q),
        matches AS (
          SELECT t.id AS thread_id, t.updated_at, 'title' AS matched_in, NULL::text AS item_id, NULL::integer AS position,
            ts_rank(s.document, query.q) * ${TITLE_WEIGHT} AS rank, s.title AS text
          FROM query, thread_title_search s JOIN threads t ON t.id = s.thread_id
          WHERE s.document @@ query.q AND ${where}
          UNION ALL
          SELECT t.id, t.updated_at, i.kind, i.id, i.position, ts_rank(s.document, query.q), s.text
          FROM query, item_text_search s JOIN items i ON i.id = s.item_id JOIN threads t ON t.id = s.thread_id
          WHERE s.document @@ query.q AND ${where}
        ),
        ranked AS (
          SELECT *, ROW_NUMBER() OVER (PARTITION BY thread_id ORDER BY rank DESC, position NULLS FIRST) AS nth
          FROM matches
        ),
        page AS (SELECT * FROM ranked WHERE nth = 1 ORDER BY rank DESC, updated_at DESC, thread_id LIMIT ? OFFSET ?)
        SELECT page.thread_id AS "threadId", page.matched_in AS "matchedIn", page.item_id AS "itemId", page.position,
          ts_headline('simple', page.text, query.q, ?) AS snippet
        FROM page, query ORDER BY page.rank DESC, page.updated_at DESC, page.thread_id`,
        [...words, projectId, projectId, limit, offset, HEADLINE_OPTIONS],
      );
    const match = ftsQuery(text)!;
    return sql.all<ThreadSearchHit>(
      `WITH matches AS (
        SELECT t.id AS thread_id, t.updated_at AS updated_at, 'title' AS matched_in, NULL AS item_id, NULL AS position,
          bm25(thread_title_search) * ${TITLE_WEIGHT} AS rank,
          snippet(thread_title_search, 0, char(2), char(3), '…', ${SNIPPET_TOKENS}) AS snippet
        FROM thread_title_search JOIN threads t ON t.rowid = thread_title_search.rowid
        WHERE thread_title_search MATCH ? AND ${where}
        UNION ALL
        SELECT t.id, t.updated_at, i.kind, i.id, i.position,
          bm25(item_text_search),
          snippet(item_text_search, 0, char(2), char(3), '…', ${SNIPPET_TOKENS})
        FROM item_text_search
          JOIN items i ON i.rowid = item_text_search.rowid
          JOIN threads t ON t.id = i.thread_id
        WHERE item_text_search MATCH ? AND ${where}
      ),
      ranked AS (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY thread_id ORDER BY rank, position) AS nth FROM matches
      )
      SELECT thread_id AS threadId, matched_in AS matchedIn, item_id AS itemId, position, snippet
      FROM ranked WHERE nth = 1
      ORDER BY rank, updated_at DESC, thread_id
      LIMIT ? OFFSET ?`,
      [match, projectId, match, projectId, limit, offset],
    );
  }
}
