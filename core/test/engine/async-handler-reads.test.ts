import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TransactionalEngine } from "../../src/engine/engine.js";
import type { EntityRecords } from "../../src/store/records.js";
import { Store } from "../../src/store/store.js";
import { systemClock } from "../../src/util/clock.js";
import { randomIdAllocator } from "../../src/util/ids.js";
import { item as itemOf } from "../store/contract/records.js";

/** An item record of thread:1 at position 1. */
function item(text: string): EntityRecords["item"] {
  return itemOf("item:shared", "thread:1", 1, text).record;
}

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** Lets every queued callback and microtask run (no timers: nothing here waits on the clock). */
async function drainEventLoop(): Promise<void> {
  for (let turn = 0; turn < 10; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe("a handler's reads", () => {
  let dir: string;
  let store: Store;
  let engine: TransactionalEngine;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-async-reads-"));
    store = new Store(join(dir, "switchyard.db"));
    engine = new TransactionalEngine(store, systemClock, randomIdAllocator);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("are asynchronous, and a command queued meanwhile sees the first one's commit, never its half state", async () => {
    await engine.apply((ctx) => ctx.put("item", item("before")));
    const firstIsWaiting = deferred();
    const releaseFirst = deferred();
    const order: string[] = [];

    const first = engine.execute({
      commandId: "cmd:first",
      operation: "test.first",
      request: {},
      handle: async (ctx) => {
        ctx.put("item", item("half"));
        // A read that really yields: the command's own write, then the event loop runs on.
        const own = await ctx.get("item", "item:shared");
        order.push(`first read ${own?.text}`);
        firstIsWaiting.resolve();
        await releaseFirst.promise;
        ctx.put("item", item("committed"));
        order.push("first done");
        return own?.text;
      },
    });
    await firstIsWaiting.promise;

    const second = engine.execute({
      commandId: "cmd:second",
      operation: "test.second",
      request: {},
      handle: async (ctx) => {
        const seen = await ctx.get("item", "item:shared");
        order.push(`second read ${seen?.text}`);
        return seen?.text;
      },
    });
    await drainEventLoop();
    // The first command's transaction is open and awaiting: the second waits its turn, and a
    // reader outside both sees only what committed.
    expect(order).toEqual(["first read half"]);
    expect(store.get("item", "item:shared")?.text).toBe("before");

    releaseFirst.resolve();
    expect((await first).result).toBe("half");
    expect((await second).result).toBe("committed");
    expect(order).toEqual(["first read half", "first done", "second read committed"]);
  });

  it("may change a record through an async change function", async () => {
    await engine.apply((ctx) => ctx.put("item", item("before")));
    await engine.apply(async (ctx) => {
      await ctx.update("item", "item:shared", async (current) => {
        const again = await ctx.require("item", current.id);
        return { ...current, text: `${again.text}, then after` };
      });
    });
    expect(store.get("item", "item:shared")?.text).toBe("before, then after");
  });
});
