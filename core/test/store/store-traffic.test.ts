import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";
import { StoreTrafficCounter } from "../../src/store/store-traffic.js";
import { item as itemIn } from "./contract/records.js";

const NOW = "2026-12-01T00:00:00.000Z";

/** An item of thread:1 at position 1. */
const item = (id: string, text: string): RecordUpsert => itemIn(id, "thread:1", 1, text);

class Refused extends Error {}

describe("the store's statement observer, counted", () => {
  let dir: string;
  let store: Store;
  let counter: StoreTrafficCounter;
  let seen: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-store-traffic-"));
    counter = new StoreTrafficCounter();
    seen = [];
    store = new Store(join(dir, "switchyard.db"), {
      onStatement: (sql) => {
        seen.push(sql);
        counter.observe(sql);
      },
    });
    // Opening runs the pragmas and migrations; the workloads below start from nothing.
    counter.reset();
    seen = [];
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("hears every statement an append's transaction runs, its values bound", () => {
    store.transaction(() => store.append("cmd:1", [item("item:a", "first")], NOW));
    expect(seen.map((sql) => sql.split(" ").slice(0, 3).join(" "))).toEqual([
      "BEGIN IMMEDIATE",
      "INSERT INTO events",
      "INSERT INTO items",
      "COMMIT",
    ]);
    expect(seen[1]).toContain("'cmd:1'");
    expect(seen[1]).toContain("'item:a'");
    expect(counter.snapshot()).toEqual({
      statements: 4,
      inTransactions: 2,
      commits: 1,
      rollbacks: 0,
      largestTransaction: 2,
      repeatedReads: 0,
    });
  });

  it("counts a fixed sequence of store calls exactly", () => {
    // Reads by a count, which the store runs every time (its `get` and `select` answer what a
    // transaction already read from memory: see identity-map.test.ts).
    const read = (id: string) => store.count("item", "id = ?", [id]);
    // 4 statements: BEGIN, the event (which reads its link to a previous one itself), the new
    // row, COMMIT (2 inside).
    store.transaction(() => store.append(null, [item("item:a", "first")], NOW));
    // 2 reads outside any transaction: never repeats, however alike.
    read("item:a");
    read("item:a");
    // 11 statements, 9 inside: two identical reads (1 repeat), a read of another id (not one),
    // the append's check that the row the first transaction committed still holds (its data
    // version), event and update, then a savepoint reading item:a again (a repeat), released.
    store.transaction(() => {
      read("item:a");
      read("item:a");
      read("item:b");
      store.append(null, [item("item:a", "second")], NOW);
      store.transaction(() => read("item:a"));
    });
    // 3 statements, 1 inside: BEGIN, a read, ROLLBACK.
    expect(() =>
      store.transaction(() => {
        read("item:b");
        throw new Refused();
      }),
    ).toThrow(Refused);
    // 7 statements, 5 inside: a savepoint that reads and rolls back (SAVEPOINT, the read,
    // ROLLBACK TO, RELEASE), then the same read again (a repeat: the transaction is still open).
    store.transaction(() => {
      expect(() =>
        store.transaction(() => {
          read("item:a");
          throw new Refused();
        }),
      ).toThrow(Refused);
      read("item:a");
    });

    expect(counter.snapshot()).toEqual({
      statements: 4 + 2 + 11 + 3 + 7,
      inTransactions: 2 + 9 + 1 + 5,
      commits: 3,
      rollbacks: 1,
      largestTransaction: 9,
      repeatedReads: 1 + 1 + 1,
    });
  });

  it("reads the outbox worker's agenda, due effects and the next time, in one statement", () => {
    store.transaction(() => {
      store.enqueueEffect({ id: "now", lane: "lane:a", type: "test", payload: {} }, 1_000, NOW);
      store.enqueueEffect({ id: "later", lane: "lane:b", type: "test", payload: {} }, 61_000, NOW);
    });
    counter.reset();
    const agenda = store.outboxAgenda(1_000);
    expect(agenda.due.map((effect) => effect.id)).toEqual(["now"]);
    expect(agenda.laterDueAt).toBe(61_000);
    expect(counter.snapshot().statements).toBe(1);
  });

  it("starts over on reset", () => {
    store.transaction(() => store.append(null, [item("item:a", "first")], NOW));
    counter.reset();
    // A statement the store runs every time (its reads by id may answer from memory).
    store.lastSequence();
    expect(counter.snapshot()).toEqual({
      statements: 1,
      inTransactions: 0,
      commits: 0,
      rollbacks: 0,
      largestTransaction: 0,
      repeatedReads: 0,
    });
  });
});
