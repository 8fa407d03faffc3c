import type { EntityName } from "./records.js";

/**
 * A projection row as the store reads it raw: `[last_sequence, ...columns, data]`, in the
 * entity's column order (the id first), `data` the record's JSON text.
 */
export type ProjectionRow = readonly (string | number | null)[];

/**
 * The projection rows one transaction has read or written, by entity and id; null for a record
 * known to have no row. Valid only while the transaction holds the write lock: no other
 * connection can write then, and every write of this one to an entity table goes through
 * `Store.append` (which records the row it wrote here), `Store.forget` (which drops what it
 * removed) or a rebuild (which drops it all). Rows keep the record as JSON text, so every read
 * parses its own object: a caller that changes what it read changes nobody else's.
 */
export class IdentityMap {
  private readonly rows = new Map<string, ProjectionRow | null>();
  /**
   * Query results (the records' JSON texts) by SQL and bound values, with the entity whose table
   * the query reads (a remembered query reads that table alone: see `queryKey`), until the
   * transaction next writes that entity.
   */
  private readonly queries = new Map<string, { readonly texts: readonly string[]; readonly entity: EntityName }>();

  /** The known row of a record (null: known to have none), or undefined when not known. */
  row(entity: EntityName, id: string): ProjectionRow | null | undefined {
    return this.rows.get(key(entity, id));
  }

  remember(entity: EntityName, id: string, row: ProjectionRow | null): void {
    this.rows.set(key(entity, id), row);
  }

  /** Every known row, by the key `CommittedRows` keeps them under. */
  entries(): Iterable<readonly [string, ProjectionRow | null]> {
    return this.rows.entries();
  }

  /** The records' JSON texts a query answered since the transaction's last write, or undefined. */
  queryResult(queryKey: string): readonly string[] | undefined {
    return this.queries.get(queryKey)?.texts;
  }

  rememberQuery(queryKey: string, texts: readonly string[], entity: EntityName): void {
    this.queries.set(queryKey, { texts, entity });
  }

  /**
   * Drops the query results over the entity's table: a write may change which of its records a
   * query matches, and telling which queries it touched would take parsing their SQL. Records by
   * id stay (a write records its own row).
   */
  wrote(entity: EntityName): void {
    for (const [queryKey, result] of this.queries) if (result.entity === entity) this.queries.delete(queryKey);
  }

  clear(): void {
    this.rows.clear();
    this.queries.clear();
  }
}

/** The key a record's row is kept under, here and in `CommittedRows`. */
export function key(entity: EntityName, id: string): string {
  return `${entity}\u0000${id}`;
}

/**
 * Functions that read something besides the table, or the clock: a query using them may answer
 * differently a moment later without any write. A query with a subquery may read another table,
 * which the store's own writes do not all go through `append` for.
 */
const UNREPEATABLE =
  /\bselect\b|\b(random|randomblob|changes|total_changes|last_insert_rowid|date|time|datetime|julianday|unixepoch|strftime|timediff)\s*\(/i;

/**
 * The key a query's result is remembered by, or null when it must not be: a condition (the
 * query's WHERE and what follows it) that may answer differently without a write of this
 * transaction, or values that do not key plainly.
 */
export function queryKey(condition: string, sql: string, params: readonly unknown[]): string | null {
  if (UNREPEATABLE.test(condition)) return null;
  for (const param of params) {
    if (param !== null && typeof param !== "string" && typeof param !== "number") return null;
  }
  return `${sql}\u0000${JSON.stringify(params)}`;
}
