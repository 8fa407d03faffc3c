import type { TableModule } from "../store/table-sql.js";
import type { EventStore } from "../store/ports.js";
import type { EntityName, EntityRecords } from "../store/records.js";

/**
 * Anything that can read projections: a command context (inside its command's transaction) or
 * {@link storeReader} over the engine's store (outside any). Every read is a promise, since a
 * PostgreSQL store cannot answer one synchronously; the same view code serves both.
 */
export interface ProjectionReader {
  /** Reads one record by id. */
  get<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E] | null>;
  /** Reads records with a WHERE clause over the entity's indexed columns. */
  select<E extends EntityName>(
    entity: E,
    where: string,
    params?: readonly unknown[],
    suffix?: string,
  ): Promise<EntityRecords[E][]>;
  /** Counts records matching a WHERE clause. */
  count(entity: EntityName, where: string, params?: readonly unknown[]): Promise<number>;
  /** Whether a record matches a WHERE clause. */
  exists(entity: EntityName, where: string, params?: readonly unknown[]): Promise<boolean>;
  /** A table of the store (core/src/store/tables), for reads that are not records'. */
  table<T>(open: TableModule<T>): T;
}

/** A {@link ProjectionReader} over a store, for code outside a command (views, schedulers). */
export function storeReader(store: EventStore): ProjectionReader {
  return {
    get: async (entity, id) => store.get(entity, id),
    select: async (entity, where, params, suffix) => store.select(entity, where, params, suffix),
    count: async (entity, where, params) => store.count(entity, where, params),
    exists: async (entity, where, params) => store.exists(entity, where, params),
    table: (open) => new open(store),
  };
}
