import { afterAll } from "vitest";
import { createTestDatabase, stopSharedPostgresServer } from "@switchyard/testkit";
import { openPostgresPool, type PostgresPool } from "../../../src/store/postgres/index.js";

/**
 * A fresh database on the worker's throw-away server, and the pools opened on it, all ended
 * (and the server stopped) after the file. Call at a test file's top level.
 */
export function postgresDatabaseForThisFile(): { url: () => Promise<string>; pool: () => Promise<PostgresPool> } {
  let url: Promise<string> | null = null;
  const pools: PostgresPool[] = [];
  afterAll(async () => {
    for (const pool of pools.splice(0)) await pool.end();
    await stopSharedPostgresServer();
  });
  const databaseUrl = () => (url ??= createTestDatabase());
  return {
    url: databaseUrl,
    pool: async () => {
      const pool = openPostgresPool(await databaseUrl(), { max: 20 });
      pools.push(pool);
      return pool;
    },
  };
}
