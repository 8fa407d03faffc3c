import { ENTITY_TABLES, type EntityTable } from "../entity-tables.js";
import type { EntityName, EntityRecords } from "../records.js";
import type { PostgresClient } from "./postgres-pool.js";

/** One projection row to write: its entity's columns in `ENTITY_TABLES` order, then data, then last_sequence. */
export type ProjectionValues = readonly (string | number | null)[];

/**
 * Rows per multi-row statement: PostgreSQL takes at most 65,535 parameters, and the widest
 * table has 16 columns.
 */
const ROWS_PER_STATEMENT = 1_000;

function specOf(entity: EntityName): EntityTable<EntityName> {
  return ENTITY_TABLES[entity] as EntityTable<EntityName>;
}

/** The record's projection row, or null when the record is a tombstone (it removes the row). */
export function projectionValues(
  entity: EntityName,
  record: EntityRecords[EntityName],
  data: string,
  sequence: number,
): ProjectionValues | null {
  const spec = specOf(entity);
  if (spec.removes?.(record) === true) return null;
  return [...Object.values(spec.columns).map((read) => read(record)), data, sequence];
}

/** `$1, $2, …` groups for `rows` rows of `width` values each, from parameter `offset` + 1. */
export function placeholders(rows: number, width: number, offset = 0): string {
  const groups: string[] = [];
  for (let row = 0; row < rows; row += 1) {
    const group: string[] = [];
    for (let column = 1; column <= width; column += 1) group.push(`$${offset + row * width + column}`);
    groups.push(`(${group.join(", ")})`);
  }
  return groups.join(", ");
}

/**
 * Upserts whole rows of one entity's table, a statement per 1,000 rows. Each id once: a
 * multi-row `ON CONFLICT DO UPDATE` may not touch one row twice.
 */
export async function upsertRows(
  client: PostgresClient,
  entity: EntityName,
  rows: readonly ProjectionValues[],
): Promise<void> {
  const spec = specOf(entity);
  const columns = [...Object.keys(spec.columns), "data", "last_sequence"];
  const set = columns
    .filter((column) => column !== "id")
    .map((column) => `${column} = EXCLUDED.${column}`)
    .join(", ");
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
    await client.query(
      `INSERT INTO ${spec.table} (${columns.join(", ")}) VALUES ${placeholders(chunk.length, columns.length)} ON CONFLICT (id) DO UPDATE SET ${set}`,
      chunk.flat(),
    );
  }
}

/** Deletes rows of one entity's table by id. */
export async function deleteRows(client: PostgresClient, entity: EntityName, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await client.query(`DELETE FROM ${specOf(entity).table} WHERE id = ANY($1::text[])`, [ids]);
}
