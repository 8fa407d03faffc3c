// The SQLite driver, measured (issue 33 item 5): Node's built-in node:sqlite (DatabaseSync)
// against better-sqlite3 (the store's driver), on the work the event store does, each driver on
// its own file with the store's schema for the events and items tables (taken from a migrated
// Store) and the pragmas core/src/store/store.ts sets (WAL, synchronous=NORMAL, busy timeout,
// journal size limit). Checkpoints are not timed: the store runs them on a worker thread, and
// one landing in a block would swamp the driver's share, so both WALs are checkpointed between
// rounds (automatic checkpoints off):
// - the append transaction: BEGIN IMMEDIATE, then per upsert the record's current row (raw), the
//   event row and the projection write (a new item inserted, an existing one updated in its data
//   and last_sequence), COMMIT; two upserts per command;
// - point reads of a projection row by id;
// - a range scan of 1,000 events after a sequence (eventsAfter);
// - a replay of 100,000 events into projections (rebuildProjections: the index dropped, batches
//   of 5,000 raw rows, parsed and upserted in one transaction, the index rebuilt).
// The drivers take turns in small blocks, the first of each round alternating, so load from
// elsewhere falls on both alike; each ratio is node:sqlite / better-sqlite3 (below 1: node:sqlite
// faster), the median of the rounds' ratios (each round's two blocks ran next to each other), with
// the quartiles in the note. Measured in the process's CPU time (user + system) per block, as
// both drivers run on this thread: on the shared, loaded machine, wall time also counts the
// moments the process waited for a core, at random (its median ratio is in the note). Values
// and baselines are throughput (or ms per replay) in CPU time.
// Issue 33's rule: adopt node:sqlite if within 10% and its stability on the supported Node
// versions allows; see bench/README.md. Run it on each supported Node (the README says how).
// SQLITE_DRIVER_ROUNDS (default 30) sets the rounds of the small workloads, SQLITE_DRIVER_REPLAYS
// (4) those of the replay, SQLITE_DRIVER_REPLAY (100000) its events.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Store, STORE_BUSY_TIMEOUT_MS } from "../core/dist/store/store.js";

const ROUNDS = Number(process.env.SQLITE_DRIVER_ROUNDS ?? 30);
const REPLAY_ROUNDS = Number(process.env.SQLITE_DRIVER_REPLAYS ?? 4);
const REPLAY = Number(process.env.SQLITE_DRIVER_REPLAY ?? 100_000);
const COMMANDS_PER_BLOCK = 100;
const READS_PER_BLOCK = 2_000;
const SCANS_PER_BLOCK = 10;
const SCAN_LIMIT = 1_000;
const NOW = "2026-12-06T00:00:00.000Z";

function item(i, status = "completed") {
  return {
    id: `item:${i}`,
    threadId: `thread:${i % 50}`,
    runId: `run:${i % 500}`,
    attemptId: null,
    position: i + 1,
    kind: "assistant_message",
    status,
    text: `message ${i} `.repeat(8),
    data: { role: "assistant" },
    createdBy: "provider",
    creationSource: "provider",
    createdAt: NOW,
    updatedAt: NOW,
  };
}

/** The store's schema for the tables the workloads touch, as its migrations leave them. */
function storeSchema(dir) {
  const store = new Store(join(dir, "schema.db"));
  try {
    return store.db
      .prepare("SELECT sql FROM sqlite_master WHERE tbl_name IN ('events', 'items') AND sql IS NOT NULL")
      .pluck()
      .all();
  } finally {
    store.close();
  }
}

/** The two drivers behind one small interface: what the store would need of either. */
function betterSqlite3(file) {
  const db = new Database(file, { timeout: STORE_BUSY_TIMEOUT_MS });
  // The store's own way: one wrapper made once (making one is dear), run as BEGIN IMMEDIATE.
  const wrapped = db.transaction((fn) => fn());
  return {
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql),
    prepareRaw: (sql) => db.prepare(sql).raw(true),
    transaction: (fn) => wrapped.immediate(fn),
    close: () => db.close(),
  };
}

function nodeSqlite(DatabaseSync, file) {
  const db = new DatabaseSync(file, { timeout: STORE_BUSY_TIMEOUT_MS });
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  return {
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql),
    prepareRaw: (sql) => {
      const statement = db.prepare(sql);
      statement.setReturnArrays(true);
      return statement;
    },
    // node:sqlite has no transaction helper: what a port would write.
    transaction: (fn) => {
      begin.run();
      try {
        const result = fn();
        commit.run();
        return result;
      } catch (error) {
        if (db.isTransaction) rollback.run();
        throw error;
      }
    },
    close: () => db.close(),
  };
}

