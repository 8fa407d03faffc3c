import { describe, expect, it } from "vitest";
import { postgresTestsSkipped } from "@switchyard/testkit";
import { CommandProcessor, engineHooks } from "../../../src/engine/command-processor.js";
import type { CommandContext } from "../../../src/engine/command-context.js";
import { migratePostgres, PostgresEventStore } from "../../../src/store/postgres/index.js";
import { systemClock } from "../../../src/util/clock.js";
import { randomIdAllocator } from "../../../src/util/ids.js";
import { isStoreBusy } from "../../../src/util/store-busy.js";
import { project } from "../contract/records.js";
import { postgresDatabaseForThisFile } from "./support.js";

// Two nodes whose units of work lock the same records in opposite orders deadlock; PostgreSQL
// rolls one back (SQLSTATE 40P01). That one must come out as the store's retryable error
// (`store_busy`, as SQLite's locked database does), with nothing of it written.

const database = postgresDatabaseForThisFile();

/** A latch: `open()` once, `opened` resolves then. */
function latch(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe.skipIf(postgresTestsSkipped())("the engine on PostgreSQL: units of work that deadlock", () => {
  it("rolls one back as a retryable store_busy error that names the SQLSTATE, and keeps the other", async () => {
    const first = new PostgresEventStore(await database.pool());
    await migratePostgres(first.pool);
    const second = new PostgresEventStore(await database.pool());
    const processor = (store: PostgresEventStore) =>
      new CommandProcessor(store, systemClock, randomIdAllocator, engineHooks([]));
    const firstLocked = latch();
    const secondLocked = latch();
    // Each writes one record and reads it (the flush takes its lock), waits for the other to
    // hold its own, then writes the other's record: a lock cycle.
    const crossing =
      (name: string, mine: string, theirs: string, locked: () => void, otherLocked: Promise<void>) =>
      async (ctx: CommandContext) => {
        ctx.put("project", project(mine, name).record);
        await ctx.get("project", mine);
        locked();
        await otherLocked;
        ctx.put("project", project(theirs, name).record);
        await ctx.get("project", theirs);
        return name;
      };

    const settled = await Promise.allSettled([
      processor(first).apply(crossing("first", "project:a", "project:b", firstLocked.open, secondLocked.opened)),
      processor(second).apply(crossing("second", "project:b", "project:a", secondLocked.open, firstLocked.opened)),
    ]);

    const failed = settled.filter((outcome) => outcome.status === "rejected");
    const kept = settled.filter((outcome) => outcome.status === "fulfilled");
    expect(failed).toHaveLength(1);
    expect(kept).toHaveLength(1);
    const error = (failed[0] as PromiseRejectedResult).reason as { code: string; details: unknown; message: string };
    expect(isStoreBusy(error)).toBe(true);
    expect(error).toMatchObject({ code: "store_busy", details: { sqlState: "40P01" } });
    expect(error.message).toContain("retry");
    // Both records are the kept one's: nothing of the rolled-back unit was written.
    const winner = (kept[0] as PromiseFulfilledResult<string>).value;
    expect((await first.get("project", "project:a"))?.name).toBe(winner);
    expect((await first.get("project", "project:b"))?.name).toBe(winner);
  });
});
