import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../src/store/records.js";
import { backends } from "./backends.js";
import { item, project } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

/** Lets the event loop run everything else that is ready (timers aside): what an await on I/O allows. */
async function yieldToOthers(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** A promise the test settles when it chooses. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

class Refused extends Error {}

const idsOf = (events: readonly StoredEvent[]) => events.map((event) => (event.record as { id: string }).id);

describe.each(backends)("store contract ($name): a unit of work that awaits", (backend) => {
  let store: StoreHarness;
  let heard: (readonly StoredEvent[])[];
  beforeEach(async () => {
    store = await backend.open();
    heard = [];
    store.onCommitted((events) => heard.push(events));
  });
  afterEach(() => backend.closeAll());

  it("commits appends made across awaits at once, and the listeners hear them only then", async () => {
    const written = await store.transactionAsync(async (work) => {
      const first = work.append("cmd:1", [item("item:1", "thread:1", 1, "one")]);
      await yieldToOthers();
      const second = work.append("cmd:1", [item("item:2", "thread:1", 2, "two"), project("project:1", "one")]);
      work.enqueueEffect({ id: "effect:1", lane: "thread:1", type: "test.effect", payload: {} });
      await yieldToOthers();
      expect(await work.get("item", "item:1")).toMatchObject({ text: "one" });
      expect(heard).toEqual([]);
      return [...first, ...second];
    });
    expect(idsOf(written)).toEqual(["item:1", "item:2", "project:1"]);
    expect(await store.eventsAfter(0)).toEqual(written);
    expect(await store.effect("effect:1")).toMatchObject({ status: "pending" });
    expect(heard).toEqual([written]);
  });

  it("rolls back everything a unit of work wrote across awaits when it rejects, and announces nothing", async () => {
    await store.transaction((work) => work.append(null, [item("item:kept", "thread:1", 1, "kept")]));
    heard = [];
    await expect(
      store.transactionAsync(async (work) => {
        work.append("cmd:failed", [item("item:kept", "thread:1", 1, "overwritten")]);
        await yieldToOthers();
        work.append("cmd:failed", [item("item:new", "thread:1", 2, "new")]);
        work.enqueueEffect({ id: "effect:failed", lane: "thread:1", type: "test.effect", payload: {} });
        await yieldToOthers();
        throw new Refused("the work fails after its awaits");
      }),
    ).rejects.toThrow(Refused);
    expect(await store.get("item", "item:kept")).toMatchObject({ text: "kept" });
    expect(await store.get("item", "item:new")).toBeNull();
    expect(await store.effect("effect:failed")).toBeNull();
    expect(await store.lastSequence()).toBe(1);
    expect(heard).toEqual([]);
    // The next one starts clean: the failed one's events are not announced with its commit.
    const next = await store.transactionAsync(async (work) => work.append(null, [project("project:next", "next")]));
    expect(heard).toEqual([next]);
  });

  it("runs units of work one at a time, in call order: each starts after the one before committed, and sees it", async () => {
    const order: string[] = [];
    const firstMayFinish = gate();
    const first = store.transactionAsync(async (work) => {
      order.push("first started");
      work.append("cmd:first", [item("item:first", "thread:1", 1, "first")]);
      await firstMayFinish.opened;
      order.push("first finished");
    });
    const second = store.transactionAsync(async (work) => {
      order.push("second started");
      const seen = await work.get("item", "item:first");
      await yieldToOthers();
      work.append("cmd:second", [item("item:second", "thread:1", 2, "second")]);
      order.push("second finished");
      return seen;
    });
    const third = store.transactionAsync(async (work) => {
      order.push("third started");
      return work.get("item", "item:second");
    });
    await yieldToOthers();
    expect(order).toEqual(["first started"]);
    firstMayFinish.open();
    const [, seenBySecond, seenByThird] = await Promise.all([first, second, third]);
    expect(order).toEqual(["first started", "first finished", "second started", "second finished", "third started"]);
    expect(seenBySecond).toMatchObject({ text: "first" });
    expect(seenByThird).toMatchObject({ text: "second" });
    expect(heard.map(idsOf)).toEqual([["item:first"], ["item:second"]]);
  });

  it("makes a nested unit of work a savepoint: one that rejects rolls back alone, the outer one commits", async () => {
    const written = await store.transactionAsync(async (work) => {
      const before = work.append(null, [item("item:before", "thread:1", 1, "before")]);
      await expect(
        work.nested(async (inner) => {
          inner.append(null, [item("item:inner", "thread:1", 2, "inner"), project("project:inner", "inner")]);
          inner.enqueueEffect({ id: "effect:inner", lane: "thread:1", type: "test.effect", payload: {} });
          await yieldToOthers();
          expect(await inner.get("item", "item:inner")).toMatchObject({ text: "inner" });
          throw new Refused("the nested work fails");
        }),
      ).rejects.toThrow(Refused);
      expect(await work.get("item", "item:inner")).toBeNull();
      const kept = await work.nested(async (inner) => {
        await yieldToOthers();
        return inner.append(null, [item("item:nested", "thread:1", 2, "nested")]);
      });
      const after = work.append(null, [item("item:after", "thread:1", 3, "after")]);
      return [...before, ...kept, ...after];
    });
    expect(await store.get("item", "item:inner")).toBeNull();
    expect(await store.get("project", "project:inner")).toBeNull();
    expect(await store.effect("effect:inner")).toBeNull();
    expect(idsOf(written)).toEqual(["item:before", "item:nested", "item:after"]);
    expect(await store.eventsAfter(0)).toEqual(written);
    expect(heard).toEqual([written]);
  });

  it("runs nested units of work started together one after the other, each rolling back alone", async () => {
    const failingMayFail = gate();
    await store.transactionAsync(async (work) => {
      const failing = work.nested(async (inner) => {
        inner.append(null, [item("item:failing", "thread:1", 1, "failing")]);
        await failingMayFail.opened;
        throw new Refused("the first nested work fails");
      });
      const succeeding = work.nested(async (inner) => {
        inner.append(null, [item("item:succeeding", "thread:1", 2, "succeeding")]);
        await yieldToOthers();
      });
      await yieldToOthers();
      failingMayFail.open();
      const [failed, succeeded] = await Promise.allSettled([failing, succeeding]);
      expect(failed).toMatchObject({ status: "rejected", reason: expect.any(Refused) });
      expect(succeeded.status).toBe("fulfilled");
    });
    expect(await store.get("item", "item:failing")).toBeNull();
    expect(await store.get("item", "item:succeeding")).toMatchObject({ text: "succeeding" });
  });

  it("lets reads from outside an open unit of work see only what has committed", async () => {
    const committed = await store.transaction((work) =>
      work.append(null, [item("item:committed", "thread:1", 1, "c")]),
    );
    const appended = gate();
    const mayCommit = gate();
    const open = store.transactionAsync(async (work) => {
      work.append("cmd:open", [item("item:open", "thread:1", 2, "open"), item("item:committed", "thread:1", 1, "new")]);
      work.enqueueEffect({ id: "effect:open", lane: "thread:1", type: "test.effect", payload: {} });
      appended.open();
      await mayCommit.opened;
    });
    await appended.opened;

    expect(await store.get("item", "item:open")).toBeNull();
    expect(await store.get("item", "item:committed")).toMatchObject({ text: "c" });
    expect(await store.lastSequence()).toBe(committed.at(-1)!.sequence);
    expect(await store.eventsAfter(0)).toEqual(committed);
    expect(await store.effect("effect:open")).toBeNull();
    expect(await store.dueEffects(store.nowMs())).toEqual([]);
    expect(await store.unfinishedEffects()).toEqual([]);

    mayCommit.open();
    await open;
    expect(await store.get("item", "item:open")).toMatchObject({ text: "open" });
    expect(await store.get("item", "item:committed")).toMatchObject({ text: "new" });
    expect((await store.dueEffects(store.nowMs())).map((effect) => effect.id)).toEqual(["effect:open"]);
  });

  it("loses nothing committed and shows nothing of a unit of work open when its process is killed with kill -9", async () => {
    const before = await store.transaction((work) =>
      work.append("cmd:before", [item("item:before", "thread:0", 0, "before")]),
    );
    const writer = await backend.spawnStoreProcess(store);
    const committed = await writer.append("cmd:committed", [item("item:committed", "thread:0", 1, "committed")]);
    // About 40 MB (events and rows), past the page cache (better-sqlite3's is 16 MB), so the open
    // transaction's pages spill into the log file before any commit: what recovery must ignore.
    const open = Array.from({ length: 400 }, (_, n) =>
      item(`item:open:${n}`, `thread:open:${n % 7}`, n, `uncommitted ${n} `.repeat(3_500)),
    );
    await writer.appendInOpenTransaction("cmd:open", open);
    // Meanwhile another store reads committed state only, and the open one holds the write lock.
    expect(await store.get("item", "item:open:0")).toBeNull();
    await writer.kill();

    store = await backend.reopen(store);
    const feed = await store.eventsAfter(0, 1_000_000);
    expect(feed.map((event) => event.sequence)).toEqual([before[0]!.sequence, ...committed]);
    expect(await store.get("item", "item:committed")).toMatchObject({ text: "committed" });
    for (const upsert of open.slice(0, 20)) expect(await store.get("item", upsert.record.id)).toBeNull();
    const rows = (await store.projections()).items ?? [];
    expect(rows.map((row) => row.id)).toEqual(["item:before", "item:committed"]);
    // And the database takes writes again: nothing of the killed transaction holds its lock.
    const after = await store.transactionAsync(async (work) =>
      work.append(null, [item("item:after", "thread:0", 2, "after")]),
    );
    expect(after[0]!.sequence).toBeGreaterThan(committed.at(-1)!);
  });
});