/** One driver's database with the store's tables, pragmas and statements, and the workloads over it. */
function side(name, open, file, schema) {
  const db = open(file);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA wal_autocheckpoint = 0");
  db.exec(`PRAGMA journal_size_limit = ${64 * 1024 * 1024}`);
  db.exec(`PRAGMA busy_timeout = ${STORE_BUSY_TIMEOUT_MS}`);
  for (const sql of schema) db.exec(sql);
  const insertEvent = db.prepare(
    "INSERT INTO events (type, entity, entity_id, thread_id, command_id, data, created_at, previous_sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const current = db.prepareRaw("SELECT last_sequence, id, thread_id, run_id, position, kind FROM items WHERE id = ?");
  const upsert = db.prepare(
    "INSERT INTO items (id, thread_id, run_id, position, kind, data, last_sequence) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET thread_id = excluded.thread_id, run_id = excluded.run_id, position = excluded.position, kind = excluded.kind, data = excluded.data, last_sequence = excluded.last_sequence",
  );
  const update = db.prepare("UPDATE items SET data = ?, last_sequence = ? WHERE id = ?");
  const byId = db.prepare("SELECT data FROM items WHERE id = ?");
  const after = db.prepare(
    "SELECT sequence, type, entity, thread_id, command_id, data, created_at FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?",
  );
  const batch = db.prepareRaw(
    "SELECT sequence, entity, data FROM events WHERE sequence > ? ORDER BY sequence LIMIT 5000",
  );
  const appendOne = (commandId, record) => {
    const data = JSON.stringify(record);
    const row = current.get(record.id);
    const previous = row?.[0] ?? null;
    const info = insertEvent.run("item.upserted", "item", record.id, record.threadId, commandId, data, NOW, previous);
    const sequence = Number(info.lastInsertRowid);
    if (row === undefined)
      upsert.run(record.id, record.threadId, record.runId, record.position, record.kind, data, sequence);
    else update.run(data, sequence, record.id);
  };
  let items = 0;
  let commands = 0;
  return {
    name,
    /** The log the replay reads: `count` events of distinct items, with their rows (untimed). */
    fill(count) {
      db.transaction(() => {
        for (let i = 0; i < count; i += 1) appendOne(null, item(i));
      });
      items = count;
    },
    /** Commands of two upserts each: a new item, and a status change of an existing one. */
    appends(n) {
      for (let c = 0; c < n; c += 1) {
        commands += 1;
        db.transaction(() => {
          appendOne(`cmd:${commands}`, item(items));
          items += 1;
          appendOne(`cmd:${commands}`, item((commands * 7919) % items, commands % 2 === 0 ? "completed" : "running"));
        });
      }
    },
    pointReads(n) {
      let bytes = 0;
      for (let r = 0; r < n; r += 1) bytes += byId.get(`item:${(r * 7919) % items}`).data.length;
      return bytes;
    },
    rangeScans(n) {
      let rows = 0;
      for (let s = 0; s < n; s += 1) rows += after.all((s * 104_729) % (REPLAY - SCAN_LIMIT), SCAN_LIMIT).length;
      return rows;
    },
    /** rebuildProjections, as the store does it. */
    replay() {
      db.exec(`PRAGMA cache_size = -65536`);
      return db.transaction(() => {
        db.exec("DROP INDEX items_position");
        db.exec("DELETE FROM items");
        let applied = 0;
        let from = 0;
        for (;;) {
          const rows = batch.all(from);
          if (rows.length === 0) break;
          for (const [sequence, , data] of rows) {
            const record = JSON.parse(data);
            upsert.run(record.id, record.threadId, record.runId, record.position, record.kind, data, sequence);
          }
          applied += rows.length;
          from = rows[rows.length - 1][0];
        }
        db.exec("CREATE UNIQUE INDEX items_position ON items(thread_id, position)");
        return applied;
      });
    },
    checkpoint: () => db.exec("PRAGMA wal_checkpoint(TRUNCATE)"),
    close: () => db.close(),
  };
}

/** A block's wall time and the process's CPU time (user + system) over it, in ms. */
function measure(fn) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  fn();
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

export default async function run() {
  // Heard before node:sqlite loads: whether this Node still calls it experimental.
  const warnings = [];
  const hear = (warning) => {
    if (warning.name === "ExperimentalWarning" && /sqlite/i.test(warning.message)) warnings.push(warning.message);
  };
  process.on("warning", hear);
  const { DatabaseSync } = await import("node:sqlite");
  await new Promise((resolve) => setImmediate(resolve));
  process.off("warning", hear);
  const experimental = warnings.length > 0 ? `ExperimentalWarning printed` : "no ExperimentalWarning";
  const dir = mkdtempSync(join(tmpdir(), "switchyard-bench-driver-"));
  try {
    const schema = storeSchema(dir);
    const sides = [
      side("better-sqlite3", betterSqlite3, join(dir, "better.db"), schema),
      side("node:sqlite", (file) => nodeSqlite(DatabaseSync, file), join(dir, "node.db"), schema),
    ];
    const versions = `SQLite ${new DatabaseSync(":memory:").prepare("SELECT sqlite_version() AS v").get().v} vs ${new Database(":memory:").prepare("SELECT sqlite_version() AS v").get().v}`;
    for (const s of sides) {
      s.fill(REPLAY);
      s.checkpoint();
    }
    const small = {
      appends: (s) => s.appends(COMMANDS_PER_BLOCK),
      pointReads: (s) => s.pointReads(READS_PER_BLOCK),
      rangeScans: (s) => s.rangeScans(SCANS_PER_BLOCK),
    };
    /** Per workload, each timed round's [better-sqlite3, node:sqlite] {@link measure}s. */
    const rounds = { appends: [], pointReads: [], rangeScans: [], replay: [] };
    const alternate = async (round, workload, fn) => {
      const pair = [null, null];
      for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) pair[index] = measure(() => fn(sides[index]));
      if (round >= 0) rounds[workload].push(pair);
      for (const s of sides) s.checkpoint();
      // The event loop turns between blocks, as a server's does between requests.
      await new Promise((resolve) => setImmediate(resolve));
    };
    // One untimed round warms both (statement caches, the page cache), then the timed ones.
    for (let round = -1; round < ROUNDS; round += 1)
      for (const [workload, fn] of Object.entries(small)) await alternate(round, workload, fn);
    for (let round = -1; round < REPLAY_ROUNDS; round += 1) await alternate(round, "replay", (s) => s.replay());
    for (const s of sides) s.close();
    const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.round((values.length - 1) * q)];
    const row = (workload, metric, perBlock, unit, what) => {
      const pairs = rounds[workload];
      const ratios = pairs.map(([better, node]) => node.cpu / better.cpu);
      const wallRatios = pairs.map(([better, node]) => node.wall / better.wall);
      const total = (index) => pairs.reduce((sum, pair) => sum + pair[index].cpu, 0);
      const figure = (ms) => (unit === "ms" ? ms / pairs.length : (perBlock * pairs.length) / (ms / 1000));
      return {
        metric: `${metric}, node:sqlite vs better-sqlite3`,
        value: figure(total(1)),
        unit,
        baseline: figure(total(0)),
        ratio: quantile(ratios, 0.5),
        note: `ratio = node:sqlite CPU time / better-sqlite3's, median of ${pairs.length} alternating rounds (quartiles ${quantile(ratios, 0.25).toFixed(2)}-${quantile(ratios, 0.75).toFixed(2)}; wall time ${quantile(wallRatios, 0.5).toFixed(2)}); adopt if <= 1.1 (issue 33); ${what}; ${process.version} (${versions}), ${experimental}`,
      };
    };
    return {
      name: "SQLite driver: node:sqlite vs better-sqlite3",
      rows: [
        row(
          "appends",
          "append transaction (2 upserts)",
          COMMANDS_PER_BLOCK,
          "commands/s",
          `${COMMANDS_PER_BLOCK} commands per block`,
        ),
        row("pointReads", "point read by id", READS_PER_BLOCK, "reads/s", `${READS_PER_BLOCK} per block`),
        row(
          "rangeScans",
          `range scan of ${SCAN_LIMIT} events after a sequence`,
          SCANS_PER_BLOCK,
          "scans/s",
          `${SCANS_PER_BLOCK} per block`,
        ),
        row(
          "replay",
          `replay of ${REPLAY.toLocaleString("en")} events`,
          1,
          "ms",
          "rebuildProjections' work, one per block",
        ),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
