import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../../src/store/ports.js";
import { backends } from "./backends.js";
import { item, project, thread } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

// The thread search's named query on every backend (SQLite's FTS5, PostgreSQL's tsvector), each
// index kept from its store's log by a watermark: what a person finds by a word of a thread's
// title or messages, and what they must not find (another project, a deleted or forgotten
// thread, a title it no longer has), before and after the index caught up.

function deleted(upsert: RecordUpsert<"thread">): RecordUpsert<"thread"> {
  return { ...upsert, record: { ...upsert.record, deletedAt: "2026-12-02T00:00:00.000Z" } };
}

describe.each(backends)("store contract ($name): thread search", (backend) => {
  let store: StoreHarness;

  beforeEach(async () => {
    store = await backend.open();
  });
  afterEach(() => backend.closeAll());

  const write = (upserts: readonly RecordUpsert[]) => store.transaction((work) => work.append(null, upserts));

  it("finds a thread by words of its title or its messages, the last word also as a prefix", async () => {
    await write([
      project("project:a", "a"),
      project("project:b", "b"),
      thread("thread:1", "project:a", "Deploy the staging cluster"),
      thread("thread:2", "project:a", "Write the release notes"),
      thread("thread:3", "project:b", "Deploy elsewhere"),
      thread("thread:4", "project:a", "Ask O'Brien about C:\\temp"),
      item("item:1", "thread:2", 1, "Please mention the flaky migration", "user_message"),
      item("item:2", "thread:2", 2, "Noted: the migration is flaky on Mondays"),
    ]);
    expect(await store.searchThreads("project:a", "deploy")).toEqual(["thread:1"]);
    expect(await store.searchThreads("project:a", "STAGING cluster")).toEqual(["thread:1"]);
    expect(await store.searchThreads("project:a", "flaky migr")).toEqual(["thread:2"]);
    expect(await store.searchThreads("project:a", "mondays")).toEqual(["thread:2"]);
    expect(await store.searchThreads("project:b", "deploy")).toEqual(["thread:3"]);
    // Operators are words: nothing a person types is a syntax error.
    expect(await store.searchThreads("project:a", 'flaky "NEAR" -migration* :x')).toEqual([]);
    // Quotes and backslashes are text too, in the last word (a prefix) as in the others.
    expect(await store.searchThreads("project:a", "o'brien")).toEqual(["thread:4"]);
    expect(await store.searchThreads("project:a", "o'brien about c:\\te")).toEqual(["thread:4"]);
    expect(await store.searchThreads("project:a", "it's a\\b\\'")).toEqual([]);
  });

  it("finds nothing for a word no thread holds, or unless every word matches", async () => {
    await write([
      project("project:a", "a"),
      thread("thread:1", "project:a", "Deploy the staging cluster"),
      item("item:1", "thread:1", 1, "the cluster is up"),
    ]);
    expect(await store.searchThreads("project:a", "kubernetes")).toEqual([]);
    expect(await store.searchThreads("project:a", "deploy kubernetes")).toEqual([]);
    expect(await store.searchThreads("project:a", " - * ")).toEqual([]);
    expect(await store.searchThreads("project:a", "cluster")).toEqual(["thread:1"]);
  });

  it("finds a renamed thread by its new title only, renamed before or after the index caught up", async () => {
    await write([project("project:a", "a"), thread("thread:1", "project:a", "Draft the budget")]);
    expect(await store.searchThreads("project:a", "budget")).toEqual(["thread:1"]);
    await write([thread("thread:1", "project:a", "Quarterly forecast")]);
    expect(await store.searchThreads("project:a", "budget")).toEqual([]);
    expect(await store.searchThreads("project:a", "forecast")).toEqual(["thread:1"]);
    // Renamed twice between two searches: the index holds the last title only.
    await write([thread("thread:1", "project:a", "Hiring plan")]);
    await write([thread("thread:1", "project:a", "Office move")]);
    expect(await store.searchThreads("project:a", "forecast")).toEqual([]);
    expect(await store.searchThreads("project:a", "hiring")).toEqual([]);
    expect(await store.searchThreads("project:a", "office")).toEqual(["thread:1"]);
  });

  it("never finds a deleted or forgotten thread, by its title or its messages", async () => {
    const one = thread("thread:1", "project:a", "Rotate the signing keys");
    await write([
      project("project:a", "a"),
      one,
      thread("thread:2", "project:a", "Keep the keys"),
      thread("thread:3", "project:a", "Forget the keys"),
      item("item:1", "thread:1", 1, "the old keystore password"),
      item("item:3", "thread:3", 1, "the keystore backup"),
    ]);
    expect(await store.searchThreads("project:a", "keys")).toHaveLength(3);
    await write([deleted(one)]);
    expect(await store.searchThreads("project:a", "rotate")).toEqual([]);
    expect(await store.searchThreads("project:a", "keystore")).toEqual(["thread:3"]);
    await store.transaction((work) => {
      work.forget("item", ["item:3"]);
      work.forget("thread", ["thread:3"]);
    });
    expect(await store.searchThreads("project:a", "keystore")).toEqual([]);
    expect(await store.searchThreads("project:a", "keys")).toEqual(["thread:2"]);
    // Forgotten text does not outlive its record, in the index either (where the dump shows it).
    expect(JSON.stringify(await store.tables())).not.toContain("backup");
    // A rebuild of the projections answers the same (the index builds again in bulk).
    await store.rebuildProjections();
    expect(await store.searchThreads("project:a", "keys")).toEqual(["thread:2"]);
    expect(await store.searchThreads("project:a", "keystore")).toEqual([]);
  });

  it("catches up with many events in bounded batches, each thread and message as it last stood", async () => {
    await write([project("project:a", "a")]);
    // A new database's index is built in bulk at its first catch-up (nothing to build yet).
    expect(await store.catchUpThreadSearch(50)).toMatchObject({ rebuilt: true, behind: false });
    const units = 30;
    for (let n = 0; n < units; n++)
      await write([
        thread(`thread:${n}`, "project:a", `Thread number${n} draft`),
        // The same message written three times in a unit: indexed as it last stood.
        item(`item:${n}`, `thread:${n}`, 1, `first words ${n}`),
        item(`item:${n}`, `thread:${n}`, 1, `second words ${n}`),
        item(`item:${n}`, `thread:${n}`, 1, `final words marker${n}`),
        thread(`thread:${n}`, "project:a", `Thread number${n} done`),
      ]);
    const steps: { behind: boolean; rebuilt: boolean }[] = [];
    for (;;) {
      const step = await store.catchUpThreadSearch(40);
      steps.push(step);
      if (!step.behind) break;
    }
    // 150 events, 40 at a time: four catch-ups, none of them a rebuild.
    expect(steps).toHaveLength(4);
    expect(steps.every((step) => !step.rebuilt)).toBe(true);
    expect((await store.catchUpThreadSearch(40)).behind).toBe(false);
    expect(await store.searchThreads("project:a", "marker0")).toEqual(["thread:0"]);
    expect(await store.searchThreads("project:a", `marker${units - 1}`)).toEqual([`thread:${units - 1}`]);
    expect(await store.searchThreads("project:a", "draft")).toEqual([]);
    expect(await store.searchThreads("project:a", "second")).toEqual([]);
    expect(await store.searchThreads("project:a", "done")).toHaveLength(units);
    expect(await store.searchThreads("project:a", "number17 done")).toEqual(["thread:17"]);
  });

  // SQLite has one writer: another connection's commit waits for the open unit, so no event can
  // commit above one still to come. On PostgreSQL it can (the safe-position reader's case).
  it.runIf(backend.name !== "sqlite")(
    "sees a message committed above a transaction still open, and the open one's once it commits",
    async () => {
      await write([project("project:a", "a")]);
      const other = await backend.connectAgain(store);
      // The index built (its first catch-up is a bulk build), so what follows is caught up from the log.
      expect(await other.searchThreads("project:a", "commit")).toEqual([]);
      let appended!: () => void;
      const wasAppended = new Promise<void>((resolve) => (appended = resolve));
      let mayCommit!: () => void;
      const commitAllowed = new Promise<void>((resolve) => (mayCommit = resolve));
      const open = store.transactionAsync(async (work) => {
        work.append(null, [thread("thread:early", "project:a", "Early sequence, late commit")]);
        // A read of the unit writes its events: their sequences are drawn now.
        await work.get("thread", "thread:early");
        appended();
        await commitAllowed;
      });
      await wasAppended;
      await other.transaction((work) =>
        work.append(null, [thread("thread:late", "project:a", "Late sequence, early commit")]),
      );
      expect(await other.searchThreads("project:a", "commit")).toEqual(["thread:late"]);
      mayCommit();
      await open;
      expect([...(await other.searchThreads("project:a", "commit"))].sort()).toEqual(["thread:early", "thread:late"]);
    },
  );
});
