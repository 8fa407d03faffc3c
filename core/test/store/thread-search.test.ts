import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";
import { ftsQuery, ThreadSearchTable } from "../../src/store/tables/thread-search.js";
import { ThreadSearchIndex } from "../../src/store/thread-search-index.js";

const NOW = "2026-12-01T00:00:00.000Z";
const LISTED = { includeSubagents: false };

function thread(
  id: string,
  title: string,
  options: { projectId?: string; deleted?: boolean; updatedAt?: string } = {},
): RecordUpsert {
  return {
    entity: "thread",
    record: {
      id,
      projectId: options.projectId ?? "project:a",
      title,
      providerInstanceId: "scripted",
      lineage: { parentThreadId: null, relationship: "root", rootThreadId: id },
      deletedAt: options.deleted === true ? NOW : null,
      createdAt: NOW,
      updatedAt: options.updatedAt ?? NOW,
    },
  } as unknown as RecordUpsert;
}

function item(id: string, threadId: string, position: number, kind: string, text: string): RecordUpsert {
  return {
    entity: "item",
    record: { id, threadId, runId: null, position, kind, status: "completed", text, data: {}, createdAt: NOW },
  } as unknown as RecordUpsert;
}

async function search(store: Store, text: string, projectId = "project:a") {
  return new ThreadSearchTable(store).page(projectId, LISTED, text, 50, 0);
}

async function threadIds(store: Store, text: string, projectId?: string): Promise<string[]> {
  return (await search(store, text, projectId)).map((hit) => hit.threadId);
}

/** How many rows each full-text table holds (what the index keeps, found or not). */
function indexedRows(store: Store): { titles: number; texts: number } {
  const count = (table: string) => store.db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
  return { titles: count("thread_title_search"), texts: count("item_text_search") };
}

