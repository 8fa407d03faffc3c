import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommitNudge } from "../../src/store/commit-feed.js";
import type { StoredEvent } from "../../src/store/records.js";
import { Store } from "../../src/store/store.js";
import { attempt, item, project } from "./contract/records.js";

const NOW = "2026-12-07T00:00:00.000Z";

describe("the commit feed: an ordered stream and a nudge", () => {
  let folder: string;
  let store: Store;
  let heard: string[];
  let nudges: CommitNudge[];
  let batches: StoredEvent[][];

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), "sy-commit-feed-"));
    store = new Store(join(folder, "store.db"));
    heard = [];
    nudges = [];
    batches = [];
    store.onCommitNudge((nudge) => {
      heard.push("nudge");
      nudges.push(nudge);
    });
    store.onCommitted((events) => {
      heard.push("ordered");
      batches.push([...events]);
    });
  });

  afterEach(() => {
    store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("names every record a commit wrote, with its thread, and nothing of its contents", () => {
    store.transaction(() => {
      store.append("cmd:1", [project("project:1", "one")], NOW);
      store.append("cmd:1", [item("item:1", "thread:a", 1, "hello"), item("item:2", "thread:b", 2, "there")], NOW);
      store.append(null, [attempt("attempt:1", "thread:a", "running", "s:1")], NOW);
    });

    expect(nudges).toEqual([
      {
        changes: [
          { entity: "project", id: "project:1", threadId: null },
          { entity: "item", id: "item:1", threadId: "thread:a" },
          { entity: "item", id: "item:2", threadId: "thread:b" },
          { entity: "attempt", id: "attempt:1", threadId: "thread:a" },
        ],
      },
    ]);
    // The ordered stream hears the same commit first, with the records, in sequence order.
    expect(heard).toEqual(["ordered", "nudge"]);
    expect(batches[0]!.map((event) => (event.record as { id: string }).id)).toEqual([
      "project:1",
      "item:1",
      "item:2",
      "attempt:1",
    ]);
  });

  it("nudges nothing for a rollback, and leaves a rolled-back savepoint's records out", () => {
    expect(() =>
      store.transaction(() => {
        store.append(null, [item("item:lost", "thread:a", 1, "lost")], NOW);
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    expect(nudges).toEqual([]);

    store.transaction(() => {
      store.append(null, [item("item:kept", "thread:a", 1, "kept")], NOW);
      expect(() =>
        store.transaction(() => {
          store.append(null, [item("item:undone", "thread:b", 2, "undone")], NOW);
          throw new Error("savepoint rolled back");
        }),
      ).toThrow("savepoint rolled back");
    });
    expect(nudges.map((nudge) => nudge.changes.map((change) => change.id))).toEqual([["item:kept"]]);
    expect(batches.map((batch) => batch.length)).toEqual([1]);
  });

  it("hears asynchronous transactions once each, after their commit", async () => {
    await Promise.all([
      store.transactionAsync(async () => {
        store.append(null, [item("item:a", "thread:a", 1, "a")], NOW);
        await Promise.resolve();
        store.append(null, [item("item:b", "thread:a", 2, "b")], NOW);
      }),
      store.transactionAsync(async () => {
        store.append(null, [item("item:c", "thread:c", 1, "c")], NOW);
      }),
    ]);
    expect(nudges.map((nudge) => nudge.changes.map((change) => change.id))).toEqual([["item:a", "item:b"], ["item:c"]]);
  });

  it("stops hearing once unsubscribed", () => {
    const stop = store.onCommitNudge(() => heard.push("second"));
    store.transaction(() => store.append(null, [item("item:1", "thread:a", 1, "one")], NOW));
    stop();
    store.transaction(() => store.append(null, [item("item:2", "thread:a", 2, "two")], NOW));
    expect(heard.filter((entry) => entry === "second")).toHaveLength(1);
  });
});
