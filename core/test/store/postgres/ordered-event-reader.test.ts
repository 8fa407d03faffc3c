import { describe, expect, it } from "vitest";
import { postgresTestsSkipped } from "@switchyard/testkit";
import {
  OrderedEventReader,
  migratePostgres,
  type PostgresClient,
  type PostgresPool,
} from "../../../src/store/postgres/index.js";
import { postgresDatabaseForThisFile } from "./support.js";

// The ordered stream on PostgreSQL (decision 0010, issue 34): transactions commit out of
// sequence order, and the reader must hand on every committed event once, in order, never
// stepping over a number whose transaction may still commit.

const INSERT = `INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at)
  VALUES ('item.upserted', 'item', $1, 'thread:1', NULL, $2, '2026-12-07T00:00:00.000Z') RETURNING sequence`;

async function insert(client: PostgresClient | PostgresPool, id: string): Promise<number> {
  const row = (await client.query<{ sequence: number }>(INSERT, [id, JSON.stringify({ id })])).rows[0]!;
  return row.sequence;
}

/**
 * Reads until the reader has nothing more and waits at nothing (a bounded number of reads):
 * once every writer has finished, a gap settles at the read after the one that saw it.
 */
async function drain(reader: OrderedEventReader): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < 50; i++) {
    const { events, waitingAt } = await reader.read(7);
    seen.push(...events.map((event) => event.sequence));
    if (events.length === 0 && waitingAt === null) break;
  }
  return seen;
}

describe.skipIf(postgresTestsSkipped())("PostgreSQL ordered event reader", () => {
  const database = postgresDatabaseForThisFile();
  const freshLog = async () => {
    const pool = await database.pool();
    await migratePostgres(pool);
    await pool.query("TRUNCATE events");
    return pool;
  };

  it("waits at a lower sequence whose transaction commits last, then hands on both in order", async () => {
    const pool = await freshLog();
    const late = await pool.connect();
    const early = await pool.connect();
    try {
      await late.query("BEGIN");
      const lower = await insert(late, "item:late");
      await early.query("BEGIN");
      const higher = await insert(early, "item:early");
      await early.query("COMMIT");
      expect(higher).toBe(lower + 1);

      const reader = new OrderedEventReader(pool, lower - 1);
      // The higher one is visible, the lower one is not yet: the reader waits at the lower.
      for (let i = 0; i < 3; i++) expect(await reader.read()).toEqual({ events: [], waitingAt: lower });

      await late.query("COMMIT");
      const { events, waitingAt } = await reader.read();
      expect(events.map((event) => event.sequence)).toEqual([lower, higher]);
      expect(events.map((event) => event.record)).toEqual([{ id: "item:late" }, { id: "item:early" }]);
      expect(waitingAt).toBeNull();
      expect(await reader.read()).toEqual({ events: [], waitingAt: null });
    } finally {
      late.release(true);
      early.release(true);
    }
  });

  it("steps over a rolled-back sequence once no transaction that could hold it is running", async () => {
    const pool = await freshLog();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const lost = await insert(client, "item:lost");
      const kept = await insert(pool, "item:kept");
      const reader = new OrderedEventReader(pool, lost - 1);
      expect(await reader.read()).toEqual({ events: [], waitingAt: lost });
      await client.query("ROLLBACK");
      // One read to see the gap's transactions gone (after the marker it drew), then on.
      expect(await drain(reader)).toEqual([kept]);
      expect(reader.position).toBe(kept);
    } finally {
      client.release(true);
    }
  });

  it("takes the writer's transaction id before its sequence, whatever SQL the writer sends", async () => {
    const pool = await freshLog();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      expect((await client.query("SELECT pg_current_xact_id_if_assigned() AS xid")).rows[0].xid).toBeNull();
      await client.query("SELECT next_event_sequence()");
      // The column default drew a number, and the transaction had an id by then.
      expect((await client.query("SELECT pg_current_xact_id_if_assigned() AS xid")).rows[0].xid).not.toBeNull();
      await client.query("ROLLBACK");
    } finally {
      client.release(true);
    }
  });

  it("hands on exactly the committed events, in order, once, while writers on many connections commit out of order", async () => {
    const pool = await freshLog();
    const writers = 12;
    const perWriter = 25;
    const committed: number[] = [];
    const delivered: number[] = [];
    const reader = new OrderedEventReader(pool, 0);
    let writing = true;
    // The reader tails while they write, one read per turn of the event loop; once every
    // writer has finished, it reads what is left.
    const tail = (async () => {
      while (writing) {
        const { events } = await reader.read(50);
        delivered.push(...events.map((event) => event.sequence));
        await new Promise((resolve) => setImmediate(resolve));
      }
      delivered.push(...(await drain(reader)));
    })();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        const client = await pool.connect();
        try {
          for (let i = 0; i < perWriter; i++) {
            await client.query("BEGIN");
            const sequences = [await insert(client, `item:${w}:${i}:a`)];
            // Hold the transaction open across a turn, so others draw and commit past it.
            await new Promise((resolve) => setImmediate(resolve));
            sequences.push(await insert(client, `item:${w}:${i}:b`));
            // One in five rolls back: its numbers stay missing for good.
            if ((w + i) % 5 === 0) await client.query("ROLLBACK");
            else {
              await client.query("COMMIT");
              committed.push(...sequences);
            }
          }
        } finally {
          client.release(true);
        }
      }),
    );
    writing = false;
    await tail;
    expect(delivered).toEqual([...committed].sort((a, b) => a - b));
    expect(new Set(delivered).size).toBe(delivered.length);
    let rolledBack = 0;
    for (let w = 0; w < writers; w++) for (let i = 0; i < perWriter; i++) if ((w + i) % 5 === 0) rolledBack++;
    expect(committed.length).toBe(2 * (writers * perWriter - rolledBack));
  });
});
