import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TransactionalEngine } from "../../src/engine/engine.js";
import type { Engine } from "../../src/engine/ports.js";
import type { CommittedReader } from "../../src/engine/projection-reader.js";
import { createSilentLogger } from "../../src/logging/logger.js";
import { EventCursor, type EventSink } from "../../src/services/events/event-cursor.js";
import { EventFilter, type EventFilterSpec } from "../../src/services/events/event-filter.js";
import { type FeedEvent, PublicEventFeed } from "../../src/services/events/public-event-feed.js";
import { PublicEventProjector } from "../../src/services/events/public-event-projector.js";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";
import { systemClock } from "../../src/util/clock.js";
import { randomIdAllocator } from "../../src/util/ids.js";
import { item, thread } from "../store/contract/records.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The engine's reader answering as a store across a network would: each read is made when asked
 * and answered a few event-loop turns later (one to three, varying), so answers come in another
 * order than the questions, and commits land between a read and its answer. While `held` is
 * set, the log's pages (`eventsAfter`) wait for `release()` before they answer. The store behind
 * it is the real one.
 */
class DistantReader {
  private asked = 0;
  private held: Promise<void> | null = null;
  private releaseHeld: (() => void) | null = null;
  readonly reader: CommittedReader;

  constructor(reader: CommittedReader) {
    const later =
      <A extends unknown[], R>(read: (...args: A) => Promise<R>, holdable = false) =>
      async (...args: A): Promise<R> => {
        const answer = read(...args);
        this.asked += 1;
        for (let turn = 0; turn <= this.asked % 3; turn += 1) await nextTurn();
        if (holdable && this.held !== null) await this.held;
        return answer;
      };
    this.reader = {
      ...reader,
      get: later(reader.get) as CommittedReader["get"],
      eventsAfter: later(reader.eventsAfter, true),
      previousUpsert: later(reader.previousUpsert),
      lastSequence: later(reader.lastSequence),
    };
  }

  /** Log pages asked from now on wait for `release()`. */
  hold(): void {
    this.held = new Promise<void>((resolve) => (this.releaseHeld = resolve));
  }

  release(): void {
    this.releaseHeld?.();
    this.held = null;
  }
}

/** Waits until `done()` holds, for at most `turns` event-loop turns (a bound, not a clock). */
async function within(turns: number, done: () => boolean): Promise<void> {
  for (let turn = 0; turn < turns && !done(); turn += 1) await nextTurn();
}

/** A client that reads everything it is sent, sometimes only after a few turns (a replay then waits). */
class RecordingSink implements EventSink {
  readonly sequences: number[] = [];
  get saturated(): boolean {
    return this.sequences.length % 97 === 0;
  }
  send(events: readonly FeedEvent[]): boolean {
    for (const feedEvent of events) this.sequences.push(feedEvent.event.sequence);
    return true;
  }
  async drained(): Promise<boolean> {
    await nextTurn();
    await nextTurn();
    return true;
  }
  sendUnlogged(): boolean {
    return true;
  }
}

/** A root thread's sub-agent child: what `descendants` reaches through the thread directory. */
function childThread(id: string, parentId: string): RecordUpsert<"thread"> {
  const upsert = thread(id, "project:a", "child");
  return {
    entity: "thread",
    record: {
      ...upsert.record,
      lineage: { ...upsert.record.lineage, relationship: "subagent", parentThreadId: parentId, depth: 1 },
    },
  };
}

