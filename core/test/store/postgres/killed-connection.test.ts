import { describe, expect, it } from "vitest";
import { postgresTestsSkipped } from "@switchyard/testkit";
import {
  OrderedEventReader,
  migratePostgres,
  type PostgresClient,
  type PostgresPool,
} from "../../../src/store/postgres/index.js";
import { postgresDatabaseForThisFile } from "./support.js";

// A connection that dies inside a transaction (its server process killed with SIGKILL, or
// terminated) loses its own uncommitted writes and nothing that was committed; the ordered
// reader then hands on every committed event once and steps over the dead transaction's numbers.

const INSERT = `INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at)
  VALUES ('item.upserted', 'item', $1, 'thread:1', NULL, $2, '2026-12-07T00:00:00.000Z') RETURNING sequence`;

async function insert(client: PostgresClient | PostgresPool, id: string): Promise<number> {
  return (await client.query<{ sequence: number }>(INSERT, [id, JSON.stringify({ id })])).rows[0]!.sequence;
}

/** Retries a query while the server recovers from a crash (bounded: 200 tries, 50 ms apart). */
async function onceRecovered<T>(query: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await query();
    } catch (error) {
      if (attempt >= 200) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function readAll(reader: OrderedEventReader): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const { events, waitingAt } = await reader.read();
    ids.push(...events.map((event) => (event.record as { id: string }).id));
    if (events.length === 0 && waitingAt === null) break;
  }
  return ids;
}

describe.skipIf(postgresTestsSkipped())("PostgreSQL: a connection killed mid-transaction", () => {
  const database = postgresDatabaseForThisFile();

  for (const how of ["SIGKILL of its server process", "pg_terminate_backend"] as const)
    it(`loses nothing committed (${how})`, async () => {
      const pool = await database.pool();
      await onceRecovered(() => migratePostgres(pool));
      await onceRecovered(() => pool.query("TRUNCATE events"));
      const before = [await insert(pool, "item:before:1"), await insert(pool, "item:before:2")];

      const victim = await pool.connect();
      victim.on("error", () => undefined); // Its death is the point.
      await victim.query("BEGIN");
      await insert(victim, "item:victim:1");
      const backend = (await victim.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      await insert(victim, "item:victim:2");
      // Committed on another connection while the victim's transaction is open.
      const during = await insert(pool, "item:during");

      if (how === "pg_terminate_backend") await pool.query("SELECT pg_terminate_backend($1)", [backend]);
      // The whole server restarts its processes and replays its log: fsync on, nothing
      // acknowledged may be lost.
      else process.kill(backend, "SIGKILL");
      await expect(victim.query("SELECT 1")).rejects.toThrow();
      victim.release(true);

      // Retried while the server recovers: an attempt may commit and still lose its answer
      // (its connection killed by the restart), so a retry inserts only if it is not there.
      await onceRecovered(() =>
        pool.query(
          `INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at)
           SELECT 'item.upserted', 'item', 'item:after', 'thread:1', NULL, '{"id":"item:after"}', '2026-12-07T00:00:00.000Z'
           WHERE NOT EXISTS (SELECT 1 FROM events WHERE entity_id = 'item:after')`,
        ),
      );
      const after = (await pool.query<{ s: number }>("SELECT sequence AS s FROM events WHERE entity_id = 'item:after'"))
        .rows[0]!.s;
      const rows = await pool.query<{ sequence: number; id: string }>(
        "SELECT sequence, entity_id AS id FROM events ORDER BY sequence",
      );
      expect(rows.rows).toEqual([
        { sequence: before[0], id: "item:before:1" },
        { sequence: before[1], id: "item:before:2" },
        { sequence: during, id: "item:during" },
        { sequence: after, id: "item:after" },
      ]);
      expect(await readAll(new OrderedEventReader(pool, 0))).toEqual([
        "item:before:1",
        "item:before:2",
        "item:during",
        "item:after",
      ]);
    });
});
