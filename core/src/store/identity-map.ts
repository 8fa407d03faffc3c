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

  /** The known row of a record (null: known to have none), or undefined when not known. */
  row(entity: EntityName, id: string): ProjectionRow | null | undefined {
    return this.rows.get(key(entity, id));
  }

  remember(entity: EntityName, id: string, row: ProjectionRow | null): void {
    this.rows.set(key(entity, id), row);
  }

  forget(entity: EntityName, id: string): void {
    this.rows.delete(key(entity, id));
  }

  clear(): void {
    this.rows.clear();
  }
}

function key(entity: EntityName, id: string): string {
  return `${entity}\u0000${id}`;
}
