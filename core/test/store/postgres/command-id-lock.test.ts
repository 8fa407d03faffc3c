import { describe, expect, it } from "vitest";
import { postgresTestsSkipped } from "@switchyard/testkit";
import { CommandProcessor, engineHooks } from "../../../src/engine/command-processor.js";
import type { Command } from "../../../src/engine/ports.js";
import { migratePostgres, PostgresEventStore } from "../../../src/store/postgres/index.js";
import { systemClock } from "../../../src/util/clock.js";
import { randomIdAllocator } from "../../../src/util/ids.js";
import { project } from "../contract/records.js";
import { postgresDatabaseForThisFile } from "./support.js";

// The engine's receipt lookup on PostgreSQL holds the command id until its unit ends: two nodes
// given one id at once run it once. The contract suite's two-process test cannot tell a lookup
// that waits from one that was merely late; this one waits until the second node is blocked in
// the database before the first commits, so only the lock can make it replay.

const database = postgresDatabaseForThisFile();

/** Waits (bounded) until some session waits for an advisory lock another one holds. */
async function someoneWaitsForAnAdvisoryLock(store: PostgresEventStore): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const waiting = await store.pool.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
    if (waiting.rowCount! > 0) return;
    if (attempt >= 400) throw new Error("no session ever waited for an advisory lock");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(postgresTestsSkipped())("the engine on PostgreSQL: one command id on two nodes at once", () => {
  it("runs it on one node; the other waits in its receipt lookup and replays the result", async () => {
    const first = new PostgresEventStore(await database.pool());
    await migratePostgres(first.pool);
    const second = new PostgresEventStore(await database.pool());
    const processor = (store: PostgresEventStore) =>
      new CommandProcessor(store, systemClock, randomIdAllocator, engineHooks([]));
    const runs: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const command = (node: string): Command<{ node: string }> => ({
      commandId: "cmd:once",
      operation: "test.once",
      request: {},
      handle: async (ctx) => {
        runs.push(node);
        ctx.put("project", project("project:once", node).record);
        if (node === "first") {
          holding();
          await released;
        }
        return { node };
      },
    });

    const ran = processor(first).execute(command("first"));
    await held;
    const replayed = processor(second).execute(command("second"));
    try {
      await someoneWaitsForAnAdvisoryLock(second);
    } finally {
      // Also when the wait failed: the first's unit ends either way, and the pools can close.
      release();
    }

    const [outcome, again] = await Promise.all([ran, replayed]);
    expect(runs).toEqual(["first"]);
    expect(again).toEqual({ ...outcome, replayed: true });
    expect((await second.get("project", "project:once"))?.name).toBe("first");
  });
});
