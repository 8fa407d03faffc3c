import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../src/store/records.js";
import { backends } from "./backends.js";
import { item, project } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

describe.each(backends)("store contract ($name): savepoints", (backend) => {
  let store: StoreHarness;
  let heard: (readonly StoredEvent[])[];
  beforeEach(async () => {
    store = await backend.open();
    heard = [];
    store.onCommitted((events) => heard.push(events));
  });
  afterEach(() => backend.closeAll());

  it("rolls back a nested unit of work that throws, alone: the outer one commits what it wrote before and after", async () => {
    const { before, after } = await store.transaction((work) => {
      const before = work.append(null, [item("item:before", "thread:1", 1, "before")]);
      expect(() =>
        work.nested((inner) => {
          inner.append(null, [item("item:inner", "thread:1", 2, "inner"), project("project:inner", "inner")]);
          inner.enqueueEffect({ id: "effect:inner", lane: "thread:1", type: "test.effect", payload: {} });
          throw new Error("the nested work fails");
        }),
      ).toThrow("the nested work fails");
      const after = work.append(null, [item("item:after", "thread:1", 2, "after")]);
      return { before, after };
    });

    expect(await store.get("item", "item:inner")).toBeNull();
    expect(await store.get("project", "project:inner")).toBeNull();
    expect(await store.effect("effect:inner")).toBeNull();
    // The position the rolled-back item took is free again: its row is gone, not just hidden.
    expect((await store.get("item", "item:after"))?.position).toBe(2);
    expect(await store.eventsAfter(0)).toEqual([...before, ...after]);
    expect(heard).toEqual([[...before, ...after]]);
  });

  it("keeps a nested unit of work that succeeded only if the outer one commits", async () => {
    await expect(
      store.transaction((work) => {
        work.nested((inner) => inner.append(null, [project("project:nested", "nested")]));
        throw new Error("the outer work fails");
      }),
    ).rejects.toThrow("the outer work fails");
    expect(await store.get("project", "project:nested")).toBeNull();
    expect(await store.lastSequence()).toBe(0);
    expect(heard).toEqual([]);
  });

  it.runIf(backend.has.engine)(
    "commits the engine's applyEach changes that succeed, in one batch, and rolls back the one that throws alone",
    async () => {
      const failures: { index: number; message: string }[] = [];
      await store.applyEach(
        [
          (ctx) => {
            ctx.put("project", project("project:first", "first").record);
          },
          (ctx) => {
            ctx.put("project", project("project:second", "second").record);
            ctx.put("item", item("item:second", "thread:2", 1, "second").record);
            throw new Error("the second change fails");
          },
          (ctx) => {
            ctx.put("project", project("project:third", "third").record);
          },
        ],
        (error, index) => failures.push({ index, message: (error as Error).message }),
      );

      expect(failures).toEqual([{ index: 1, message: "the second change fails" }]);
      expect(await store.get("project", "project:second")).toBeNull();
      expect(await store.get("item", "item:second")).toBeNull();
      const events = await store.eventsAfter(0);
      expect(events.map((event) => (event.record as { id: string }).id)).toEqual(["project:first", "project:third"]);
      expect(heard).toEqual([events]);
    },
  );
});
