import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommandContext } from "../../src/engine/command-context.js";
import { TransactionalEngine } from "../../src/engine/engine.js";
import type { EntityRecords } from "../../src/store/records.js";
import { Store } from "../../src/store/store.js";
import { systemClock } from "../../src/util/clock.js";
import { randomIdAllocator } from "../../src/util/ids.js";
import { item as itemOf } from "../store/contract/records.js";

let positions = 0;
const itemPositions: Record<string, number> = {};

/** An item record of thread:1; each id its own position (positions are unique per thread). */
function item(id: string, text: string): EntityRecords["item"] {
  return itemOf(id, "thread:1", (itemPositions[id] ??= positions += 1), text).record;
}

describe("a command's receipt", () => {
  let dir: string;
  let store: Store;
  let engine: TransactionalEngine;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-receipts-"));
    store = new Store(join(dir, "switchyard.db"));
    engine = new TransactionalEngine(store, systemClock, randomIdAllocator);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The sequences of the events carrying `commandId`, oldest first. */
  const eventsOf = (commandId: string) =>
    store.db.prepare("SELECT sequence FROM events WHERE command_id = ? ORDER BY sequence").pluck().all(commandId);

  it("names the first and last of the command's own events, appended in several batches around other writes", async () => {
    await engine.apply((ctx) => ctx.put("item", item("item:before", "written before the command")));
    const handle = async (ctx: CommandContext) => {
      ctx.put("item", item("item:a", "first batch"));
      ctx.put("item", item("item:b", "first batch"));
      await ctx.get("item", "item:a");
      ctx.put("item", item("item:a", "second batch"));
      return "done";
    };
    const outcome = await engine.execute({ commandId: "cmd:batches", operation: "test", request: {}, handle });
    await engine.apply((ctx) => ctx.put("item", item("item:after", "written after the command")));

    const own = eventsOf("cmd:batches") as number[];
    expect(own).toHaveLength(3);
    expect(store.getReceipt("cmd:batches")).toMatchObject({ firstSequence: own[0], lastSequence: own[2] });
    expect(outcome).toMatchObject({ replayed: false, sequence: own[2] });
    // A retry replays the receipt, with the same newest sequence.
    expect(await engine.execute({ commandId: "cmd:batches", operation: "test", request: {}, handle })).toMatchObject({
      replayed: true,
      result: "done",
      sequence: own[2],
    });
  });

  it("names no sequence for a command that appended nothing", async () => {
    await engine.apply((ctx) => ctx.put("item", item("item:before", "the log is not empty")));
    const outcome = await engine.execute({
      commandId: "cmd:reads-only",
      operation: "test",
      request: {},
      handle: async (ctx) => (await ctx.get("item", "item:before"))?.text,
    });
    expect(outcome).toMatchObject({ result: "the log is not empty", sequence: null });
    expect(store.getReceipt("cmd:reads-only")).toMatchObject({ firstSequence: null, lastSequence: null });
  });

  it("runs no MAX(sequence) query for its receipt", async () => {
    const seen: string[] = [];
    store.close();
    store = new Store(join(dir, "switchyard.db"), { onStatement: (sql) => seen.push(sql) });
    engine = new TransactionalEngine(store, systemClock, randomIdAllocator);
    await engine.execute({
      commandId: "cmd:counted",
      operation: "test",
      request: {},
      handle: (ctx) => ctx.put("item", item("item:a", "one")),
    });
    expect(seen.filter((sql) => sql.includes("MAX(sequence)"))).toEqual([]);
    expect(store.getReceipt("cmd:counted")).toMatchObject({
      firstSequence: eventsOf("cmd:counted")[0],
      lastSequence: eventsOf("cmd:counted")[0],
    });
  });
});
