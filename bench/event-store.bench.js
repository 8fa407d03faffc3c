// Event append throughput against a raw better-sqlite3 transactional insert loop (same process,
// same file system, same pragmas, the same events table without its indexes; the two sides take
// turns in rounds so machine drift hits both), and the time to rebuild projections from 100k
// events (goal <= 1 s). The raw loop never checkpoints at all (its WAL just grows: the cheapest
// floor); the store's checkpoints run on its worker thread, heard between rounds, and on the
// writing connection only past its backstop (WAL_BACKSTOP_FRAMES) when a round outruns them.
// The thread search index (ThreadSearchIndex) is kept off those write paths, from a watermark:
// its rows time what it costs instead, a search's catch-up after CATCH_UP new messages, a
// catch-up with nothing new (a background tick's usual cost), and the bulk build of 100k
// messages after the rebuild.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Store } from "../core/dist/store/store.js";
import { ThreadSearchIndex } from "../core/dist/store/thread-search-index.js";

const N = 20_000;
const ROUNDS = 40;
const REPLAY = 100_000;
const REPLAY_GOAL_MS = 1_000;
const CATCH_UP = 10_000;
const IDLE_TICKS = 1_000;

function item(i) {
  const now = new Date().toISOString();
  return {
    entity: "item",
    record: {
      id: `item:${i}`,
      threadId: `thread:${i % 50}`,
      runId: `run:${i % 500}`,
      attemptId: null,
      position: i + 1,
      kind: "assistant_message",
      status: "completed",
      text: `message ${i} `.repeat(8),
      data: { role: "assistant" },
      createdBy: "provider",
      creationSource: "provider",
      createdAt: now,
      updatedAt: now,
    },
  };
}

function timeIt(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export default async function run() {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-bench-store-"));
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
  try {
    // Switchyard: one transaction per event (a command), event row + projection upsert.
    const store = new Store(join(dir, "switchyard.db"));
    const now = new Date().toISOString();
    // Baseline: the same rows, inserted raw, one transaction each, same pragmas.
    const raw = new Database(join(dir, "raw.db"));
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    raw.pragma("wal_autocheckpoint = 0");
    raw.exec(
      "CREATE TABLE events (sequence INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, entity TEXT NOT NULL, entity_id TEXT NOT NULL, thread_id TEXT, command_id TEXT, data TEXT NOT NULL, created_at TEXT NOT NULL)",
    );
    const insert = raw.prepare(
      "INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const rawTx = raw.transaction((row) =>
      insert.run("item.upserted", "item", row.record.id, row.record.threadId, null, JSON.stringify(row.record), now),
    );
    let ours = 0;
    let baseline = 0;
    const perRound = N / ROUNDS;
    for (let round = 0; round < ROUNDS; round += 1) {
      const first = round * perRound;
      ours += timeIt(() => {
        for (let i = first; i < first + perRound; i += 1) store.transaction(() => store.append(null, [item(i)], now));
      });
      baseline += timeIt(() => {
        for (let i = first; i < first + perRound; i += 1) rawTx(item(i));
      });
      // Between rounds the event loop turns, as a server's does between requests: the store's
      // checkpoint worker is heard and asked again (a loop that never yields leaves it to the
      // writing connection's backstop).
      await new Promise((resolve) => setImmediate(resolve));
    }
    raw.close();

    // Search: the index built over what the rounds wrote, then CATCH_UP messages appended as
    // commands, then the catch-up a search would run first.
    const index = new ThreadSearchIndex(store);
    index.catchUp();
    for (let i = N; i < N + CATCH_UP; i += 1) store.transaction(() => store.append(null, [item(i)], now));
    await store.checkpointer?.checkpointNow();
    const catchUp = timeIt(() => index.catchUp());
    const idle = timeIt(() => {
      for (let tick = 0; tick < IDLE_TICKS; tick += 1) index.catchUp();
    });

    // Replay: rebuild every projection from 100k events.
    for (let i = N + CATCH_UP; i < REPLAY; i += 1) store.transaction(() => store.append(null, [item(i)], now));
    // The rebuild is timed alone: not beside a checkpoint of the appends before it.
    await store.checkpointer?.checkpointNow();
    const replay = timeIt(() => store.rebuildProjections());
    // The rebuild left the search index to its next catch-up, which builds it in bulk.
    const bulk = timeIt(() => index.catchUp());
    store.close();

    return {
      name: "event store",
      rows: [
        {
          metric: "event append (with projection upsert), 1 event per command",
          value: N / (ours / 1000),
          unit: "events/s",
          baseline: N / (baseline / 1000),
          ratio: ours / baseline,
          note: `ratio = our time / raw insert time (goal <= 2x); baseline: a raw better-sqlite3 insert loop into the same events table without indexes; load ${load}`,
        },
        {
          metric: `replay of ${REPLAY.toLocaleString("en")} events into projections`,
          value: replay,
          unit: "ms",
          note: `${Math.round(REPLAY / (replay / 1000)).toLocaleString("en")} events/s; goal <= ${REPLAY_GOAL_MS} ms (${replay <= REPLAY_GOAL_MS ? "met" : "NOT MET"})`,
        },
        {
          metric: `search index catch-up after ${CATCH_UP.toLocaleString("en")} new messages`,
          value: catchUp,
          unit: "ms",
          note: "one transaction: the messages the events past the watermark name, compared with the index and written",
        },
        {
          metric: "search index catch-up with nothing new",
          value: (idle / IDLE_TICKS) * 1000,
          unit: "µs",
          note: `one statement (the watermark against the newest event); mean of ${IDLE_TICKS.toLocaleString("en")}`,
        },
        {
          metric: `search index bulk build of ${REPLAY.toLocaleString("en")} messages after the rebuild`,
          value: bulk,
          unit: "ms",
          note: "tables dropped and re-created, one INSERT … SELECT each",
        },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
