import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AsyncTransactionConflictError } from "../../src/store/async-transaction.js";
import { Store } from "../../src/store/store.js";
import { StoreTrafficCounter } from "../../src/store/store-traffic.js";
import { item } from "./contract/records.js";

// The SQLite backend's rule for the rest of the event loop while an asynchronous transaction is
// open on its connection (the guarantees every backend keeps are in contract/async-transaction.test.ts).

const NOW = "2026-12-01T00:00:00.000Z";
const effect = (id: string) => ({ id, lane: "thread:1", type: "test.effect", payload: {} });

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

async function yieldToOthers(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

class Refused extends Error {}

const REFUSED = { name: "AsyncTransactionConflictError", code: "store_async_transaction_open" };

describe("the SQLite store's asynchronous transaction and the code outside it", () => {
  let dir: string;
  let file: string;
  let store: Store;
  let counter: StoreTrafficCounter;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-async-transaction-"));
    file = join(dir, "switchyard.db");
    counter = new StoreTrafficCounter();
    store = new Store(file, { onStatement: counter.observe });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const textOf = (id: string) => (store.get("item", id) as { text: string } | null)?.text ?? null;

  /** Opens an asynchronous transaction that appends `item:open` and waits for `commit()`. */
  async function openTransaction(): Promise<{ commit: () => Promise<void> }> {
    const appended = gate();
    const mayCommit = gate();
    const done = store.transactionAsync(async () => {
      store.append("cmd:open", [item("item:open", "thread:1", 2, "open")], NOW);
      store.enqueueEffect(effect("effect:open"), 0, NOW);
      appended.open();
      await mayCommit.opened;
    });
    await appended.opened;
    return {
      commit: async () => {
        mayCommit.open();
        await done;
      },
    };
  }

  it("refuses writes from outside an open asynchronous transaction, which commits intact", async () => {
    store.transaction(() => {
      store.append(null, [item("item:committed", "thread:1", 1, "committed")], NOW);
      store.enqueueEffect(effect("effect:committed"), 0, NOW);
    });
    const open = await openTransaction();

    expect(() => store.transaction(() => store.append(null, [item("item:x", "thread:1", 3, "x")], NOW))).toThrow(
      expect.objectContaining(REFUSED),
    );
    expect(() => store.append(null, [item("item:y", "thread:1", 4, "y")], NOW)).toThrow(AsyncTransactionConflictError);
    expect(() => store.claimEffect("effect:committed", 0)).toThrow(AsyncTransactionConflictError);
    expect(() => store.settleEffect("effect:committed", "done", null, NOW)).toThrow(AsyncTransactionConflictError);
    expect(() => store.retryEffect("effect:committed", 0, "again", NOW)).toThrow(AsyncTransactionConflictError);
    expect(() => store.enqueueEffect(effect("effect:outside"), 0, NOW)).toThrow(AsyncTransactionConflictError);
    expect(() => store.setReactorOffset("reactor", 9)).toThrow(AsyncTransactionConflictError);
    expect(() => store.rebuildProjections()).toThrow(AsyncTransactionConflictError);
    expect(() => store.statement("DELETE FROM outbox")).toThrow(/DELETE FROM outbox writes from outside/);
    // A raw read still answers, from committed state.
    expect(store.statement("SELECT id FROM outbox ORDER BY seq").pluck().all()).toEqual(["effect:committed"]);

    await open.commit();
    expect(textOf("item:open")).toBe("open");
    expect(["item:x", "item:y"].map(textOf)).toEqual([null, null]);
    expect(store.unfinishedEffects().map((row) => row.id)).toEqual(["effect:committed", "effect:open"]);
    expect(store.reactorOffset("reactor")).toBe(0);
    // Closed, the connection is everyone's again.
    expect(store.claimEffect("effect:committed", 0)).toBe(true);
    store.transaction(() => store.append(null, [item("item:x", "thread:1", 3, "x")], NOW));
    expect(textOf("item:x")).toBe("x");
  });

  it("answers every read from outside an open asynchronous transaction with committed state only", async () => {
    store.transaction(() => store.append(null, [item("item:a", "thread:1", 1, "first")], NOW));
    const first = store.lastSequence();
    store.transaction(() => store.append("cmd:second", [item("item:a", "thread:1", 1, "second")], NOW));
    const second = store.lastSequence();
    const appended = gate();
    const mayCommit = gate();
    const done = store.transactionAsync(async () => {
      store.append(null, [item("item:a", "thread:1", 1, "open"), item("item:b", "thread:1", 2, "open")], NOW);
      store.putReceipt({
        commandId: "cmd:open",
        operation: "test",
        requestHash: "hash",
        result: null,
        firstSequence: null,
        lastSequence: null,
        createdAt: NOW,
      });
      appended.open();
      await mayCommit.opened;
    });
    await appended.opened;

    expect(store.lastSequence()).toBe(second);
    expect(textOf("item:a")).toBe("second");
    expect(textOf("item:b")).toBeNull();
    expect(store.select("item", "thread_id = ?", ["thread:1"], "ORDER BY position").map((r) => r.text)).toEqual([
      "second",
    ]);
    expect(store.count("item", "thread_id = ?", ["thread:1"])).toBe(1);
    expect(store.eventsAfter(first).map((event) => event.sequence)).toEqual([second]);
    expect(store.firstUpsertSequence("item", "item:b")).toBeNull();
    expect(store.firstUpsertSequence("item", "item:a")).toBe(first);
    expect(store.previousUpsert(second)).toMatchObject({ text: "first" });
    expect(store.getReceipt("cmd:open")).toBeNull();
    mayCommit.open();
    await done;
    expect(store.select("item", "thread_id = ?", ["thread:1"], "ORDER BY position").map((r) => r.text)).toEqual([
      "open",
      "open",
    ]);
  });

  it("lets the transaction's own code, and a synchronous transaction inside it, write; not a level with a savepoint open", async () => {
    const innerMayFinish = gate();
    await store.transactionAsync(async () => {
      store.append(null, [item("item:outer", "thread:1", 1, "outer")], NOW);
      // The synchronous transaction inside becomes a savepoint, as it did inside another.
      expect(() =>
        store.transaction(() => {
          store.append(null, [item("item:sync", "thread:1", 2, "rolled back")], NOW);
          throw new Refused();
        }),
      ).toThrow(Refused);
      store.transaction(() => store.append(null, [item("item:sync", "thread:1", 2, "sync")], NOW));
      const inner = store.transactionAsync(async () => {
        store.append(null, [item("item:inner", "thread:1", 3, "inner")], NOW);
        await innerMayFinish.opened;
      });
      await yieldToOthers();
      // The outer level's write would land in the inner savepoint.
      expect(() => store.append(null, [item("item:between", "thread:1", 4, "between")], NOW)).toThrow(/savepoint open/);
      innerMayFinish.open();
      await inner;
      store.append(null, [item("item:last", "thread:1", 4, "last")], NOW);
      // A synchronous transaction cannot hold an asynchronous one.
      let started: Promise<unknown> | null = null;
      store.transaction(() => {
        started = store.transactionAsync(async () => null);
      });
      await expect(started).rejects.toThrow(/inside the synchronous transaction/);
    });
    expect(["item:outer", "item:sync", "item:inner", "item:between", "item:last"].map(textOf)).toEqual([
      "outer",
      "sync",
      "inner",
      null,
      "last",
    ]);
  });

  it("rolls back a transaction whose work ends before a nested one it started, which then harms no later transaction", async () => {
    const stragglerMayEnd = gate();
    let straggler: Promise<unknown> = Promise.resolve();
    await expect(
      store.transactionAsync(async () => {
        store.append(null, [item("item:outer", "thread:1", 1, "outer")], NOW);
        straggler = store.transactionAsync(async () => {
          store.append(null, [item("item:straggler", "thread:1", 2, "straggler")], NOW);
          await stragglerMayEnd.opened;
          // By now another transaction is open: this write would land in it.
          store.append(null, [item("item:late", "thread:1", 3, "late")], NOW);
        });
        await yieldToOthers();
      }),
    ).rejects.toThrow(/still running/);
    const nextMayCommit = gate();
    const appended = gate();
    const next = store.transactionAsync(async () => {
      store.append(null, [item("item:next", "thread:1", 1, "next")], NOW);
      appended.open();
      await nextMayCommit.opened;
      store.append(null, [item("item:next-after", "thread:1", 2, "next after")], NOW);
    });
    await appended.opened;
    stragglerMayEnd.open();
    await expect(straggler).rejects.toThrow(/ended before it/);
    nextMayCommit.open();
    await next;
    expect(["item:outer", "item:straggler", "item:late", "item:next", "item:next-after"].map(textOf)).toEqual([
      null,
      null,
      null,
      "next",
      "next after",
    ]);
  });

  it("keeps the identity map for the outermost transaction across awaits, and drops it on commit and rollback", async () => {
    const statementsOf = (read: () => unknown) => {
      const before = counter.snapshot().statements;
      read();
      return counter.snapshot().statements - before;
    };
    await store.transactionAsync(async () => {
      store.append(null, [item("item:a", "thread:1", 1, "first")], NOW);
      await yieldToOthers();
      expect(statementsOf(() => expect(textOf("item:a")).toBe("first"))).toBe(0);
      await store.transactionAsync(async () => {
        await yieldToOthers();
        expect(statementsOf(() => expect(textOf("item:a")).toBe("first"))).toBe(0);
      });
    });
    // Another connection writes between two transactions: the next one reads afresh.
    const other = new Store(file);
    try {
      other.transaction(() => other.append(null, [item("item:a", "thread:1", 1, "by another")], NOW));
    } finally {
      other.close();
    }
    await expect(
      store.transactionAsync(async () => {
        expect(textOf("item:a")).toBe("by another");
        store.append(null, [item("item:a", "thread:1", 1, "rolled back")], NOW);
        await yieldToOthers();
        await expect(
          store.transactionAsync(async () => {
            store.append(null, [item("item:a", "thread:1", 1, "savepoint rolled back")], NOW);
            await yieldToOthers();
            throw new Refused();
          }),
        ).rejects.toThrow(Refused);
        expect(textOf("item:a")).toBe("rolled back");
        throw new Refused();
      }),
    ).rejects.toThrow(Refused);
    await store.transactionAsync(async () => expect(textOf("item:a")).toBe("by another"));
    const events = store.eventsAfter(0).filter((event) => event.entity === "item");
    expect(events.map((event) => (event.record as { text: string }).text)).toEqual(["first", "by another"]);
  });

  it("fails with store_busy, having run nothing, while another connection holds the write lock", async () => {
    store.close();
    store = new Store(file, { busyTimeoutMs: 50 });
    const holder = new Database(file);
    holder.exec("BEGIN IMMEDIATE");
    let ran = false;
    try {
      await expect(
        store.transactionAsync(async () => {
          ran = true;
        }),
      ).rejects.toMatchObject({ code: "store_busy" });
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    expect(ran).toBe(false);
    // Nothing of the refused one lingers: the next takes the lock.
    await store.transactionAsync(async () => store.append(null, [item("item:a", "thread:1", 1, "after")], NOW));
    expect(textOf("item:a")).toBe("after");
  });

  it("refuses, by name, a read from outside an open asynchronous transaction of an in-memory store", async () => {
    const memory = new Store(":memory:");
    try {
      const mayCommit = gate();
      const done = memory.transactionAsync(() => mayCommit.opened);
      await yieldToOthers();
      expect(() => memory.get("item", "item:a")).toThrow(/in-memory store has no second connection/);
      mayCommit.open();
      await done;
      expect(memory.get("item", "item:a")).toBeNull();
    } finally {
      memory.close();
    }
  });
});
