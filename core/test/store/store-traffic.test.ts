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
    // The first append of a store that has assigned no sequence yet reads the last one; the
    // event and its row wait in the write buffer until the commit.
    expect(seen.map((sql) => sql.split(" ").slice(0, 3).join(" "))).toEqual([
      "BEGIN IMMEDIATE",
      "SELECT seq FROM",
      "INSERT INTO events",
      "INSERT INTO items",
      "COMMIT",
    ]);
    expect(seen[2]).toContain("'cmd:1'");
    expect(seen[2]).toContain("'item:a'");
    expect(counter.snapshot()).toEqual({
      statements: 5,
      inTransactions: 3,
      commits: 1,
      rollbacks: 0,
      largestTransaction: 3,
      repeatedReads: 0,
    });
  });

  it("counts a fixed sequence of store calls exactly", () => {
    // Reads by a count, which the store runs every time (its `get` and `select` answer what a
    // transaction already read from memory: see identity-map.test.ts).
    const read = (id: string) => store.count("item", "id = ?", [id]);
    // 5 statements: BEGIN, the last sequence assigned (none yet), then at the commit the event
    // (which reads its link to a previous one itself) and the new row, COMMIT (3 inside).
    store.transaction(() => store.append(null, [item("item:a", "first")], NOW));
    // 2 reads outside any transaction: never repeats, however alike.
    read("item:a");
    read("item:a");
    // 9 statements, 7 inside: two identical reads (1 repeat), a read of another id (not one),
    // the append's check that the row and sequence the first transaction committed still hold
    // (its data version), then a savepoint reading item:a again (a repeat), which first flushes
    // the buffered event and update; the savepoint wrote nothing, so no SAVEPOINT or RELEASE.
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
    // 4 statements, 2 inside: a savepoint that reads and rolls back (no SAVEPOINT: it wrote
    // nothing, so there is nothing to roll back), then the same read again (a repeat: the
    // transaction is still open).
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
      statements: 5 + 2 + 9 + 3 + 4,
      inTransactions: 3 + 7 + 1 + 2,
      commits: 3,
      rollbacks: 1,
      largestTransaction: 7,
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
