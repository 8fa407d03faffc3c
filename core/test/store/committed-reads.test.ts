import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";
import { item as threadItem } from "./contract/records.js";

const NOW = "2026-12-01T00:00:00.000Z";

/** An item of one thread (the contract suite's record factory). */
function item(id: string, position: number, text: string): RecordUpsert<"item"> {
  return threadItem(id, "thread:1", position, text);
}

/** How the listed query starts as the store's observer hears it (its values bound). */
const QUERY_START = "SELECT data FROM items WHERE";

describe("the store's queries outside a transaction", () => {
  let dir: string;
  let file: string;
  let store: Store;
  let statements: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-committed-reads-"));
    file = join(dir, "switchyard.db");
    statements = [];
    store = new Store(file, { onStatement: (sql) => statements.push(sql) });
    store.transaction(() => store.append(null, [item("item:a", 1, "first")], NOW));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const texts = () =>
    (store.select("item", "thread_id = ?", ["thread:1"], "ORDER BY position") as { text: string }[]).map((i) => i.text);

  /** Reads, and says whether the query itself ran (rather than being answered from memory). */
  function queried(): { texts: string[]; ran: boolean } {
    const before = statements.length;
    const read = texts();
    return { texts: read, ran: statements.slice(before).some((sql) => sql.startsWith(QUERY_START)) };
  }

  /** Reads until an answer comes from memory (the first reads stamp it), at most three times. */
  function settle(): void {
    for (let i = 0; i < 3; i += 1) if (!queried().ran) return;
    throw new Error("a repeated query was never answered from memory");
  }

  it("answers a repeated query from memory while nothing changed, with one small statement", () => {
    settle();
    const before = statements.length;
    expect(texts()).toEqual(["first"]);
    const ran = statements.slice(before);
    expect(ran, JSON.stringify(ran)).toHaveLength(1);
    expect(ran[0]).not.toContain("FROM items");
  });

  it("reads the query again after a transaction of this connection", () => {
    settle();
    store.transaction(() => store.append(null, [item("item:b", 2, "second")], NOW));
    expect(queried()).toEqual({ texts: ["first", "second"], ran: true });
    // A transaction that fails and writes nothing still starts over.
    settle();
    expect(() =>
      store.transaction(() => {
        store.append(null, [item("item:c", 3, "rolled back")], NOW);
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(queried()).toEqual({ texts: ["first", "second"], ran: true });
  });

  it("reads the query again after a row changed on this connection outside a transaction", () => {
    settle();
    store.db.exec(`UPDATE items SET data = json_set(data, '$.text', 'changed in place') WHERE id = 'item:a'`);
    expect(queried()).toEqual({ texts: ["changed in place"], ran: true });
  });

  /** The next event-loop turn (another process's commit can only reach this one between turns). */
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  /** Commits a change to item:a on another connection, as another process would. */
  function commitElsewhere(text: string): void {
    const other = new Database(file);
    try {
      other.exec(`UPDATE items SET data = json_set(data, '$.text', '${text}') WHERE id = 'item:a'`);
    } finally {
      other.close();
    }
  }

  it("reads the query again after another connection committed (another process), from the next turn", async () => {
    settle();
    await nextTurn();
    commitElsewhere("from elsewhere");
    await nextTurn();
    expect(queried()).toEqual({ texts: ["from elsewhere"], ran: true });
  });

  it("reads data_version once per event-loop turn, and again on a credential check's fresh read", async () => {
    await nextTurn();
    settle();
    const dataVersionReads = () => statements.filter((sql) => sql.includes("data_version")).length;
    const before = dataVersionReads();
    settle();
    settle();
    expect(dataVersionReads()).toBe(before);
    // A commit elsewhere within the turn is seen once the turn's data_version is read again.
    commitElsewhere("seen after a fresh read");
    expect(queried()).toEqual({ texts: ["first"], ran: false });
    store.dataVersion();
    expect(queried()).toEqual({ texts: ["seen after a fresh read"], ran: true });
    await nextTurn();
    settle();
    expect(dataVersionReads()).toBe(before + 2);
  });

  it("gives each caller objects of its own", () => {
    settle();
    const [mine] = store.select("item", "thread_id = ?", ["thread:1"], "ORDER BY position") as { text: string }[];
    mine!.text = "changed by a caller";
    expect(texts()).toEqual(["first"]);
  });

  it("asks a query that reads the clock every time", () => {
    const clock = () => {
      const before = statements.length;
      store.select("item", "position < julianday('now')");
      return statements.slice(before).filter((sql) => sql.includes("julianday")).length;
    };
    for (let i = 0; i < 4; i += 1) expect(clock()).toBe(1);
  });
});
