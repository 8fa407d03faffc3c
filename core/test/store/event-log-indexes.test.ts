import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";

const NOW = "2026-12-01T00:00:00.000Z";

function item(id: string, threadId: string, position: number, text: string): RecordUpsert {
  return {
    entity: "item",
    record: {
      id, threadId, runId: null, attemptId: null, position, kind: "assistant_message", status: "completed", text, data: {},
      createdBy: "provider", creationSource: "provider", createdAt: NOW, updatedAt: NOW,
    },
  } as unknown as RecordUpsert;
}

function project(id: string, removed: boolean): RecordUpsert {
  return {
    entity: "project",
    record: { id, name: id, rootPath: `/work/${id}`, scratch: false, createdAt: NOW, updatedAt: NOW, ...(removed ? { removedAt: NOW } : {}) },
  } as unknown as RecordUpsert;
}

describe("the event log's indexes and the projection rebuild", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-event-indexes-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("drops the events-by-thread index from an older database, and every query on the log still uses an index", () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(old, MIGRATIONS.filter((migration) => migration.version < 11));
    expect(old.prepare("SELECT name FROM sqlite_master WHERE name = 'events_thread'").get()).toEqual({ name: "events_thread" });
    old.close();

    const store = new Store(file);
    try {
      expect(store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name").all()).toEqual([{ name: "events_entity" }]);
      // The log's readers (the public-event projector, the oldest-pending-request lookup, the
      // stream cursor, the replay) search by entity id or by sequence, never scan.
      const plans = [
        ["SELECT data FROM events WHERE entity_id = ? AND sequence < ? AND entity = ? ORDER BY sequence DESC LIMIT 1", ["item:a", 10, "item"]],
        ["SELECT MIN(sequence) AS sequence FROM events WHERE thread_id = ? AND entity = 'runtimeRequest' AND entity_id = ?", ["thread:a", "request:a"]],
        ["SELECT sequence, type, entity, thread_id, command_id, data, created_at FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?", [0, 10]],
      ] as const;
      for (const [sql, params] of plans) {
        const detail = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail).join("; ");
        expect(detail, sql).toMatch(/^SEARCH events USING (INDEX events_entity|INTEGER PRIMARY KEY)/);
      }
    } finally {
      store.close();
    }
  });

  it("rebuilds the projections to the rows, rowids and indexes the live appends made", () => {
    const store = new Store(join(dir, "switchyard.db"));
    try {
      store.transaction(() => store.append(null, [project("p1", false), project("p2", false), item("item:b", "thread:1", 1, "first")], NOW));
      store.transaction(() => store.append(null, [item("item:a", "thread:1", 2, "second"), item("item:c", "thread:2", 1, "other thread")], NOW));
      // A later upsert rewrites its row in place (keeping the first upsert's rowid); a tombstone removes one.
      store.transaction(() => store.append(null, [item("item:b", "thread:1", 1, "first, edited"), project("p1", true)], NOW));
      const snapshot = () => ({
        items: store.db.prepare("SELECT rowid, * FROM items ORDER BY rowid").all(),
        projects: store.db.prepare("SELECT rowid, * FROM projects ORDER BY rowid").all(),
        indexes: store.db.prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name").all(),
      });
      const live = snapshot();
      expect(live.items).toHaveLength(3);
      expect(live.projects).toHaveLength(1);

      expect(store.rebuildProjections()).toBe(7);
      expect(snapshot()).toEqual(live);
      expect(store.get("item", "item:b")).toMatchObject({ text: "first, edited" });
      // The unique index is back and enforced.
      expect(() => store.transaction(() => store.append(null, [item("item:d", "thread:1", 2, "clash")], NOW))).toThrowError(/UNIQUE constraint failed: items.thread_id, items.position/);
    } finally {
      store.close();
    }
  });

  it("leaves the old projections and every index in place when a rebuild fails part way", () => {
    const store = new Store(join(dir, "switchyard.db"));
    try {
      store.transaction(() => store.append(null, [item("item:a", "thread:1", 1, "kept"), item("item:b", "thread:1", 2, "kept too")], NOW));
      // An event the replay cannot parse, after one it has already applied.
      store.db.prepare("INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at) VALUES ('item.upserted', 'item', 'item:x', 'thread:1', NULL, '{not json', ?)").run(NOW);
      const indexes = () => store.db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name").all();
      const before = { items: store.db.prepare("SELECT rowid, * FROM items ORDER BY rowid").all(), indexes: indexes() };
      expect(() => store.rebuildProjections()).toThrowError(SyntaxError);
      expect(store.db.inTransaction).toBe(false);
      expect({ items: store.db.prepare("SELECT rowid, * FROM items ORDER BY rowid").all(), indexes: indexes() }).toEqual(before);
    } finally {
      store.close();
    }
  });
});
