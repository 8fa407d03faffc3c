import { MissingStoreCapabilityError, numberedPlaceholders, type TableSql } from "../table-sql.js";

/** Runs one statement (`$n` placeholders) where the caller's SQL belongs: a unit's connection, or the pool. */
export type PostgresQuery = (
  text: string,
  params: readonly unknown[],
) => Promise<{ rows: unknown[]; rowCount: number | null }>;

/** PostgreSQL's error code for a unique constraint refusing a row. */
const UNIQUE_VIOLATION = "23505";

/**
 * The table modules' SQL on PostgreSQL: `?` placeholders numbered `$1`, `$2`…, each call one
 * round trip through `query` (a unit of work's connection after its flush, or the pool).
 */
export function postgresTableSql(query: PostgresQuery): TableSql {
  return {
    dialect: "postgresql",
    all: async <Row>(sql: string, params: readonly unknown[] = []) =>
      (await query(numberedPlaceholders(sql), params)).rows as Row[],
    get: async <Row>(sql: string, params: readonly unknown[] = []) =>
      (await query(numberedPlaceholders(sql), params)).rows[0] as Row | undefined,
    run: async (sql: string, params: readonly unknown[] = []) => ({
      changes: (await query(numberedPlaceholders(sql), params)).rowCount ?? 0,
    }),
    runNow: () => {
      throw new MissingStoreCapabilityError("synchronous writes (a caller that cannot await)", "postgresql");
    },
    isUniqueViolation: (error) => (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION,
  };
}
