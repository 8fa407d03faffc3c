import { afterEach, describe, expect, it } from "vitest";
import { backends } from "./backends.js";
import { attempt, item, project, thread, trigger } from "./records.js";
import type { CommandReceipt, RecordUpsert } from "../../../src/store/ports.js";
import type { TableRows } from "./store-harness.js";

/** `after`'s rows of the tables `before` has, in the columns `before` had: what a migration must keep. */
function keptColumns(before: TableRows, after: TableRows): TableRows {
  return Object.fromEntries(
    Object.entries(before).map(([table, rows]) => {
      const columns = Object.keys(rows[0] ?? {});
      return [
        table,
        (after[table] ?? []).map((row) => Object.fromEntries(columns.map((column) => [column, row[column]]))),
      ];
    }),
  );
}

describe.each(backends)("store contract ($name): migrations", (backend) => {
  afterEach(() => backend.closeAll());

  it("brings an empty database to the newest version, with the schema of one migrated one step at a time", async () => {
    const fresh = await backend.open();
    expect(await fresh.schemaVersion()).toBe(backend.newestVersion);
    const stepped = await backend.openStepByStep();
    expect(await stepped.schemaVersion()).toBe(backend.newestVersion);
    expect(await stepped.schema()).toEqual(await fresh.schema());
    // And it works: the same writes read back the same on both.
    for (const store of [fresh, stepped])
      await store.transaction((work) =>
        work.append(null, [project("project:1", "one"), item("item:1", "thread:1", 1, "one")]),
      );
    expect(await stepped.projections()).toEqual(await fresh.projections());
  });

  // The same history, as the store of each version writes it: the old one in the upgraded
  // database, the newest one in a fresh one to compare with.
  const history: readonly (readonly [string | null, readonly RecordUpsert[]])[] = [
    ["cmd:old:1", [project("project:1", "one"), thread("thread:1", "project:1", "the first thread")]],
    ["cmd:old:1", [item("item:1", "thread:1", 1, "one")]],
    [
      "cmd:old:1",
      [attempt("attempt:1", "thread:1", "running", "session:1"), attempt("attempt:2", "thread:2", "pending", null)],
    ],
    [null, [project("project:2", "two"), project("project:2", "two", true)]],
    ["cmd:old:2", [trigger("trigger:1", "task:1", "skipped"), item("item:1", "thread:1", 1, "one, edited")]],
  ];
  const receipt: CommandReceipt = {
    commandId: "cmd:old:1",
    operation: "test.old",
    requestHash: "h1",
    result: { ok: 1 },
    firstSequence: 1,
    lastSequence: 5,
    createdAt: "2026-12-01T00:00:00.000Z",
  };
  const queued = { id: "effect:old", lane: "thread:1", type: "test.effect", payload: { n: 1 } };

  for (const version of backend.previousVersions)
    it(`opens a database of version ${version} at the newest, its data intact and its new columns filled`, async () => {
      const old = await backend.openPreviousVersion(version);
      expect(old.version).toBe(version);
      for (const [commandId, upserts] of history) old.append(commandId, upserts);
      old.putReceipt(receipt);
      old.enqueueEffect(queued);
      const before = await old.tables();
      expect(before.events).toHaveLength(9);

      const store = await old.upgrade();
      expect(await store.schemaVersion()).toBe(backend.newestVersion);
      const upgraded = await store.tables();
      expect(keptColumns(before, upgraded)).toEqual(before);
      // Every table, every column, as the newest store writes the same history: what the
      // migrations added (columns, the previous-event links, indexes' columns) is filled in.
      const fresh = await backend.open();
      for (const [commandId, upserts] of history) await fresh.transaction((work) => work.append(commandId, upserts));
      await fresh.transaction((work) => {
        work.putReceipt(receipt);
        work.enqueueEffect(queued);
      });
      expect(upgraded).toEqual(await fresh.tables());

      expect((await store.get("item", "item:1"))?.text).toBe("one, edited");
      expect(await store.get("project", "project:2")).toBeNull();
      expect(await store.receipt("cmd:old:1")).toMatchObject({ result: { ok: 1 }, firstSequence: 1, lastSequence: 5 });
      expect(await store.unfinishedEffects()).toEqual([
        expect.objectContaining({ id: "effect:old", payload: { n: 1 } }),
      ]);
      // What was there before the search index (migration 31) is found by a search: the old
      // rows are indexed (at the first search, from the watermark the migration left unset).
      expect(await store.searchThreads("project:1", "edited")).toEqual(["thread:1"]);
      expect(await store.searchThreads("project:1", "first thread")).toEqual(["thread:1"]);
      // What the migrations filled in agrees with what the newest store derives from the log.
      const migrated = await store.projections();
      await store.rebuildProjections();
      expect(await store.projections()).toEqual(migrated);
      // And the newest store goes on from there: its events follow the old ones.
      const [next] = await store.transaction((work) => work.append(null, [item("item:2", "thread:1", 2, "two")]));
      expect(next!.sequence).toBe(10);
      expect((await store.eventsAfter(0)).map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
});
