import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Store } from "../../src/store/store.js";
import { item } from "./contract/records.js";

const NOW = "2026-12-01T00:00:00.000Z";

/** WAL frames one committed transaction writes (the WAL is emptied first). */
function framesOf(store: Store, fn: () => void): number {
  store.db.pragma("wal_checkpoint(TRUNCATE)");
  store.transaction(fn);
  return (store.db.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0]!.log;
}

describe("projection rows are updated in the columns that changed", () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-changed-columns-"));
    store = new Store(join(dir, "switchyard.db"));
    // Enough items over enough threads that the items table and its position index span many
    // pages, so an update that touched the index would dirty a page of its own.
    store.transaction(() => {
      for (let i = 0; i < 2_000; i += 1)
        store.append(null, [item(`item:${i}`, `thread:${i % 40}`, i, `text ${String(i).padStart(5, "0")}`)], NOW);
    });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes no index page for an update that changes no indexed column", () => {
    // The event's page, the events table's sequence counter and the item's own row: the
    // items-by-position index is not rewritten (before, it was: four frames). The transaction
    // knows the row it updates, as a command's does (it reads a record before it changes it): a
    // row it never read is written whole, its event's insert finding the link to the previous one.
    const update = () => {
      store.get("item", "item:1234");
      store.append(null, [item("item:1234", "thread:34", 1234, "TEXT 01234")], NOW);
    };
    expect(framesOf(store, update)).toBe(3);
  });

  it("moves the index entries of the columns that did change, and reads see the new values only", () => {
    store.transaction(() => store.append(null, [item("item:7", "thread:7", 7, "moved", "user_message")], NOW));
    store.transaction(() => store.append(null, [item("item:8", "thread:39", 9_999, "moved too")], NOW));
    expect(
      store
        .select("item", "thread_id = ? AND kind = ?", ["thread:7", "user_message"])
        .map((record) => (record as { id: string }).id),
    ).toEqual(["item:7"]);
    expect(store.select("item", "thread_id = ? AND position = ?", ["thread:8", 8])).toEqual([]);
    expect(
      store
        .select("item", "thread_id = ? AND position = ?", ["thread:39", 9_999])
        .map((record) => (record as { text: string }).text),
    ).toEqual(["moved too"]);
    expect(store.db.prepare("PRAGMA integrity_check").pluck().get()).toBe("ok");
  });

  it("leaves the same projections as a replay of the log", () => {
    store.transaction(() => {
      for (let i = 0; i < 300; i += 1)
        store.append(
          null,
          [
            item(
              `item:${i * 5}`,
              `thread:${(i * 7) % 40}`,
              10_000 + i,
              `rewritten ${i}`,
              i % 2 === 0 ? "user_message" : "assistant_message",
            ),
          ],
          NOW,
        );
    });
    const rows = () =>
      store.db
        .prepare("SELECT id, thread_id, run_id, position, kind, data, last_sequence FROM items ORDER BY id")
        .all();
    const live = rows();
    store.rebuildProjections();
    expect(rows()).toEqual(live);
  });
});
