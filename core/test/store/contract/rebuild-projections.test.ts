import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backends } from "./backends.js";
import { attempt, item, project, trigger } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

/**
 * Creates, updates that move indexed columns and ones that do not, tombstones, commands with
 * a receipt (the engine's, where the backend has it), and `forget` of records (their events
 * and receipts with them).
 */
async function mixedWorkload(store: StoreHarness, engine: boolean): Promise<void> {
  await store.transaction((work) => {
    for (let n = 0; n < 40; n += 1) work.append(null, [item(`item:${n}`, `thread:${n % 4}`, n, `text ${n}`)]);
    for (let n = 0; n < 6; n += 1) work.append(null, [project(`project:${n}`, `project ${n}`)]);
    for (let n = 0; n < 5; n += 1) work.append(null, [attempt(`attempt:${n}`, `thread:${n}`, "pending", null)]);
  });
  await store.transaction((work) => {
    // Same indexed columns, new text; then moved to another thread and kind.
    for (let n = 0; n < 40; n += 3) work.append(null, [item(`item:${n}`, `thread:${n % 4}`, n, `edited ${n}`)]);
    for (let n = 1; n < 40; n += 5)
      work.append(null, [item(`item:${n}`, "thread:moved", 1_000 + n, `moved ${n}`, "user_message")]);
    for (let n = 0; n < 5; n += 2)
      work.append(null, [attempt(`attempt:${n}`, `thread:${n}`, "running", `session:${n}`)]);
    work.append(null, [project("project:2", "project 2", true)]);
    work.append(null, [project("project:4", "project 4", true)]);
  });
  // Removed, then created again under the same id.
  await store.transaction((work) => work.append(null, [project("project:4", "project 4 again")]));
  for (let n = 0; n < 8; n += 1) {
    const commandId = `cmd:trigger:${n}`;
    const upserts = [
      trigger(`trigger:${n}`, `task:${n % 2}`, "started"),
      trigger(`trigger:${n}`, `task:${n % 2}`, "skipped"),
    ];
    if (engine)
      await store.execute({
        commandId,
        operation: "test.trigger",
        request: { n },
        handle: (ctx) => {
          for (const { record } of upserts) ctx.put("scheduledTrigger", record);
          return n;
        },
      });
    else
      // What the command writes, without the engine: its events under its id, and its receipt
      // (whose sequences the receipts tests check, where the engine runs).
      await store.transaction((work) => {
        work.append(commandId, upserts);
        work.putReceipt({
          commandId,
          operation: "test.trigger",
          requestHash: `request:${n}`,
          result: n,
          firstSequence: null,
          lastSequence: null,
          createdAt: "2026-12-01T00:00:00.000Z",
        });
      });
  }
  await store.transaction((work) =>
    work.forget("scheduledTrigger", ["trigger:1", "trigger:2", "trigger:5", "trigger:gone"]),
  );
}

describe.each(backends)("store contract ($name): rebuildProjections", (backend) => {
  let store: StoreHarness;
  beforeEach(async () => {
    store = await backend.open();
  });
  afterEach(() => backend.closeAll());

  it("rebuilds from the log projections equal to the live ones, in every entity table", async () => {
    await mixedWorkload(store, backend.has.engine);
    const live = await store.projections();
    // The workload reached every kind of row it meant to.
    expect(live.items).toHaveLength(40);
    expect(live.projects!.map((row) => row.id)).toEqual([
      "project:0",
      "project:1",
      "project:3",
      "project:4",
      "project:5",
    ]);
    expect(live.scheduled_triggers).toHaveLength(5);

    expect(await store.rebuildProjections()).toBe((await store.eventsAfter(0, 10_000)).length);
    expect(await store.projections()).toEqual(live);
    // A second rebuild changes nothing either.
    await store.rebuildProjections();
    expect(await store.projections()).toEqual(live);
  });

  it("forgets records for good: their rows, their events and their commands' receipts, so a rebuild cannot bring them back", async () => {
    await mixedWorkload(store, backend.has.engine);
    const feed = await store.eventsAfter(0, 10_000);
    const forgotten = new Set(["trigger:1", "trigger:2", "trigger:5"]);
    expect(feed.filter((event) => forgotten.has((event.record as { id: string }).id))).toEqual([]);
    for (const id of forgotten) expect(await store.get("scheduledTrigger", id)).toBeNull();
    expect(await store.receipt("cmd:trigger:1")).toBeNull();
    expect(await store.receipt("cmd:trigger:3")).not.toBeNull();

    await store.rebuildProjections();
    for (const id of forgotten) expect(await store.get("scheduledTrigger", id)).toBeNull();
    expect((await store.get("scheduledTrigger", "trigger:3"))?.outcome).toBe("skipped");
  });

  it("links the events of a record written from two connections at once in commit order: its row, a rebuild and forget agree", async () => {
    const other = await backend.connectAgain(store);
    await Promise.all(
      Array.from({ length: 80 }, (_, n) =>
        (n % 2 === 0 ? store : other).transaction((work) => {
          work.append(null, [project("project:shared", `name ${n}`)]);
          work.append(null, [item(`item:shared:${n % 3}`, "thread:shared", n % 3, `text ${n}`)]);
        }),
      ),
    );
    const live = await store.projections();
    const feed = await store.eventsAfter(0, 10_000);
    // Each row names its record's newest event, as the log orders them.
    expect(live.projects).toEqual([
      expect.objectContaining({
        id: "project:shared",
        last_sequence: feed.filter((e) => e.entity === "project").at(-1)!.sequence,
      }),
    ]);
    await store.rebuildProjections();
    expect(await store.projections()).toEqual(live);
    // Forget follows the record's links back to its first event: every one of them goes.
    await store.transaction((work) => work.forget("project", ["project:shared"]));
    expect((await store.eventsAfter(0, 10_000)).filter((event) => event.entity === "project")).toEqual([]);
  });

  it("keeps the rebuilt projections across a restart", async () => {
    await mixedWorkload(store, backend.has.engine);
    const live = await store.projections();
    await store.rebuildProjections();
    store = await backend.reopen(store);
    expect(await store.projections()).toEqual(live);
  });
});
