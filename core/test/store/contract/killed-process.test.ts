import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { until } from "../../support/until.js";
import { backends } from "./backends.js";
import { item } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

describe.each(backends)("store contract ($name): a process killed with kill -9", (backend) => {
  let store: StoreHarness;
  beforeEach(async () => {
    store = await backend.open();
  });
  afterEach(() => backend.closeAll());

  it("loses nothing it acknowledged, when killed in the middle of its commits", async () => {
    await store.transaction((work) => work.append(null, [item("item:before", "thread:0", 0, "before")]));
    const writer = await backend.spawnStoreProcess(store);
    const acked: number[] = [];
    writer.appendUntilKilled((sequence) => acked.push(sequence));
    await until("the writer to acknowledge 300 commits", () => acked.length >= 300, { attempts: 2_000 });
    await writer.kill();

    store = await backend.reopen(store);
    const feed = await store.eventsAfter(1, 1_000_000);
    const sequences = feed.map((event) => event.sequence);
    // Every acknowledged commit is there, in order; at most the one being written when the
    // kill landed follows the last acknowledgement.
    expect(sequences.slice(0, acked.length)).toEqual(acked);
    expect(sequences.length - acked.length).toBeLessThanOrEqual(1);
    for (const event of feed)
      expect(await store.get("item", (event.record as { id: string }).id)).toEqual(event.record);
    expect(await store.lastSequence()).toBe(sequences.at(-1));
  });

  it("leaves its claims claimed: the effect holds its lane until it is retried, and runs again", async () => {
    const worker = await backend.spawnStoreProcess(store);
    const now = store.nowMs();
    await worker.enqueueEffect({ id: "first", lane: "lane:a", type: "test.effect", payload: {} }, now);
    await worker.enqueueEffect({ id: "second", lane: "lane:a", type: "test.effect", payload: {} }, now);
    await worker.append("cmd:worker", [item("item:worker", "thread:w", 1, "written by the worker")]);
    expect(await worker.claimEffect("first", now)).toBe(true);
    await worker.kill();

    store = await backend.reopen(store);
    expect(await store.effect("first")).toMatchObject({ status: "claimed", attempts: 1 });
    expect(await store.dueEffects(now)).toEqual([]);
    expect(await store.get("item", "item:worker")).toMatchObject({ text: "written by the worker" });
    await store.retryEffect("first", 0, "reset after restart");
    expect((await store.dueEffects(now)).map((effect) => effect.id)).toEqual(["first"]);
  });
});
