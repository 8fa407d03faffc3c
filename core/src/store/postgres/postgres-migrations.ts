import { SwitchyardError } from "../../spec/index.js";
import type { PostgresPool } from "./postgres-pool.js";
import { POSTGRES_BASELINE_SQL, POSTGRES_THREAD_SEARCH_SQL } from "./postgres-schema.js";

/**
 * One PostgreSQL schema step. The baseline carries SQLite's newest version when it was made
 * (31); each later step has the version of the SQLite migration it pairs with.
 */
export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** @public */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 31,
    // The thread search is SQLite's migration 31, so it belongs to this step (PostgreSQL's own:
    // tsvector, not FTS5). No database ran an engine on the baseline without it (the engine
    // does not run on PostgreSQL before issue 33), so the step was amended, not followed.
    name: "baseline: the SQLite schema through version 31, in PostgreSQL types, with its own thread search",
    sql: `${POSTGRES_BASELINE_SQL}\n${POSTGRES_THREAD_SEARCH_SQL}`,
  },
];

/**
 * The key of the session advisory lock migrators hold, so that two nodes starting at once
 * migrate one after the other (the second finds nothing left to do). Any fixed bigint; this
 * one is "switchyard" in ASCII, truncated.
 */
export const MIGRATION_LOCK_KEY = 0x73776974636879n;

/** @public */
export interface MigratePostgresOptions {
  readonly migrations?: readonly PostgresMigration[];
  /** How long to wait for another migrator's lock (default 5 minutes); then `store_busy`. */
  readonly lockTimeoutMs?: number;
}

/**
 * Applies every migration newer than the database's version, each in its own transaction,
 * under a session advisory lock; answers the newest version. PostgreSQL's DDL is
 * transactional: a step that fails leaves the database at the step before.
 */
export async function migratePostgres(pool: PostgresPool, options: MigratePostgresOptions = {}): Promise<number> {
  const migrations = [...(options.migrations ?? POSTGRES_MIGRATIONS)].sort((a, b) => a.version - b.version);
  const newest = migrations.at(-1)?.version ?? 0;
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(options.lockTimeoutMs ?? 300_000))}`);
    try {
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY.toString()]);
    } catch (error) {
      if ((error as { code?: string }).code === "55P03")
        throw new SwitchyardError(
          "store_busy",
          "Another Switchyard held the database's migration lock longer than this one waits; nothing was changed. Retry once it has started.",
          { lockTimeoutMs: options.lockTimeoutMs ?? 300_000 },
          { cause: error },
        );
      throw error;
    }
    await client.query("RESET lock_timeout");
    try {
      await client.query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)",
      );
      const current = (
        await client.query<{ version: number }>("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations")
      ).rows[0]!.version;
      if (current > newest)
        throw new SwitchyardError(
          "conflict",
          `The database schema is version ${current}, newer than this Switchyard knows (${newest}). Upgrade Switchyard, or point it at another database.`,
          { databaseVersion: current, newestKnown: newest },
        );
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        await client.query("BEGIN");
        try {
          await client.query(migration.sql);
          await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
            migration.version,
            migration.name,
            new Date().toISOString(),
          ]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw error;
        }
      }
      return newest;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY.toString()]).catch(() => {
        // The connection is gone, and its session lock with it: do not hand it back to the pool.
        broken = true;
      });
    }
  } catch (error) {
    broken ||= isConnectionError(error);
    throw error;
  } finally {
    client.release(broken);
  }
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code !== "string" || code.startsWith("08") || code === "57P01";
}