describe("the ordered event stream's asynchronous stage", () => {
  let dir: string;
  let store: Store;
  let engine: TransactionalEngine;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-ordered-stream-"));
    store = new Store(join(dir, "switchyard.db"));
    engine = new TransactionalEngine(store, systemClock, randomIdAllocator);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The engine, its committed reads answered by `reader`. */
  function engineReadingThrough(reader: CommittedReader): Engine {
    return Object.assign(Object.create(engine) as Engine, { reader });
  }

  /** The sequences a stream with `spec` must carry after `after`: the whole log, projected in order. */
  async function expectedSequences(reader: CommittedReader, spec: EventFilterSpec, after: number): Promise<number[]> {
    const feed = new PublicEventFeed(engineReadingThrough(reader), createSilentLogger());
    const projector = new PublicEventProjector(reader);
    const filter = new EventFilter(spec);
    const sequences: number[] = [];
    for (const stored of await reader.eventsAfter(0, 1_000_000)) {
      const feedEvent = await feed.projectWith(projector, stored);
      if (feedEvent !== null && stored.sequence > after && filter.matches(feedEvent)) sequences.push(stored.sequence);
    }
    return sequences;
  }

  it("hands every committed event to each cursor once, in sequence order, while cursors replay and commits keep coming", async () => {
    await engine.apply((ctx) => {
      ctx.put("thread", thread("thread:root", "project:a", "root").record);
      ctx.put("thread", childThread("thread:child", "thread:root").record);
      ctx.put("thread", thread("thread:other", "project:b", "other").record);
    });
    const threads = ["thread:root", "thread:child", "thread:other"];
    // A log longer than a replay page, with items the live stage first meets as updates (their
    // previous state is read from the log).
    for (let batch = 0; batch < 12; batch += 1)
      await engine.apply((ctx) => {
        for (let n = 0; n < 60; n += 1) {
          const index = batch * 60 + n;
          ctx.put("item", item(`item:${index}`, threads[index % 3]!, index, `first ${index}`).record);
        }
      });

    const { reader } = new DistantReader(engine.reader);
    const feed = new PublicEventFeed(engineReadingThrough(reader), createSilentLogger());
    const everything: EventFilterSpec = {};
    const family: EventFilterSpec = { threadId: "thread:root", descendants: true };
    const cursors: { cursor: EventCursor; sink: RecordingSink; spec: EventFilterSpec; after: number }[] = [];
    const open = (spec: EventFilterSpec, after: number) => {
      const sink = new RecordingSink();
      const cursor = new EventCursor(feed, reader, new EventFilter(spec), after, sink);
      cursors.push({ cursor, sink, spec, after });
      cursor.start();
    };
    // Live from now on, and caught up with one commit before the others start; and one replaying
    // the whole log.
    open(everything, store.lastSequence());
    await engine.apply((ctx) => ctx.put("item", item("item:warm-up", "thread:root", 999, "warm-up").record));
    await within(1_000, () => cursors[0]!.cursor.sequence === store.lastSequence());
    open(family, 0);

    // Many commits, queued at once: each handler waits a turn, so they commit one after another
    // across turns while the stage and the replays read.
    const base = store.lastSequence();
    const commits: Promise<void>[] = [];
    for (let n = 0; n < 240; n += 1) {
      commits.push(
        engine.apply(async (ctx) => {
          await nextTurn();
          const index = (n * 7) % 720;
          ctx.put("item", item(`item:${index}`, threads[index % 3]!, index, `update ${n}`).record);
          if (n % 4 === 0) ctx.put("item", item(`item:new:${n}`, threads[n % 3]!, 1_000 + n, `new ${n}`).record);
        }),
      );
    }
    // Replays that start while the commits are under way (the feed is live by then).
    while (store.lastSequence() < base + 40) await nextTurn();
    open(everything, 0);
    while (store.lastSequence() < base + 150) await nextTurn();
    open(family, 300);
    await Promise.all(commits);

    const last = store.lastSequence();
    for (const { cursor } of cursors) await within(100_000, () => cursor.sequence === last);
    for (const { cursor, sink, spec, after } of cursors) {
      cursor.close();
      const expected = await expectedSequences(engine.reader, spec, after);
      expect(expected.length).toBeGreaterThan(0);
      expect(sink.sequences).toEqual(expected);
    }
  }, 120_000);

  it("reads the log again when a batch came while its last page was read, so a quiet log loses nothing", async () => {
    await engine.apply((ctx) => ctx.put("thread", thread("thread:root", "project:a", "root").record));
    await engine.apply((ctx) => ctx.put("item", item("item:1", "thread:root", 1, "before").record));
    const distant = new DistantReader(engine.reader);
    const feed = new PublicEventFeed(engineReadingThrough(distant.reader), createSilentLogger());
    const delivered: number[] = [];
    feed.subscribe((batch) => delivered.push(batch.lastSequence));

    // The replay's page is read now (it sees the log up to item:1) and answers only when released.
    distant.hold();
    const sink = new RecordingSink();
    const cursor = new EventCursor(feed, distant.reader, new EventFilter({}), 0, sink);
    cursor.start();
    // Meanwhile one more commit, which the live feed hands out while the cursor still replays.
    await engine.apply((ctx) => ctx.put("item", item("item:2", "thread:root", 2, "during").record));
    const last = store.lastSequence();
    await within(1_000, () => delivered.includes(last));
    expect(delivered).toContain(last);
    distant.release();

    // No commit follows: only the cursor's own second read can bring the last event.
    await within(1_000, () => cursor.sequence === last);
    cursor.close();
    expect(sink.sequences).toEqual(await expectedSequences(engine.reader, {}, 0));
    expect(sink.sequences).toContain(last);
  });
});
