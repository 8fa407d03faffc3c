import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import type { RecordUpsert } from "../../src/store/ports.js";
import { ENTITY_TABLES } from "../../src/store/entity-tables.js";
import { Store } from "../../src/store/store.js";
import { item } from "./contract/records.js";

const NOW = "2026-12-01T00:00:00.000Z";

function project(id: string, removed: boolean): RecordUpsert {
  return {
    entity: "project",
    record: {
      id,
      name: id,
      rootPath: `/work/${id}`,
      scratch: false,
      createdAt: NOW,
      updatedAt: NOW,
      ...(removed ? { removedAt: NOW } : {}),
    },
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
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 11),
    );
    expect(old.prepare("SELECT name FROM sqlite_master WHERE name = 'events_thread'").get()).toEqual({
      name: "events_thread",
    });
    old.close();

    const store = new Store(file);
    try {
      // The log keeps no index besides its sequence (migration 16 dropped the one by entity).
      expect(
        store.db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name")
          .all(),
      ).toEqual([]);
      // The log's readers (a record's previous upsert, a request's oldest event, the stream
      // cursor, the replay) search by sequence, never scan.
      const plans = [
        ["SELECT p.data FROM events e JOIN events p ON p.sequence = e.previous_sequence WHERE e.sequence = ?", [10]],
        ["SELECT previous_sequence FROM events WHERE sequence = ?", [10]],
        [
          "SELECT sequence, type, entity, thread_id, command_id, data, created_at FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?",
          [0, 10],
        ],
      ] as const;
      for (const [sql, params] of plans) {
        const details = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(
          (row) => row.detail,
        );
        for (const detail of details) expect(detail, sql).toMatch(/^SEARCH (events|e|p) USING INTEGER PRIMARY KEY/);
      }
    } finally {
      store.close();
    }
  });

  it("links each event to its record's previous upsert, also for events written before migration 16", () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 16),
    );
    const insert = old.prepare(
      "INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at) VALUES (?, ?, ?, ?, NULL, ?, ?)",
    );
    const legacy = (entity: string, id: string, threadId: string | null, record: Record<string, unknown>) =>
      Number(insert.run(`${entity}.upserted`, entity, id, threadId, JSON.stringify(record), NOW).lastInsertRowid);
    const a1 = legacy("item", "item:a", "thread:1", { id: "item:a", text: "a1" });
    const b1 = legacy("item", "item:b", "thread:1", { id: "item:b", text: "b1" });
    // The same id in another entity is another record.
    const r1 = legacy("runtimeRequest", "item:a", "thread:1", { id: "item:a", text: "request" });
    const a2 = legacy("item", "item:a", "thread:1", { id: "item:a", text: "a2" });
    old
      .prepare(
        "INSERT INTO items (id, thread_id, run_id, position, kind, data) VALUES ('item:a', 'thread:1', NULL, 1, 'assistant_message', ?), ('item:b', 'thread:1', NULL, 2, 'assistant_message', ?)",
      )
      .run(JSON.stringify({ id: "item:a", text: "a2" }), JSON.stringify({ id: "item:b", text: "b1" }));
    old.close();

    const store = new Store(file);
    try {
      expect(store.db.prepare("SELECT sequence, previous_sequence FROM events ORDER BY sequence").all()).toEqual([
        { sequence: a1, previous_sequence: null },
        { sequence: b1, previous_sequence: null },
        { sequence: r1, previous_sequence: null },
        { sequence: a2, previous_sequence: a1 },
      ]);
      expect(store.db.prepare("SELECT id, last_sequence FROM items ORDER BY id").all()).toEqual([
        { id: "item:a", last_sequence: a2 },
        { id: "item:b", last_sequence: b1 },
      ]);
      expect(store.previousUpsert(a2)).toMatchObject({ text: "a1" });
      expect(store.previousUpsert(a1)).toBeNull();
      // New appends continue the chains the migration made.
      const [a3] = store.transaction(() => store.append(null, [item("item:a", "thread:1", 1, "a3")], NOW));
      expect(store.previousUpsert(a3!.sequence)).toMatchObject({ text: "a2" });
      expect(store.firstUpsertSequence("item", "item:a")).toBe(a1);
      expect(store.firstUpsertSequence("item", "item:none")).toBeNull();
      // Every projection table carries the link, so no entity can be appended without it.
      for (const { table } of Object.values(ENTITY_TABLES)) {
        const columns = (store.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map(
          (column) => column.name,
        );
        expect(columns, table).toContain("last_sequence");
      }
    } finally {
      store.close();
    }
  });

  it("starts a removed record's chain again when it is written anew", () => {
    const store = new Store(join(dir, "switchyard.db"));
    try {
      store.transaction(() => store.append(null, [project("p1", false)], NOW));
      const [removal] = store.transaction(() => store.append(null, [project("p1", true)], NOW));
      expect(store.previousUpsert(removal!.sequence)).toMatchObject({ id: "p1" });
      const [again] = store.transaction(() => store.append(null, [project("p1", false)], NOW));
      expect(store.previousUpsert(again!.sequence)).toBeNull();
      expect(store.firstUpsertSequence("project", "p1")).toBe(again!.sequence);
    } finally {
      store.close();
    }
  });

  it("rebuilds the projections to the rows, rowids and indexes the live appends made", () => {
    const store = new Store(join(dir, "switchyard.db"));
    try {
      store.transaction(() =>
        store.append(null, [project("p1", false), project("p2", false), item("item:b", "thread:1", 1, "first")], NOW),
      );
      store.transaction(() =>
        store.append(
          null,
          [item("item:a", "thread:1", 2, "second"), item("item:c", "thread:2", 1, "other thread")],
          NOW,
        ),
      );
      // A later upsert rewrites its row in place (keeping the first upsert's rowid); a tombstone removes one.
      store.transaction(() =>
        store.append(null, [item("item:b", "thread:1", 1, "first, edited"), project("p1", true)], NOW),
      );
      const snapshot = () => ({
        items: store.db.prepare("SELECT rowid, * FROM items ORDER BY rowid").all(),
        projects: store.db.prepare("SELECT rowid, * FROM projects ORDER BY rowid").all(),
        indexes: store.db
          .prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")
          .all(),
      });
      const live = snapshot();
      expect(live.items).toHaveLength(3);
      expect(live.projects).toHaveLength(1);

      expect(store.rebuildProjections()).toBe(7);
      expect(snapshot()).toEqual(live);
      expect(store.get("item", "item:b")).toMatchObject({ text: "first, edited" });
      // The unique index is back and enforced.
      expect(() =>
        store.transaction(() => store.append(null, [item("item:d", "thread:1", 2, "clash")], NOW)),
      ).toThrowError(/UNIQUE constraint failed: items.thread_id, items.position/);
    } finally {
      store.close();
    }
  });

  it("leaves the old projections and every index in place when a rebuild fails part way", () => {
    const store = new Store(join(dir, "switchyard.db"));
    try {
      store.transaction(() =>
        store.append(null, [item("item:a", "thread:1", 1, "kept"), item("item:b", "thread:1", 2, "kept too")], NOW),
      );
      // An event the replay cannot parse, after one it has already applied.
      store.db
        .prepare(
          "INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at) VALUES ('item.upserted', 'item', 'item:x', 'thread:1', NULL, '{not json', ?)",
        )
        .run(NOW);
      const indexes = () =>
        store.db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name").all();
      const before = { items: store.db.prepare("SELECT rowid, * FROM items ORDER BY rowid").all(), indexes: indexes() };
      expect(() => store.rebuildProjections()).toThrowError(SyntaxError);
      expect(store.db.inTransaction).toBe(false);
      expect({
        items: store.db.prepare("SELECT rowid, * FROM items ORDER BY rowid").all(),
        indexes: indexes(),
      }).toEqual(before);
    } finally {
      store.close();
    }
  });
});
