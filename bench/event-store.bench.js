// Event append throughput against a raw better-sqlite3 transactional insert loop (same process,
// same file system, same pragmas), and the time to rebuild projections from 100k events.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Store } from "../core/dist/store/store.js";

const N = 20_000;
const REPLAY = 100_000;

function item(i) {
  const now = new Date().toISOString();
  return {
    entity: "item",
    record: {
      id: `item:${i}`, threadId: `thread:${i % 50}`, runId: `run:${i % 500}`, attemptId: null, position: i + 1, kind: "assistant_message",
      status: "completed", text: `message ${i} `.repeat(8), data: { role: "assistant" }, createdBy: "provider", creationSource: "provider", createdAt: now, updatedAt: now,
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
  try {
    // Switchyard: one transaction per event (a command), event row + projection upsert.
    const store = new Store(join(dir, "switchyard.db"));
    const now = new Date().toISOString();
    const ours = timeIt(() => {
      for (let i = 0; i < N; i += 1) store.transaction(() => store.append(null, [item(i)], now));
    });
    // Baseline: the same rows, inserted raw, one transaction each, same pragmas.
    const raw = new Database(join(dir, "raw.db"));
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    raw.exec("CREATE TABLE events (sequence INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT, entity TEXT, entity_id TEXT, thread_id TEXT, command_id TEXT, data TEXT, created_at TEXT)");
    const insert = raw.prepare("INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
    const rawTx = raw.transaction((row) => insert.run("item.upserted", "item", row.record.id, row.record.threadId, null, JSON.stringify(row.record), now));
    const baseline = timeIt(() => {
      for (let i = 0; i < N; i += 1) rawTx(item(i));
    });
    raw.close();

    // Replay: rebuild every projection from 100k events.
    for (let i = N; i < REPLAY; i += 1) store.transaction(() => store.append(null, [item(i)], now));
    const replay = timeIt(() => store.rebuildProjections());
    store.close();

    return {
      name: "event store",
      rows: [
        { metric: "event append (1 event per command)", value: N / (ours / 1000), unit: "events/s", baseline: N / (baseline / 1000), ratio: ours / baseline, note: "ratio = our time / raw insert time; includes the projection upsert" },
        { metric: `replay ${REPLAY.toLocaleString("en")} events into projections`, value: replay, unit: "ms", note: `${Math.round(REPLAY / (replay / 1000)).toLocaleString("en")} events/s` },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
