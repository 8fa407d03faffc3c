import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../src/store/ports.js";
import type { EntityRecords } from "../../src/store/records.js";
import { Store } from "../../src/store/store.js";
import { StoreTrafficCounter } from "../../src/store/store-traffic.js";

const NOW = "2026-12-01T00:00:00.000Z";

/** Item records, each id at a position of its own (positions are unique per thread). */
const positions = new Map<string, number>();
function item(id: string, text: string): RecordUpsert<"item"> {
  if (!positions.has(id)) positions.set(id, positions.size + 1);
  const record = {
    id,
    threadId: "thread:1",
    runId: null,
    attemptId: null,
    position: positions.get(id)!,
    kind: "assistant_message",
    status: "completed",
    text,
    data: { tags: ["kept"] },
    createdBy: "provider",
    creationSource: "provider",
    createdAt: NOW,
    updatedAt: NOW,
  } as unknown as EntityRecords["item"];
  return { entity: "item", record };
}

class Refused extends Error {}

describe("the store's identity map for a transaction", () => {
  let dir: string;
  let file: string;
  let store: Store;
  let counter: StoreTrafficCounter;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-identity-map-"));
    file = join(dir, "switchyard.db");
    counter = new StoreTrafficCounter();
    store = new Store(file, { onStatement: counter.observe });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const textOf = (id: string) => (store.get("item", id) as { text: string } | null)?.text ?? null;

  /** The statements `fn` runs, counted by the store's observer. */
  function statementsOf(fn: () => void): number {
    const before = counter.snapshot().statements;
    fn();
    return counter.snapshot().statements - before;
  }

  it("answers a record the transaction wrote or read from memory, and writes it again without reading its row", () => {
    store.transaction(() => {
      store.append("cmd:1", [item("item:a", "written")], NOW);
      expect(statementsOf(() => expect(textOf("item:a")).toBe("written"))).toBe(0);
      // A record read once (here: known to be absent) is not read again.
      expect(statementsOf(() => expect(textOf("item:missing")).toBeNull())).toBe(1);
      expect(statementsOf(() => expect(textOf("item:missing")).toBeNull())).toBe(0);
    });
    store.transaction(() => {
      expect(statementsOf(() => expect(textOf("item:a")).toBe("written"))).toBe(1);
      // The append after a read reads no row: its event and its row's update wait for the commit.
      expect(statementsOf(() => store.append("cmd:2", [item("item:a", "updated")], NOW))).toBe(0);
      expect(statementsOf(() => expect(textOf("item:a")).toBe("updated"))).toBe(0);
    });
    expect(counter.snapshot().repeatedReads).toBe(0);
    // The update found its previous event through the remembered row, as it would through a read.
    const events = store.eventsAfter(0).filter((event) => event.entity === "item");
    expect(store.previousUpsert(events[1]!.sequence)).toMatchObject({ text: "written" });
    expect(store.firstUpsertSequence("item", "item:a")).toBe(events[0]!.sequence);
  });

  it("writes a record it has not read in two statements, linked to the record's previous event", () => {
    // Created: at the commit, the event and the row, no read of a row that is not there (besides
    // BEGIN, COMMIT and the last sequence assigned, which a store that has appended nothing reads).
    expect(
      statementsOf(() =>
        // The append's one statement: the last sequence assigned.
        store.transaction(() =>
          expect(statementsOf(() => store.append(null, [item("item:a", "created")], NOW))).toBe(1),
        ),
      ),
    ).toBe(5);
    // Updated by a transaction that never read it (a store opened afresh knows no rows that
    // earlier transactions committed): the event's insert finds the link itself.
    store.close();
    store = new Store(file, { onStatement: counter.observe });
    expect(
      statementsOf(() =>
        store.transaction(() => {
          expect(statementsOf(() => store.append(null, [item("item:a", "updated unread")], NOW))).toBe(1);
          expect(statementsOf(() => expect(textOf("item:a")).toBe("updated unread"))).toBe(0);
        }),
      ),
    ).toBe(5);
    const events = store.eventsAfter(0).filter((event) => event.entity === "item");
    expect(events).toHaveLength(2);
    expect(store.previousUpsert(events[0]!.sequence)).toBeNull();
    expect(store.previousUpsert(events[1]!.sequence)).toMatchObject({ text: "created" });
    expect(store.firstUpsertSequence("item", "item:a")).toBe(events[0]!.sequence);
    // The row written whole holds what a rebuild from the log makes.
    const before = store.db.prepare("SELECT * FROM items").all();
    store.rebuildProjections();
    expect(store.db.prepare("SELECT * FROM items").all()).toEqual(before);
  });

  it("hands every read an object of its own", () => {
    store.transaction(() => {
      store.append(null, [item("item:a", "original")], NOW);
      const first = store.get("item", "item:a") as unknown as { text: string; data: { tags: string[] } };
      first.text = "changed by a caller";
      first.data.tags.push("changed too");
      expect(store.get("item", "item:a")).toMatchObject({ text: "original", data: { tags: ["kept"] } });
    });
  });

  it("forgets what a savepoint that rolled back wrote", () => {
    store.transaction(() => store.append(null, [item("item:a", "committed")], NOW));
    store.transaction(() => {
      expect(textOf("item:a")).toBe("committed");
      expect(() =>
        store.transaction(() => {
          store.append(null, [item("item:a", "rolled back"), item("item:new", "rolled back")], NOW);
          expect(textOf("item:a")).toBe("rolled back");
          throw new Refused();
        }),
      ).toThrow(Refused);
      expect(textOf("item:a")).toBe("committed");
      expect(textOf("item:new")).toBeNull();
      // And a write after it links to the committed event, not the rolled-back one.
      store.append(null, [item("item:a", "after the savepoint")], NOW);
    });
    const events = store.eventsAfter(0).filter((event) => event.entity === "item");
    expect(events.map((event) => (event.record as { text: string }).text)).toEqual([
      "committed",
      "after the savepoint",
    ]);
    expect(store.previousUpsert(events[1]!.sequence)).toMatchObject({ text: "committed" });
  });

  it("forgets what a transaction that rolled back wrote", () => {
    store.transaction(() => store.append(null, [item("item:a", "committed")], NOW));
    expect(() =>
      store.transaction(() => {
        store.append(null, [item("item:a", "rolled back")], NOW);
        expect(textOf("item:a")).toBe("rolled back");
        throw new Refused();
      }),
    ).toThrow(Refused);
    store.transaction(() => expect(textOf("item:a")).toBe("committed"));
  });

  it("reads afresh in the next transaction what another connection wrote after this one's", () => {
    store.transaction(() => store.append(null, [item("item:a", "first")], NOW));
    store.transaction(() => expect(textOf("item:a")).toBe("first"));
    const other = new Store(file);
    try {
      other.transaction(() => other.append(null, [item("item:a", "by the other process")], NOW));
    } finally {
      other.close();
    }
    store.transaction(() => {
      expect(textOf("item:a")).toBe("by the other process");
      store.append(null, [item("item:a", "third")], NOW);
    });
    const events = store.eventsAfter(0).filter((event) => event.entity === "item");
    expect(store.previousUpsert(events[2]!.sequence)).toMatchObject({ text: "by the other process" });
  });

  it("knows a record it forgot is gone", () => {
    store.transaction(() => store.append(null, [item("item:a", "kept a while")], NOW));
    store.transaction(() => {
      expect(textOf("item:a")).toBe("kept a while");
      expect(store.forget("item", ["item:a"])).toBe(1);
      expect(textOf("item:a")).toBeNull();
    });
  });

  it("answers a query asked again before the transaction writes from memory, and asks again after a write", () => {
    const texts = () => store.select("item", "thread_id = ?", ["thread:1"], "ORDER BY position").map((r) => r.text);
    store.transaction(() => store.append(null, [item("item:a", "first")], NOW));
    store.transaction(() => {
      expect(statementsOf(() => expect(texts()).toEqual(["first"]))).toBe(1);
      expect(statementsOf(() => expect(texts()).toEqual(["first"]))).toBe(0);
      // Other values are another query.
      expect(statementsOf(() => store.select("item", "thread_id = ?", ["thread:2"], "ORDER BY position"))).toBe(1);
      store.append(null, [item("item:b", "second")], NOW);
      // The buffered event and row reach the file first (two statements), then the query.
      expect(statementsOf(() => expect(texts()).toEqual(["first", "second"]))).toBe(3);
      // A savepoint that rolled back took its write and what was read after it.
      expect(() =>
        store.transaction(() => {
          store.append(null, [item("item:c", "rolled back")], NOW);
          expect(texts()).toEqual(["first", "second", "rolled back"]);
          throw new Refused();
        }),
      ).toThrow(Refused);
      expect(texts()).toEqual(["first", "second"]);
      // Forgetting a record is a write too.
      store.forget("item", ["item:b"]);
      expect(texts()).toEqual(["first"]);
      // And each answer is objects of its own.
      const [mine] = store.select("item", "thread_id = ?", ["thread:1"], "ORDER BY position") as { text: string }[];
      mine!.text = "changed by a caller";
      expect(texts()).toEqual(["first"]);
    });
  });

  it("asks a query that reads another table or the clock every time", () => {
    store.transaction(() => store.append(null, [item("item:a", "first")], NOW));
    store.transaction(() => {
      const subquery = () => store.select("item", "id IN (SELECT entity_id FROM events WHERE entity = ?)", ["item"]);
      expect(statementsOf(subquery)).toBe(1);
      expect(statementsOf(subquery)).toBe(1);
      const clock = () => store.select("item", "position < julianday('now')");
      expect(statementsOf(clock)).toBe(1);
      expect(statementsOf(clock)).toBe(1);
    });
  });

  // Reads outside a transaction: by id, committed-rows.test.ts's; queries, committed-reads.test.ts's.
});
