import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../src/store/records.js";
import { backends } from "./backends.js";
import { attempt, item, project } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

/** The whole feed after `from`, read `limit` events at a time, as an event cursor reads it. */
async function readFeed(store: StoreHarness, from: number, limit: number): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  let cursor = from;
  for (;;) {
    const page = await store.eventsAfter(cursor, limit);
    expect(page.length).toBeLessThanOrEqual(limit);
    if (page.length === 0) return events;
    // "After" means after: a page that repeated the cursor's event would never end.
    expect(page[0]!.sequence).toBeGreaterThan(cursor);
    events.push(...page);
    cursor = page.at(-1)!.sequence;
  }
}

function expectStrictlyIncreasing(events: readonly StoredEvent[]): void {
  for (let i = 1; i < events.length; i += 1) expect(events[i]!.sequence).toBeGreaterThan(events[i - 1]!.sequence);
}

describe.each(backends)("store contract ($name): the ordered feed", (backend) => {
  let store: StoreHarness;
  beforeEach(async () => {
    store = await backend.open();
  });
  afterEach(() => backend.closeAll());

  it("pages through many commits of several entities with no gap and no duplicate, at any page size", async () => {
    const committed: StoredEvent[] = [];
    for (let unit = 0; unit < 60; unit += 1) {
      // Units of one to five events over several threads and entities, updates among them.
      const events = await store.transaction((work) => {
        const out: StoredEvent[] = [];
        for (let i = 0; i <= unit % 5; i += 1) {
          const n = unit * 5 + i;
          out.push(...work.append(`cmd:${unit}`, [item(`item:${n}`, `thread:${n % 7}`, n, `text ${n}`)]));
        }
        out.push(...work.append(`cmd:${unit}`, [project(`project:${unit % 4}`, `renamed ${unit}`)]));
        if (unit % 3 === 0)
          out.push(...work.append(null, [attempt(`attempt:${unit % 5}`, "thread:1", "running", `s:${unit}`)]));
        return out;
      });
      committed.push(...events);
      if (unit % 10 === 9) {
        // A unit of work that rolls back: its events must never show in the feed.
        await expect(
          store.transaction((work) => {
            work.append(null, [item(`item:lost:${unit}`, "thread:lost", unit, "lost")]);
            throw new Error("rolled back");
          }),
        ).rejects.toThrow("rolled back");
      }
    }

    const whole = await store.eventsAfter(0, committed.length + 10);
    expect(whole).toEqual(committed);
    expectStrictlyIncreasing(whole);
    expect(new Set(whole.map((event) => event.sequence)).size).toBe(whole.length);
    expect(await store.lastSequence()).toBe(committed.at(-1)!.sequence);
    for (const limit of [1, 7, 50, 1000]) expect(await readFeed(store, 0, limit)).toEqual(committed);
    // From the middle: exactly what followed.
    const middle = committed[100]!.sequence;
    expect(await readFeed(store, middle, 13)).toEqual(committed.slice(101));
  });

  it("shows a tailing reader every event of concurrent writers once, in order, including another connection's", async () => {
    const other = await backend.connectAgain(store);
    const writers = 200;
    const read: StoredEvent[] = [];
    let done = false;
    const tail = (async () => {
      let cursor = 0;
      for (;;) {
        const finished = done;
        const page = await store.eventsAfter(cursor, 16);
        if (page.length > 0) expect(page[0]!.sequence).toBeGreaterThan(cursor);
        read.push(...page);
        if (page.length > 0) cursor = page.at(-1)!.sequence;
        else if (finished) return;
        else await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const written = await Promise.all(
      Array.from({ length: writers }, (_, n) =>
        (n % 2 === 0 ? store : other).transaction((work) =>
          work.append(`cmd:writer:${n}`, [item(`item:w${n}`, `thread:${n % 11}`, n, `writer ${n}`)]),
        ),
      ),
    );
    done = true;
    await tail;

    expect(read).toHaveLength(writers);
    expectStrictlyIncreasing(read);
    expect(new Set(read.map((event) => event.commandId))).toEqual(
      new Set(written.map((events) => events[0]!.commandId)),
    );
    expect(await store.lastSequence()).toBe(read.at(-1)!.sequence);
    expect(await other.lastSequence()).toBe(read.at(-1)!.sequence);
  });

  it("shows readers tailing after N every event of concurrent writers whose units of work await, once, in order", async () => {
    // Issue 33's asynchronous units of work, interleaving on the event loop: 8 writers of 200
    // units each, two events per unit with an await between them, and one unit in 25 rolled
    // back after both. A reader may see a unit only whole and only once it committed, and a
    // cursor "after N" must never step over an event that commits later below N (the ordering
    // PostgreSQL's safe-position reader exists for). One reader on the writers' store (its
    // reads from outside the open unit) and one on another connection to the database.
    const other = await backend.connectAgain(store);
    const writers = 8;
    const unitsPerWriter = 200;
    const committed: StoredEvent[] = [];
    let rolledBack = 0;
    let writing = true;
    const tailer = async (reader: StoreHarness): Promise<StoredEvent[]> => {
      const read: StoredEvent[] = [];
      let cursor = 0;
      for (;;) {
        const finished = !writing;
        const page = await reader.eventsAfter(cursor, 16);
        if (page.length > 0) {
          expect(page[0]!.sequence).toBeGreaterThan(cursor);
          read.push(...page);
          cursor = page.at(-1)!.sequence;
        } else if (finished) return read;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const writer = async (w: number): Promise<void> => {
      for (let unit = 0; unit < unitsPerWriter; unit += 1) {
        const fails = unit % 25 === 24;
        const id = `w${w}:u${unit}`;
        try {
          const events = await store.transactionAsync(async (work) => {
            const first = work.append(`cmd:${id}`, [item(`item:${id}:a`, `thread:${w}`, unit * 2, id)]);
            await new Promise((resolve) => setImmediate(resolve));
            const second = work.append(`cmd:${id}`, [item(`item:${id}:b`, `thread:${w}`, unit * 2 + 1, id)]);
            if (fails) throw new Error(`unit ${id} rolls back`);
            return [...first, ...second];
          });
          committed.push(...events);
        } catch (error) {
          if (!fails) throw error;
          rolledBack += 1;
        }
      }
    };
    const readers = [tailer(store), tailer(other)];
    try {
      await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    } finally {
      writing = false;
    }
    const [readHere, readThere] = await Promise.all(readers);

    expect(rolledBack).toBe(writers * (unitsPerWriter / 25));
    expect(committed).toHaveLength(writers * (unitsPerWriter - unitsPerWriter / 25) * 2);
    const inOrder = [...committed].sort((a, b) => a.sequence - b.sequence);
    expect(readHere).toEqual(inOrder);
    expect(readThere).toEqual(inOrder);
    expect(await readFeed(store, 0, 100)).toEqual(inOrder);
  });
});
