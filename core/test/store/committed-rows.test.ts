import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";
import { item as threadItem } from "./contract/records.js";

const NOW = "2026-12-01T00:00:00.000Z";

/** An item of one thread at a position of its own (the contract suite's record factory). */
function item(id: string, position: number, text: string): RecordUpsert<"item"> {
  return threadItem(id, "thread:1", position, text);
}

class Refused extends Error {}

describe("rows this connection's transactions committed, for the next transactions", () => {
  let dir: string;
  let file: string;
  let store: Store;
  let statements: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-committed-rows-"));
    file = join(dir, "switchyard.db");
    statements = [];
    store = new Store(file, { onStatement: (sql) => statements.push(sql) });
    store.transaction(() => store.append(null, [item("item:a", 1, "first"), item("item:b", 2, "second")], NOW));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The statements `fn` ran, as the store's observer heard them. */
  function statementsOf(fn: () => void): string[] {
    const before = statements.length;
    fn();
    return statements.slice(before);
  }
  const textOf = (id: string) => (store.get("item", id) as { text: string } | null)?.text ?? null;

  it("answers a later transaction's reads from memory after one check, and its append reads no row", () => {
    const transaction = statementsOf(() =>
      store.transaction(() => {
        // One check per transaction that no other connection committed since, then no reads.
        expect(statementsOf(() => expect(textOf("item:a")).toBe("first"))).toEqual(["PRAGMA data_version"]);
        expect(statementsOf(() => expect(textOf("item:b")).toBe("second"))).toEqual([]);
        // Buffered until the commit, its sequence numbered after the one the last commit assigned.
        expect(statementsOf(() => store.append(null, [item("item:b", 2, "second, updated")], NOW))).toEqual([]);
      }),
    );
    expect(transaction.map((sql) => sql.split(" ").slice(0, 2).join(" "))).toEqual([
      "BEGIN IMMEDIATE",
      "PRAGMA data_version",
      "INSERT INTO",
      "UPDATE items",
      "COMMIT",
    ]);
    store.transaction(() =>
      expect(statementsOf(() => expect(textOf("item:b")).toBe("second, updated"))).toHaveLength(1),
    );
    // The update linked its event to the record's previous one, as a read row would have.
    const events = store.eventsAfter(0).filter((event) => event.entity === "item");
    expect(store.previousUpsert(events[2]!.sequence)).toMatchObject({ text: "second" });
  });

  it("reads afresh once another connection has committed", () => {
    const other = new Store(file);
    try {
      other.transaction(() => other.append(null, [item("item:a", 1, "by the other process")], NOW));
    } finally {
      other.close();
    }
    store.transaction(() => {
      expect(statementsOf(() => expect(textOf("item:a")).toBe("by the other process"))).toHaveLength(2);
      store.append(null, [item("item:a", 1, "third")], NOW);
    });
    const events = store.eventsAfter(0).filter((event) => event.entity === "item");
    expect(store.previousUpsert(events[3]!.sequence)).toMatchObject({ text: "by the other process" });
  });

  it("keeps nothing of a transaction that rolled back", () => {
    expect(() =>
      store.transaction(() => {
        store.append(null, [item("item:a", 1, "rolled back"), item("item:c", 3, "rolled back")], NOW);
        throw new Refused();
      }),
    ).toThrow(Refused);
    store.transaction(() => {
      expect(textOf("item:a")).toBe("first");
      expect(textOf("item:c")).toBeNull();
    });
  });

  it("forgets them when a savepoint rolls back, since what its transaction wrote before is not tracked", () => {
    store.transaction(() => {
      store.append(null, [item("item:a", 1, "written before the savepoint")], NOW);
      expect(() =>
        store.transaction(() => {
          store.append(null, [item("item:b", 2, "rolled back")], NOW);
          throw new Refused();
        }),
      ).toThrow(Refused);
    });
    store.transaction(() => {
      expect(textOf("item:a")).toBe("written before the savepoint");
      expect(textOf("item:b")).toBe("second");
    });
  });

  it("forgets them when the connection is handed out, which may write rows behind them", () => {
    store.db.exec(`UPDATE items SET data = json_set(data, '$.text', 'changed in place') WHERE id = 'item:a'`);
    store.transaction(() => expect(textOf("item:a")).toBe("changed in place"));
  });

  /** The next event-loop turn (another process's commit can only reach this one between turns). */
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  /** Commits a change to a record's row on a connection of its own, as another process would. */
  function commitElsewhere(id: string, text: string): void {
    const other = new Database(file);
    try {
      other.prepare("UPDATE items SET data = json_set(data, '$.text', ?) WHERE id = ?").run(text, id);
    } finally {
      other.close();
    }
  }

  it("answers reads outside transactions from them, after one check per turn of the event loop", async () => {
    await nextTurn();
    expect(statementsOf(() => expect(textOf("item:a")).toBe("first"))).toEqual(["PRAGMA data_version"]);
    expect(statementsOf(() => expect(textOf("item:b")).toBe("second"))).toEqual([]);
    // A record they do not know is read whole from the file, and known from then on.
    expect(statementsOf(() => expect(textOf("item:c")).toBeNull())).toHaveLength(1);
    expect(statementsOf(() => expect(textOf("item:c")).toBeNull())).toEqual([]);
    // Once the event loop has moved on, another process may have committed: checked again.
    await nextTurn();
    expect(statementsOf(() => expect(textOf("item:a")).toBe("first"))).toEqual(["PRAGMA data_version"]);
  });

  it("shares the turn's data_version with committed queries, and sees a commit elsewhere after a fresh read", async () => {
    await nextTurn();
    const dataVersionReads = () => statements.filter((sql) => sql.includes("data_version")).length;
    const before = dataVersionReads();
    expect(textOf("item:a")).toBe("first");
    store.select("item", "thread_id = ?", ["thread:1"]);
    store.select("item", "thread_id = ?", ["thread:1"]);
    expect(textOf("item:b")).toBe("second");
    expect(dataVersionReads()).toBe(before + 1);
    // Another process's commit within the turn is seen as if it landed just after it...
    commitElsewhere("item:a", "from elsewhere");
    expect(textOf("item:a")).toBe("first");
    // ...unless the turn reads data_version afresh, as a credential check does.
    store.dataVersion();
    expect(textOf("item:a")).toBe("from elsewhere");
  });

  it("checks them in a transaction against data_version read after its BEGIN, not the turn's reading", async () => {
    await nextTurn();
    expect(textOf("item:a")).toBe("first");
    // Another process commits between the turn's reading and the transaction's write lock.
    commitElsewhere("item:a", "from elsewhere");
    store.transaction(() => expect(textOf("item:a")).toBe("from elsewhere"));
  });

  it("checks again outside transactions once another store of this process has committed", () => {
    expect(textOf("item:a")).toBe("first");
    const other = new Store(file);
    try {
      other.transaction(() => other.append(null, [item("item:a", 1, "by another connection")], NOW));
    } finally {
      other.close();
    }
    expect(textOf("item:a")).toBe("by another connection");
  });

  it("checks again once a store of another copy of its module has committed (sources beside a build)", async () => {
    // core's build, as the CLI and built packages load it: a module of its own beside the sources.
    const built = (await import(new URL("../../dist/store/store.js", import.meta.url).href)) as {
      Store: typeof Store;
    };
    expect(built.Store).not.toBe(Store);
    await nextTurn();
    expect(textOf("item:a")).toBe("first");
    const other = new built.Store(file);
    try {
      other.transaction(() => other.append(null, [item("item:a", 1, "by the built copy")], NOW));
    } finally {
      other.close();
    }
    expect(textOf("item:a")).toBe("by the built copy");
  });
});
