import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ENTITY_NAMES, ENTITY_TABLES } from "../../src/store/entity-tables.js";
import { REPLAY_BATCH, Store } from "../../src/store/store.js";
import { item, project } from "./contract/records.js";

const NOW = "2026-12-01T00:00:00.000Z";

/**
 * Two batches of the rebuild's reads, so records an earlier batch wrote are updated, removed and
 * created again by a later one.
 */
const FILLER_ITEMS = 2 * REPLAY_BATCH;

/** Every projection row, whole, and each table's rowids (`ORDER BY rowid` reads their order). */
function snapshot(store: Store): Record<string, { rows: unknown[]; rowids: unknown[] }> {
  return Object.fromEntries(
    ENTITY_NAMES.map((name) => {
      const table = ENTITY_TABLES[name].table;
      return [
        table,
        {
          rows: store.db.prepare(`SELECT * FROM ${table} ORDER BY id`).all(),
          rowids: store.db.prepare(`SELECT rowid || ' ' || id FROM ${table} ORDER BY rowid`).pluck().all(),
        },
      ];
    }),
  );
}

describe("rebuildProjections writes a record's upserts in a batch once, with the rowid it had live", () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-rebuild-newest-"));
    store = new Store(join(dir, "switchyard.db"));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("matches the live projections and their rowids, within a batch and across batches", () => {
    const append = (...upserts: Parameters<Store["append"]>[1]) =>
      store.transaction(() => store.append(null, upserts, NOW));
    // Early records: later events update them, remove them, or remove and create them again.
    for (let n = 0; n < 6; n += 1) append(project(`project:${n}`, `project ${n}`));
    append(item("item:early", "thread:early", 1, "first text"));
    append(project("project:1", "project 1", true));
    append(project("project:1", "project 1 again")); // created again: its row comes after project:5's
    store.transaction(() => {
      for (let n = 0; n < FILLER_ITEMS; n += 1)
        store.append(null, [item(`item:${n}`, `thread:${n % 50}`, n, "x")], NOW);
    });
    // Past the window: an update in place (keeps its rowid), moved to another position.
    append(item("item:early", "thread:early", 2, "last text"));
    // Tombstones of rows an earlier window wrote; one created again, one not.
    append(project("project:2", "project 2", true));
    append(project("project:3", "project 3", true));
    append(project("project:3", "project 3 again"));
    // Upserted several times within one batch, the last created updated first.
    append(project("project:new-b", "b"), project("project:new-a", "a"));
    append(project("project:new-a", "a, renamed"), project("project:new-b", "b, renamed"));
    append(item("item:new-b", "thread:new", 1, "b"), item("item:new-a", "thread:new", 2, "a"));
    append(item("item:new-a", "thread:new", 2, "a, edited"));
    append(item("item:new-a", "thread:new", 3, "a, moved"), item("item:new-b", "thread:new", 1, "b, edited"));
    append(project("project:4", "project 4, renamed"));
    const live = snapshot(store);
    expect(live.projects!.rowids).toEqual([
      "1 project:0",
      "5 project:4",
      "6 project:5",
      "7 project:1",
      "8 project:3",
      "9 project:new-b",
      "10 project:new-a",
    ]);
    expect(live.items!.rows).toHaveLength(FILLER_ITEMS + 3);
    expect(live.items!.rowids.slice(-2)).toEqual([`${FILLER_ITEMS + 2} item:new-b`, `${FILLER_ITEMS + 3} item:new-a`]);

    expect(store.rebuildProjections()).toBe(store.lastSequence());
    expect(snapshot(store)).toEqual(live);
    expect(store.get("item", "item:early")?.text).toBe("last text");
    expect(store.get("item", "item:new-a")).toMatchObject({ text: "a, moved", position: 3 });
    expect(store.get("project", "project:2")).toBeNull();
  });
});
