import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";
import { ftsQuery, ThreadSearchTable } from "../../src/store/tables/thread-search.js";

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

function search(store: Store, text: string, projectId = "project:a") {
  const match = ftsQuery(text);
  if (match === null) return [];
  return new ThreadSearchTable(store).page(projectId, LISTED, match, 50, 0);
}

function threadIds(store: Store, text: string, projectId?: string): string[] {
  return search(store, text, projectId).map((hit) => hit.threadId);
}

describe("thread search: FTS5 over titles and message text (migration 31)", () => {
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

  it("backfills titles and message text an older schema wrote, and leaves tool output out", () => {
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
    expect(threadIds(store, "billing")).toEqual(["thread:old"]);
    expect(search(store, "zanzibar")).toEqual([
      {
        threadId: "thread:old",
        matchedIn: "user_message",
        itemId: "item:1",
        position: 1,
        snippet: "please look at the \u0002zanzibar\u0003 importer",
      },
    ]);
    expect(threadIds(store, "quokka")).toEqual([]);
  });

  it("follows appends: new items, changed text, renamed titles, deleted threads", () => {
    store = new Store(join(dir, "switchyard.db"));
    append(
      thread("thread:1", "Fix the login page"),
      item("item:1", "thread:1", 1, "user_message", "The button overlaps the footer"),
      item("item:2", "thread:1", 2, "reasoning", "thinking about marmalade"),
    );
    expect(threadIds(store, "login")).toEqual(["thread:1"]);
    expect(threadIds(store, "footer")).toEqual(["thread:1"]);
    // Reasoning stays out of the index.
    expect(threadIds(store, "marmalade")).toEqual([]);

    append(item("item:1", "thread:1", 1, "user_message", "The button hides the sidebar"));
    expect(threadIds(store, "footer")).toEqual([]);
    expect(threadIds(store, "sidebar")).toEqual(["thread:1"]);
    // A change of status alone re-indexes nothing; a change of kind out of the messages drops it.
    const indexedRows = () => store.db.prepare("SELECT rowid, text FROM item_text_search").all();
    const before = indexedRows();
    const failed = item("item:1", "thread:1", 1, "user_message", "The button hides the sidebar");
    append({ ...failed, record: { ...failed.record, status: "failed" } } as RecordUpsert);
    expect(indexedRows()).toEqual(before);
    append(item("item:3", "thread:1", 3, "user_message", "walrus"));
    expect(threadIds(store, "walrus")).toEqual(["thread:1"]);
    append(item("item:3", "thread:1", 3, "tool_call", "walrus"));
    expect(threadIds(store, "walrus")).toEqual([]);

    append(thread("thread:1", "Fix the signup page"));
    expect(threadIds(store, "login")).toEqual([]);
    expect(threadIds(store, "signup")).toEqual(["thread:1"]);

    append(thread("thread:1", "Fix the signup page", { deleted: true }));
    expect(threadIds(store, "signup")).toEqual([]);
    expect(threadIds(store, "sidebar")).toEqual([]);
  });

  it("finds only the project's threads, one row per thread, best match first, then the most recent", () => {
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
    const hits = search(store, "deploy pipeline");
    expect(hits.map((hit) => hit.threadId)).toEqual(["thread:title", "thread:body-new", "thread:body-old"]);
    expect(hits[0]).toMatchObject({ matchedIn: "title", itemId: null, position: null });
    expect(hits[2]).toMatchObject({ matchedIn: "assistant_message", itemId: "item:a" });
    expect(threadIds(store, "deploy", "project:b")).toEqual(["thread:other-project"]);
    // Paged: the same order, a slice at a time.
    const table = new ThreadSearchTable(store);
    const match = ftsQuery("deploy")!;
    expect(table.page("project:a", LISTED, match, 2, 2).map((hit) => hit.threadId)).toEqual(
      table
        .page("project:a", LISTED, match, 10, 0)
        .slice(2)
        .map((hit) => hit.threadId),
    );
  });

  it("stays in step through forget and rebuildProjections", () => {
    store = new Store(join(dir, "switchyard.db"));
    append(
      thread("thread:1", "Alpha"),
      thread("thread:2", "Beta"),
      item("item:1", "thread:1", 1, "user_message", "pelican"),
      item("item:2", "thread:2", 1, "assistant_message", "pelican heron"),
    );
    store.transaction(() => store.forget("item", ["item:2"]));
    expect(threadIds(store, "heron")).toEqual([]);
    expect(threadIds(store, "pelican")).toEqual(["thread:1"]);

    append(item("item:3", "thread:2", 2, "user_message", "albatross"));
    const before = search(store, "pelican");
    store.rebuildProjections();
    expect(search(store, "pelican")).toEqual(before);
    expect(threadIds(store, "albatross")).toEqual(["thread:2"]);
    expect(threadIds(store, "heron")).toEqual([]);
    expect(threadIds(store, "beta")).toEqual(["thread:2"]);
    // No index row outlives its projection row.
    const indexed = (table: string) =>
      (store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect(indexed("item_text_search")).toBe(2);
    expect(indexed("thread_title_search")).toBe(2);
  });

  it("reads every character of a query as text, never as FTS5 syntax", () => {
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
      expect(() => search(store, query), query).not.toThrow();
    }
    expect(threadIds(store, '"quoted"')).toEqual(["thread:1"]);
    expect(threadIds(store, "NEAR")).toEqual(["thread:1"]);
    expect(threadIds(store, "OR not")).toEqual(["thread:1"]);
    expect(threadIds(store, "value-of")).toEqual(["thread:1"]);
    // All words must match: "missing" is nowhere.
    expect(threadIds(store, "quoted missing")).toEqual([]);
    // The last word is a prefix (search as you type).
    expect(threadIds(store, "quo")).toEqual(["thread:1"]);
    expect(ftsQuery('a"b NEAR *')).toBe('"a""b" "NEAR"*');
    expect(ftsQuery(" * - ")).toBeNull();
  });
});
