import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../src/store/records.js";
import { backends } from "./backends.js";
import { item, project } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

describe.each(backends)("store contract ($name): an append and its projection commit together", (backend) => {
  let store: StoreHarness;
  let heard: (readonly StoredEvent[])[];
  beforeEach(async () => {
    store = await backend.open();
    heard = [];
    store.onCommitted((events) => heard.push(events));
  });
  afterEach(() => backend.closeAll());

  it("leaves neither events, projection rows, receipt nor effect of a unit of work that throws, and tells no listener", async () => {
    await store.transaction((work) => work.append("cmd:kept", [project("project:kept", "kept")]));
    const before = await store.lastSequence();
    heard.length = 0;

    await expect(
      store.transaction((work) => {
        work.append("cmd:lost", [project("project:lost", "lost"), item("item:lost", "thread:1", 1, "lost")]);
        work.append("cmd:lost", [project("project:kept", "renamed by the lost one")]);
        work.putReceipt({
          commandId: "cmd:lost",
          operation: "test.lost",
          requestHash: "h",
          result: { ok: true },
          firstSequence: before + 1,
          lastSequence: before + 3,
          createdAt: "2026-12-01T00:00:00.000Z",
        });
        work.enqueueEffect({ id: "effect:lost", lane: "thread:1", type: "test.effect", payload: {} });
        throw new Error("the unit of work fails after its writes");
      }),
    ).rejects.toThrow("the unit of work fails after its writes");

    expect(await store.lastSequence()).toBe(before);
    expect(await store.eventsAfter(before)).toEqual([]);
    expect(await store.get("project", "project:lost")).toBeNull();
    expect(await store.get("item", "item:lost")).toBeNull();
    expect((await store.get("project", "project:kept"))?.name).toBe("kept");
    expect(await store.receipt("cmd:lost")).toBeNull();
    expect(await store.effect("effect:lost")).toBeNull();
    expect(heard).toEqual([]);
  });

  it.runIf(backend.has.engine)(
    "leaves nothing of an engine command whose handler throws after its writes: no event, row, receipt or effect",
    async () => {
      await store.execute({
        commandId: "cmd:kept",
        operation: "test.kept",
        request: {},
        handle: (ctx) => ctx.put("project", project("project:kept", "kept").record),
      });
      const before = await store.lastSequence();
      const tables = await store.tables();
      heard.length = 0;

      await expect(
        store.execute({
          commandId: "cmd:lost",
          operation: "test.lost",
          request: {},
          handle: (ctx) => {
            ctx.put("project", project("project:kept", "renamed by the lost one").record);
            ctx.put("item", item("item:lost", "thread:1", 1, "lost").record);
            ctx.effect({ id: "effect:lost", lane: "thread:1", type: "test.effect", payload: {} });
            throw new Error("the handler fails after its writes");
          },
        }),
      ).rejects.toThrow("the handler fails after its writes");

      expect(await store.lastSequence()).toBe(before);
      expect(await store.tables()).toEqual(tables);
      expect((await store.get("project", "project:kept"))?.name).toBe("kept");
      expect(await store.get("item", "item:lost")).toBeNull();
      expect(await store.receipt("cmd:lost")).toBeNull();
      expect(await store.effect("effect:lost")).toBeNull();
      expect(heard).toEqual([]);
    },
  );

  it("commits the events and their projection rows together, and listeners hear exactly the committed batch", async () => {
    const appended = await store.transaction((work) => [
      ...work.append("cmd:one", [project("project:a", "a"), item("item:1", "thread:1", 1, "first")]),
      ...work.append("cmd:one", [project("project:a", "a renamed")]),
    ]);

    expect(appended.map((event) => event.type)).toEqual(["project.upserted", "item.upserted", "project.upserted"]);
    expect(await store.eventsAfter(0)).toEqual(appended);
    expect(await store.lastSequence()).toBe(appended[2]!.sequence);
    // The projection is the last event's record, and its row names that event.
    expect(await store.get("project", "project:a")).toEqual(appended[2]!.record);
    expect(await store.get("item", "item:1")).toEqual(appended[1]!.record);
    const rows = await store.projections();
    expect(rows.projects).toEqual([expect.objectContaining({ id: "project:a", last_sequence: appended[2]!.sequence })]);
    expect(heard).toEqual([appended]);
  });

  it("tells listeners each committed unit of work once, in commit order, and never a failed one between them", async () => {
    const first = await store.transaction((work) => work.append(null, [item("item:1", "thread:1", 1, "one")]));
    await expect(
      store.transaction((work) => {
        work.append(null, [item("item:2", "thread:1", 2, "two")]);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    const third = await store.transaction((work) => work.append(null, [item("item:3", "thread:2", 1, "three")]));
    expect(heard).toEqual([first, third]);
  });

  it("removes a record's row on its tombstone, in the same commit as the event", async () => {
    await store.transaction((work) => work.append(null, [project("project:gone", "gone")]));
    const [tombstone] = await store.transaction((work) => work.append(null, [project("project:gone", "gone", true)]));
    expect(await store.get("project", "project:gone")).toBeNull();
    expect((await store.eventsAfter(0)).at(-1)).toEqual(tombstone);
  });
});
