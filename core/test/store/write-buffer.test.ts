import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../src/store/ports.js";
import type { EntityRecords } from "../../src/store/records.js";
import { Store } from "../../src/store/store.js";

const NOW = "2026-12-01T00:00:00.000Z";

/** An item at a position of its thread (positions are unique per thread: a second one fails). */
function item(id: string, position: number, text: string): RecordUpsert<"item"> {
  const record = {
    id,
    threadId: "thread:1",
    runId: null,
    attemptId: null,
    position,
    kind: "assistant_message",
    status: "completed",
    text,
    data: {},
    createdBy: "provider",
    creationSource: "provider",
    createdAt: NOW,
    updatedAt: NOW,
  } as unknown as EntityRecords["item"];
  return { entity: "item", record };
}

class Refused extends Error {}

describe("the store's write buffer for a transaction", () => {
  let dir: string;
  let store: Store;
  let statements: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-write-buffer-"));
    statements = [];
    store = new Store(join(dir, "switchyard.db"), { onStatement: (sql) => statements.push(sql) });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The statements `fn` ran, as their first words. */
  function statementsOf(fn: () => void): string[] {
    const before = statements.length;
    fn();
    return statements.slice(before).map((sql) => sql.split(" ").slice(0, 3).join(" "));
  }
  const textOf = (id: string) => (store.get("item", id) as { text: string } | null)?.text ?? null;
  /** What the file holds, read on a connection of its own (the store's caches answer nothing). */
  function inFile(): { items: string[]; events: string[] } {
    const reader = new Store(store.file);
    try {
      return {
        items: reader.select("item", "1 = 1", [], "ORDER BY position").map((record) => record.text),
        events: reader.eventsAfter(0).map((event) => (event.record as { text: string }).text),
      };
    } finally {
      reader.close();
    }
  }

  it("writes a transaction's events in one statement, each table's rows in one, a row written twice once", () => {
    store.transaction(() => store.append(null, [item("item:0", 1, "before")], NOW));
    const ran = statementsOf(() =>
      store.transaction(() => {
        store.append(null, [item("item:a", 2, "first")], NOW);
        store.append(null, [item("item:b", 3, "only")], NOW);
        store.append(null, [item("item:a", 2, "second")], NOW);
      }),
    );
    expect(ran).toEqual([
      "BEGIN IMMEDIATE",
      "PRAGMA data_version",
      "INSERT INTO events",
      "INSERT INTO items",
      "COMMIT",
    ]);
    expect(inFile()).toEqual({ items: ["before", "second", "only"], events: ["before", "first", "only", "second"] });
    // Each event links to its record's previous one, as when they were written one at a time.
    const events = store.eventsAfter(0);
    expect(store.previousUpsert(events[3]!.sequence)).toMatchObject({ text: "first" });
    expect(store.previousUpsert(events[1]!.sequence)).toBeNull();
    expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4]);
  });

  it("lets a read see what the transaction buffered, writing only the tables it names", () => {
    store.transaction(() => {
      expect(statementsOf(() => store.append(null, [item("item:a", 1, "buffered")], NOW))).toEqual(["SELECT seq FROM"]);
      // By id: from memory. A query over the table: the buffered event and row reach the file first.
      expect(statementsOf(() => expect(textOf("item:a")).toBe("buffered"))).toEqual([]);
      expect(statementsOf(() => expect(store.count("item", "thread_id = ?", ["thread:1"])).toBe(1))).toEqual([
        "INSERT INTO events",
        "INSERT INTO items",
        "SELECT COUNT(*) AS",
      ]);
      store.append(null, [item("item:b", 2, "buffered too")], NOW);
      // A statement naming another table writes nothing first; the log is read with every write in it.
      expect(statementsOf(() => store.count("run", "thread_id = ?", ["thread:1"]))).toEqual(["SELECT COUNT(*) AS"]);
      expect(store.eventsAfter(0).map((event) => (event.record as { text: string }).text)).toEqual([
        "buffered",
        "buffered too",
      ]);
    });
    expect(inFile().items).toEqual(["buffered", "buffered too"]);
  });

  it("drops a rolled-back savepoint's writes, buffered or written, and writes again the outer ones it undid", () => {
    store.transaction(() => {
      store.append(null, [item("item:a", 1, "outer")], NOW);
      // A savepoint that writes nothing runs no SAVEPOINT.
      expect(statementsOf(() => store.transaction(() => textOf("item:a")))).toEqual([]);
      expect(() =>
        store.transaction(() => {
          store.append(null, [item("item:b", 2, "rolled back")], NOW);
          // The query writes the outer item and this one, inside the savepoint.
          expect(store.select("item", "1 = 1", [], "ORDER BY position").map((record) => record.text)).toEqual([
            "outer",
            "rolled back",
          ]);
          store.append(null, [item("item:c", 3, "rolled back, never written")], NOW);
          throw new Refused();
        }),
      ).toThrow(Refused);
      expect(textOf("item:b")).toBeNull();
      expect(textOf("item:a")).toBe("outer");
      // The next event takes the sequence the rolled-back ones had.
      expect(store.append(null, [item("item:d", 4, "after")], NOW)[0]!.sequence).toBe(2);
    });
    expect(inFile()).toEqual({ items: ["outer", "after"], events: ["outer", "after"] });
  });

  it("leaves nothing half-written when a flush fails: the transaction, or the savepoint, fails whole", () => {
    store.transaction(() => store.append(null, [item("item:a", 1, "kept")], NOW));
    // The append is buffered; its event's insert succeeds at the commit, then its row breaks the
    // unique position, and the transaction rolls back with both.
    expect(() =>
      store.transaction(() => {
        // Buffered: the failure comes with the flush.
        expect(() =>
          store.append(null, [item("item:b", 2, "new"), item("item:clash", 1, "same position")], NOW),
        ).not.toThrow();
      }),
    ).toThrow(/UNIQUE constraint failed: items.thread_id, items.position/);
    expect(inFile()).toEqual({ items: ["kept"], events: ["kept"] });
    // In a savepoint, its end writes what it buffered: the savepoint fails, its parent goes on.
    store.transaction(() => {
      store.append(null, [item("item:b", 2, "outer")], NOW);
      expect(() =>
        store.transaction(() => store.append(null, [item("item:c", 3, "new"), item("item:clash", 1, "clash")], NOW)),
      ).toThrow(/UNIQUE constraint failed/);
      expect(textOf("item:c")).toBeNull();
    });
    expect(inFile()).toEqual({ items: ["kept", "outer"], events: ["kept", "outer"] });
  });

  it("links events of records it never read to their previous events, several in one insert", () => {
    store.transaction(() => store.append(null, [item("item:a", 1, "a1"), item("item:b", 2, "b1")], NOW));
    // A store opened afresh knows no rows: each event's insert reads its link from the row.
    store.close();
    store = new Store(join(dir, "switchyard.db"), { onStatement: (sql) => statements.push(sql) });
    const ran = statementsOf(() =>
      store.transaction(() => store.append(null, [item("item:b", 2, "b2"), item("item:a", 1, "a2")], NOW)),
    );
    expect(ran.filter((sql) => sql === "INSERT INTO events")).toHaveLength(1);
    const events = store.eventsAfter(0);
    expect(store.previousUpsert(events[2]!.sequence)).toMatchObject({ text: "b1" });
    expect(store.previousUpsert(events[3]!.sequence)).toMatchObject({ text: "a1" });
    expect(store.firstUpsertSequence("item", "item:a")).toBe(events[0]!.sequence);
  });

  it("numbers events after those another connection appended meanwhile", () => {
    store.transaction(() => store.append(null, [item("item:a", 1, "here")], NOW));
    const other = new Store(store.file);
    try {
      other.transaction(() => other.append(null, [item("item:b", 2, "elsewhere")], NOW));
    } finally {
      other.close();
    }
    const [event] = store.transaction(() => store.append(null, [item("item:c", 3, "here again")], NOW));
    expect(event!.sequence).toBe(3);
    expect(inFile().events).toEqual(["here", "elsewhere", "here again"]);
  });
});
