import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { postgresTestsSkipped } from "@switchyard/testkit";
import { MIGRATIONS, migrate } from "../../../src/store/migrations.js";
import {
  POSTGRES_MIGRATIONS,
  migratePostgres,
  openPostgresPool,
  type PostgresPool,
} from "../../../src/store/postgres/index.js";
import { postgresDatabaseForThisFile } from "./support.js";

// The PostgreSQL schema and its migrations runner, on a real server (the testkit's throw-away
// one). Set SWITCHYARD_SKIP_POSTGRES_TESTS=1 to skip on a machine without PostgreSQL.

/**
 * The thread search's tables and indexes, each backend's own (SQLite's FTS5 tables and their
 * shadow tables, PostgreSQL's tsvector columns): compared by the contract suite's searches.
 */
const THREAD_SEARCH = /^(thread_title_search|item_text_search)(_\w+)?$|^thread_search_watermark$/;

async function schemaOf(pool: PostgresPool): Promise<string[]> {
  const columns = await pool.query<{ line: string }>(
    `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS line
     FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`,
  );
  const indexes = await pool.query<{ line: string }>(
    "SELECT indexname || ': ' || indexdef AS line FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
  );
  return [...columns.rows, ...indexes.rows].map((row) => row.line);
}

describe.skipIf(postgresTestsSkipped())("PostgreSQL schema and migrations", () => {
  const database = postgresDatabaseForThisFile();

  it("brings an empty database to the newest version, and a second run changes nothing", async () => {
    const pool = await database.pool();
    expect(await migratePostgres(pool)).toBe(31);
    const once = await schemaOf(pool);
    expect(once.length).toBeGreaterThan(100);
    const applied = (await pool.query("SELECT version, name FROM schema_migrations")).rows;
    expect(applied).toEqual([{ version: 31, name: POSTGRES_MIGRATIONS[0]!.name }]);

    expect(await migratePostgres(pool)).toBe(31);
    expect(await schemaOf(pool)).toEqual(once);
    expect((await pool.query("SELECT version, name FROM schema_migrations")).rows).toEqual(applied);
  });

  it("lets two migrators started at once apply each step exactly once", async () => {
    const url = await database.url();
    // A database of its own, so neither migrator finds the first test's schema.
    const fresh = url.replace(/\/[^/]+$/, `/migrators_${process.pid}`);
    const admin = await database.pool();
    await admin.query(`CREATE DATABASE migrators_${process.pid}`);
    const pools = [openPostgresPool(fresh), openPostgresPool(fresh)];
    try {
      // A step slow enough that the second migrator arrives while the first holds the lock.
      const slow = [
        ...POSTGRES_MIGRATIONS,
        { version: 32, name: "slow step", sql: "SELECT pg_sleep(0.3); CREATE TABLE slow_step (id integer)" },
      ];
      const versions = await Promise.all(pools.map((pool) => migratePostgres(pool, { migrations: slow })));
      expect(versions).toEqual([32, 32]);
      const applied = await pools[0]!.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY 1");
      expect(applied.rows.map((row) => row.version)).toEqual([31, 32]);
    } finally {
      for (const pool of pools) await pool.end();
    }
  });

  it("refuses a database newer than it knows, naming both versions", async () => {
    const pool = await database.pool();
    await migratePostgres(pool);
    await pool.query("INSERT INTO schema_migrations VALUES (99, 'from the future', 'now')");
    try {
      await expect(migratePostgres(pool)).rejects.toMatchObject({
        code: "conflict",
        details: { databaseVersion: 99, newestKnown: 31 },
      });
    } finally {
      await pool.query("DELETE FROM schema_migrations WHERE version = 99");
    }
  });

  it("has SQLite's tables and columns at the version it pairs with (the thread search is each one's own)", async () => {
    const pool = await database.pool();
    await migratePostgres(pool);
    const newestSqlite = Math.max(...MIGRATIONS.map((migration) => migration.version));
    // A new SQLite migration needs its PostgreSQL pair (same version number).
    expect(Math.max(...POSTGRES_MIGRATIONS.map((migration) => migration.version))).toBe(newestSqlite);

    const sqlite = new Database(":memory:");
    migrate(sqlite);
    const sqliteColumns = (
      sqlite
        .prepare(
          `SELECT m.name AS tableName, p.name AS column FROM sqlite_master m, pragma_table_info(m.name) p
           WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`,
        )
        .all() as { tableName: string; column: string }[]
    )
      .filter((row) => !THREAD_SEARCH.test(row.tableName))
      .map((row) => `${row.tableName}.${row.column}`)
      .sort();
    const sqliteIndexes = (
      sqlite
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[]
    ).sort();
    sqlite.close();

    const postgresColumns = (
      await pool.query<{ tableName: string; column: string }>(
        `SELECT table_name AS "tableName", table_name || '.' || column_name AS column
         FROM information_schema.columns WHERE table_schema = 'public'`,
      )
    ).rows
      .filter((row) => !THREAD_SEARCH.test(row.tableName))
      .map((row) => row.column)
      .sort();
    // Named indexes (primary keys and UNIQUE constraints are named by each database its own way).
    const postgresIndexes = (
      await pool.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public'
         AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'`,
      )
    ).rows
      .map((row) => row.name)
      .filter((name) => !THREAD_SEARCH.test(name))
      .sort();
    expect(postgresColumns).toEqual(sqliteColumns);
    expect(postgresIndexes).toEqual(sqliteIndexes);
  });

  it("refuses a URL that is not PostgreSQL's without repeating its password", () => {
    expect(() => openPostgresPool("mysql://me:secret@127.0.0.1/db")).toThrow(
      expect.objectContaining({ code: "config_invalid", details: { url: "mysql://me:***@127.0.0.1/db" } }),
    );
    expect(() => openPostgresPool("not a url")).toThrow(expect.objectContaining({ code: "config_invalid" }));
  });
});