describe("thread search: FTS5 over titles and message text, kept from a watermark (migration 31)", () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-thread-search-"));
  });
  afterEach(() => {
    if (store?.isOpen()) store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const append = (...upserts: RecordUpsert[]) => store.transaction(() => store.append(null, upserts, NOW));

  it("backfills titles and message text an older schema wrote, in bulk, and leaves tool output out", async () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 31),
    );
    old
      .prepare(
        "INSERT INTO threads (id, project_id, relationship, provider_instance_id, title, deleted, created_at, updated_at, data) VALUES (?, 'project:a', 'root', 'p', ?, 0, ?, ?, '{}')",
      )
      .run("thread:old", "Migrate the billing tables", NOW, NOW);
    const oldItem = old.prepare(
      "INSERT INTO items (id, thread_id, position, kind, data) VALUES (?, 'thread:old', ?, ?, ?)",
    );
    oldItem.run("item:1", 1, "user_message", JSON.stringify({ text: "please look at the zanzibar importer" }));
    oldItem.run("item:2", 2, "tool_call", JSON.stringify({ text: "grep output mentions quokka" }));
    old.close();

    store = new Store(file);
    // The migration only creates the tables: the first catch-up builds them in bulk.
    expect(indexedRows(store)).toEqual({ titles: 0, texts: 0 });
    expect(new ThreadSearchIndex(store).catchUp()).toMatchObject({ rebuilt: true, behind: false });
    expect(indexedRows(store)).toEqual({ titles: 1, texts: 1 });
    expect(await threadIds(store, "billing")).toEqual(["thread:old"]);
    expect(await search(store, "zanzibar")).toEqual([
      {
        threadId: "thread:old",
        matchedIn: "user_message",
        itemId: "item:1",
        position: 1,
        snippet: "please look at the \u0002zanzibar\u0003 importer",
      },
    ]);
    expect(await threadIds(store, "quokka")).toEqual([]);
  });

  it("keeps no trigger on the projections: an append writes no index row until a catch-up", async () => {
    store = new Store(join(dir, "switchyard.db"));
    const index = new ThreadSearchIndex(store);
    index.catchUp();
    expect(store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all()).toEqual([]);
    append(thread("thread:1", "Heron"), item("item:1", "thread:1", 1, "user_message", "egret"));
    expect(indexedRows(store)).toEqual({ titles: 0, texts: 0 });
    expect(index.behind()).toBe(true);
    expect(index.catchUp()).toEqual({ indexedThrough: store.lastSequence(), rebuilt: false, behind: false });
    expect(indexedRows(store)).toEqual({ titles: 1, texts: 1 });
    expect(index.behind()).toBe(false);
  });

  it("a search right after an append sees the new message, with no background tick", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(thread("thread:1", "Birds"));
    expect(await threadIds(store, "cormorant")).toEqual([]);
    append(item("item:1", "thread:1", 1, "assistant_message", "a cormorant dried its wings"));
    expect(new ThreadSearchIndex(store).behind()).toBe(true);
    expect(await threadIds(store, "cormorant")).toEqual(["thread:1"]);
    append(item("item:1", "thread:1", 1, "assistant_message", "a shag dried its wings"));
    expect(await threadIds(store, "cormorant")).toEqual([]);
    expect(await threadIds(store, "shag")).toEqual(["thread:1"]);
  });

  it("follows appends: new items, changed text, renamed titles, deleted threads", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(
      thread("thread:1", "Fix the login page"),
      item("item:1", "thread:1", 1, "user_message", "The button overlaps the footer"),
      item("item:2", "thread:1", 2, "reasoning", "thinking about marmalade"),
    );
    expect(await threadIds(store, "login")).toEqual(["thread:1"]);
    expect(await threadIds(store, "footer")).toEqual(["thread:1"]);
    // Reasoning stays out of the index.
    expect(await threadIds(store, "marmalade")).toEqual([]);

    append(item("item:1", "thread:1", 1, "user_message", "The button hides the sidebar"));
    expect(await threadIds(store, "footer")).toEqual([]);
    expect(await threadIds(store, "sidebar")).toEqual(["thread:1"]);
    // A change of status alone re-indexes nothing; a change of kind out of the messages drops it.
    const indexed = () => store.db.prepare("SELECT rowid, text FROM item_text_search").all();
    const before = indexed();
    const segments = () => store.db.prepare("SELECT COUNT(*) FROM item_text_search_data").pluck().get();
    const segmentsBefore = segments();
    const failed = item("item:1", "thread:1", 1, "user_message", "The button hides the sidebar");
    append({ ...failed, record: { ...failed.record, status: "failed" } } as RecordUpsert);
    await search(store, "sidebar");
    expect(indexed()).toEqual(before);
    expect(segments()).toBe(segmentsBefore);
    append(item("item:3", "thread:1", 3, "user_message", "walrus"));
    expect(await threadIds(store, "walrus")).toEqual(["thread:1"]);
    append(item("item:3", "thread:1", 3, "tool_call", "walrus"));
    expect(await threadIds(store, "walrus")).toEqual([]);

    append(thread("thread:1", "Fix the signup page"));
    expect(await threadIds(store, "login")).toEqual([]);
    expect(await threadIds(store, "signup")).toEqual(["thread:1"]);

    append(thread("thread:1", "Fix the signup page", { deleted: true }));
    expect(await threadIds(store, "signup")).toEqual([]);
    expect(await threadIds(store, "sidebar")).toEqual([]);
    // The catch-up purged the deleted thread's rows, not only hid them.
    expect(indexedRows(store)).toEqual({ titles: 0, texts: 0 });
  });

  it("never finds a deleted thread, also before the index has caught up with the deletion", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(thread("thread:1", "Osprey"), item("item:1", "thread:1", 1, "user_message", "kestrel"));
    expect(await threadIds(store, "kestrel")).toEqual(["thread:1"]);
    append(thread("thread:1", "Osprey", { deleted: true }));
    // The page query alone (no catch-up), as a search reads while a command holds the writer.
    const index = new ThreadSearchIndex(store);
    expect(index.behind()).toBe(true);
    const stale = store.db
      .prepare(
        "SELECT COUNT(*) FROM item_text_search s JOIN items i ON i.rowid = s.rowid JOIN threads t ON t.id = i.thread_id WHERE item_text_search MATCH 'kestrel' AND t.deleted = 0",
      )
      .pluck()
      .get();
    expect(stale).toBe(0);
    expect(await threadIds(store, "kestrel")).toEqual([]);
    expect(await threadIds(store, "osprey")).toEqual([]);
  });

  it("catches a backlog up in bounded batches, and a search through all of it", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(thread("thread:1", "Batches"));
    for (let n = 1; n <= 5; n += 1) append(item(`item:${n}`, "thread:1", n, "user_message", `word${n}`));
    const index = new ThreadSearchIndex(store);
    const first = index.catchUp(); // the bulk build of a new store
    expect(first.rebuilt).toBe(true);
    for (let n = 6; n <= 10; n += 1) append(item(`item:${n}`, "thread:1", n, "user_message", `word${n}`));
    const step = index.catchUp(2);
    expect(step).toEqual({ indexedThrough: first.indexedThrough + 2, rebuilt: false, behind: true });
    expect(indexedRows(store).texts).toBe(7);
    expect(await threadIds(store, "word10")).toEqual(["thread:1"]);
    expect(indexedRows(store).texts).toBe(10);
    expect(index.behind()).toBe(false);
  });

  it("finds only the project's threads, one row per thread, best match first, then the most recent", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(
      thread("thread:title", "Deploy pipeline", { updatedAt: "2026-12-01T00:00:01.000Z" }),
      thread("thread:body-old", "Something else", { updatedAt: "2026-12-01T00:00:02.000Z" }),
      thread("thread:body-new", "Another thing", { updatedAt: "2026-12-01T00:00:03.000Z" }),
      thread("thread:other-project", "Deploy pipeline", { projectId: "project:b" }),
      item("item:a", "thread:body-old", 1, "assistant_message", "the deploy pipeline failed twice"),
      item("item:b", "thread:body-old", 2, "user_message", "deploy it again"),
      item("item:c", "thread:body-new", 1, "assistant_message", "the deploy pipeline failed twice"),
    );
    const hits = await search(store, "deploy pipeline");
    expect(hits.map((hit) => hit.threadId)).toEqual(["thread:title", "thread:body-new", "thread:body-old"]);
    expect(hits[0]).toMatchObject({ matchedIn: "title", itemId: null, position: null });
    expect(hits[2]).toMatchObject({ matchedIn: "assistant_message", itemId: "item:a" });
    expect(await threadIds(store, "deploy", "project:b")).toEqual(["thread:other-project"]);
    // Paged: the same order, a slice at a time.
    const table = new ThreadSearchTable(store);
    expect((await table.page("project:a", LISTED, "deploy", 2, 2)).map((hit) => hit.threadId)).toEqual(
      (await table.page("project:a", LISTED, "deploy", 10, 0)).slice(2).map((hit) => hit.threadId),
    );
  });

  it("stays in step through forget: the forgotten text leaves the index at once", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(
      thread("thread:1", "Alpha"),
      thread("thread:2", "Beta"),
      thread("thread:3", "Gamma"),
      item("item:1", "thread:1", 1, "user_message", "pelican"),
      item("item:2", "thread:2", 1, "assistant_message", "pelican heron"),
      item("item:3", "thread:3", 1, "user_message", "puffin"),
    );
    expect(await threadIds(store, "pelican")).toEqual(expect.arrayContaining(["thread:1", "thread:2"]));
    store.transaction(() => store.forget("item", ["item:2"]));
    store.transaction(() => store.forget("thread", ["thread:3"]));
    // Gone from the index itself, not only from results, before any catch-up.
    const holds = (table: string, word: string) =>
      store.db.prepare(`SELECT COUNT(*) FROM ${table} WHERE ${table} MATCH ?`).pluck().get(word);
    expect(holds("item_text_search", "heron")).toBe(0);
    expect(holds("item_text_search", "puffin")).toBe(0);
    expect(holds("thread_title_search", "gamma")).toBe(0);
    expect(await threadIds(store, "heron")).toEqual([]);
    expect(await threadIds(store, "pelican")).toEqual(["thread:1"]);
    expect(await threadIds(store, "gamma")).toEqual([]);
  });

  it("rebuildProjections leaves search answering the same, the index rebuilt in bulk", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(
      thread("thread:1", "Alpha"),
      thread("thread:2", "Beta"),
      thread("thread:gone", "Beta gone", { deleted: true }),
      item("item:1", "thread:1", 1, "user_message", "pelican"),
      item("item:2", "thread:2", 1, "assistant_message", "pelican heron"),
      item("item:3", "thread:2", 2, "user_message", "albatross"),
      item("item:4", "thread:gone", 1, "user_message", "albatross pelican"),
    );
    store.transaction(() => store.forget("item", ["item:2"]));
    append(item("item:5", "thread:1", 2, "proposed_plan", "plan: feed the albatross"));
    const queries = ["pelican", "heron", "albatross", "beta", "alpha", "feed"];
    const answers = async () => Promise.all(queries.map((query) => search(store, query)));
    const before = await answers();
    const rowsBefore = indexedRows(store);
    store.rebuildProjections();
    // A forgotten item's gap closed: the rows after it moved to other rowids, so the index rebuilds.
    expect(new ThreadSearchIndex(store).behind()).toBe(true);
    expect(await answers()).toEqual(before);
    expect(indexedRows(store)).toEqual(rowsBefore);
    // No index row outlives its projection row, and a deleted thread's never came back.
    expect(indexedRows(store)).toEqual({ titles: 2, texts: 3 });
  });

  it("answers a search while a command's transaction is open, without waiting when nothing is new", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(thread("thread:1", "Open"), item("item:1", "thread:1", 1, "user_message", "lapwing"));
    expect(await threadIds(store, "lapwing")).toEqual(["thread:1"]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const command = store.transactionAsync(async () => {
      store.append(null, [item("item:2", "thread:1", 2, "user_message", "plover")], NOW);
      await gate;
      order.push("command committed");
    });
    const found = threadIds(store, "lapwing").then((ids) => {
      order.push("search answered");
      return ids;
    });
    expect(await found).toEqual(["thread:1"]);
    // The uncommitted message is not found, and the search did not wait for the command.
    expect(await threadIds(store, "plover")).toEqual([]);
    release();
    await command;
    expect(order).toEqual(["search answered", "command committed"]);
    expect(await threadIds(store, "plover")).toEqual(["thread:1"]);
  });

  it("reads every character of a query as text, never as FTS5 syntax", async () => {
    store = new Store(join(dir, "switchyard.db"));
    append(
      thread("thread:1", "Plain"),
      item("item:1", "thread:1", 1, "user_message", 'say NEAR "quoted" value-of x* and OR not'),
    );
    for (const query of [
      '"quoted"',
      "NEAR",
      "value-of",
      "x*",
      "OR",
      "not",
      '"',
      "AND (",
      "NEAR(",
      "col:umn",
      "^x",
      "-",
    ]) {
      await expect(search(store, query), query).resolves.toBeDefined();
    }
    expect(await threadIds(store, '"quoted"')).toEqual(["thread:1"]);
    expect(await threadIds(store, "NEAR")).toEqual(["thread:1"]);
    expect(await threadIds(store, "OR not")).toEqual(["thread:1"]);
    expect(await threadIds(store, "value-of")).toEqual(["thread:1"]);
    // All words must match: "missing" is nowhere.
    expect(await threadIds(store, "quoted missing")).toEqual([]);
    // The last word is a prefix (search as you type).
    expect(await threadIds(store, "quo")).toEqual(["thread:1"]);
    expect(ftsQuery('a"b NEAR *')).toBe('"a""b" "NEAR"*');
    expect(ftsQuery(" * - ")).toBeNull();
  });
});
