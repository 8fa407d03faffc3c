import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { TransactionalEngine } from "../../../src/engine/engine.js";
import { ENTITY_NAMES, ENTITY_TABLES, type EntityTable } from "../../../src/store/entity-tables.js";
import { migrate, MIGRATIONS } from "../../../src/store/migrations.js";
import type { CommandReceipt, RecordUpsert } from "../../../src/store/ports.js";
import type { EntityName, EntityRecords } from "../../../src/store/records.js";
import { Store } from "../../../src/store/store.js";
import { ThreadSearchTable } from "../../../src/store/tables/thread-search.js";
import { ThreadSearchIndex } from "../../../src/store/thread-search-index.js";
import { randomIdAllocator } from "../../../src/util/ids.js";
import type { Clock } from "../../../src/util/clock.js";
import type {
  AsyncUnitOfWork,
  EffectToQueue,
  PreviousVersionDatabase,
  StoreBackend,
  StoreHarness,
  StoreProcess,
  TableRows,
  UnitOfWork,
} from "./store-harness.js";
import { processExecution } from "./process-execution.js";

const NEWEST_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));

/**
 * The versions a database of the previous store can be written at: from version 4 (the first
 * with every table the suite writes), newest first.
 */
const PREVIOUS_VERSIONS = MIGRATIONS.map((migration) => migration.version)
  .filter((version) => version >= 4 && version < NEWEST_VERSION)
  .sort((a, b) => b - a);

/**
 * Time stands still for the suite: an effect queued "now" is due at the `nowMs()` a test read
 * before or after, and across a reopen.
 */
const FROZEN_MS = Date.UTC(2026, 11, 1);
const frozenClock: Clock = { nowMs: () => FROZEN_MS, nowIso: () => new Date(FROZEN_MS).toISOString() };

/** The tables whose rows are the schema's own bookkeeping, not the store's data. */
const BOOKKEEPING = "name NOT LIKE 'sqlite_%' AND name != 'schema_migrations'";

/** The writes both kinds of unit of work share. */
function writesOf(store: Store, clock: Clock): Omit<UnitOfWork, "nested"> {
  return {
    append: (commandId, upserts) => store.append(commandId, upserts, clock.nowIso()),
    forget: (entity, ids) => store.forget(entity, ids),
    putReceipt: (receipt) => store.putReceipt(receipt),
    enqueueEffect: (effect, delayMs = 0) => store.enqueueEffect(effect, clock.nowMs() + delayMs, clock.nowIso()),
  };
}

function unitOfWork(store: Store, clock: Clock): UnitOfWork {
  const work: UnitOfWork = { ...writesOf(store, clock), nested: (body) => store.transaction(() => body(work)) };
  return work;
}

function asyncUnitOfWork(store: Store, clock: Clock): AsyncUnitOfWork {
  const work: AsyncUnitOfWork = {
    ...writesOf(store, clock),
    // The store runs a table's SQL in the transaction the running code is part of.
    tableHost: store,
    get: async (entity, id) => store.get(entity, id),
    nested: (body) => store.transactionAsync(() => body(work)),
  };
  return work;
}

function tablesOf(db: Database.Database): TableRows {
  const names = db
    // Plain tables: a full-text index (a virtual table and its shadow tables) is derived from them.
    .prepare(
      `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND ${BOOKKEEPING} ORDER BY name`,
    )
    .pluck()
    .all() as string[];
  return Object.fromEntries(
    names.map((name) => [
      name,
      db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all() as Record<string, unknown>[],
    ]),
  );
}

/** The SQLite store (better-sqlite3) over a real database file in a folder of its own. */
function harnessOf(store: Store): StoreHarness {
  const clock = frozenClock;
  const engine = new TransactionalEngine(store, clock, randomIdAllocator, []);
  return {
    backend: "sqlite",
    nowMs: () => clock.nowMs(),
    transaction: async (body) => store.transaction(() => body(unitOfWork(store, clock))),
    transactionAsync: (body) => store.transactionAsync(() => body(asyncUnitOfWork(store, clock))),
    tableHost: store,
    onCommitted: (listener) => store.onCommitted(listener),
    get: async (entity, id) => store.get(entity, id),
    lastSequence: async () => store.lastSequence(),
    eventsAfter: async (sequence, limit) => store.eventsAfter(sequence, limit),
    receipt: async (commandId) => store.getReceipt(commandId),
    dueEffects: async (nowMs) => store.dueEffects(nowMs),
    nextEffectDueAt: async () => store.nextEffectDueAt(),
    outboxAgenda: async (nowMs) => store.outboxAgenda(nowMs),
    claimEffect: async (id, nowMs) => store.claimEffect(id, nowMs),
    settleEffect: async (id, status, error) => store.settleEffect(id, status, error, clock.nowIso()),
    retryEffect: async (id, availableAtMs, error) => store.retryEffect(id, availableAtMs, error, clock.nowIso()),
    unfinishedEffects: async () => store.unfinishedEffects(),
    effect: async (id) => store.getEffect(id),
    searchThreads: async (projectId, text) =>
      (await new ThreadSearchTable(store).page(projectId, { includeSubagents: true }, text, 50, 0)).map(
        (hit) => hit.threadId,
      ),
    catchUpThreadSearch: (maxEvents) => store.writeAsync(() => new ThreadSearchIndex(store).catchUp(maxEvents)),
    rebuildProjections: async () => store.rebuildProjections(),
    projections: async () =>
      Object.fromEntries(
        ENTITY_NAMES.map((name) => {
          const table = ENTITY_TABLES[name].table;
          return [table, store.db.prepare(`SELECT * FROM ${table} ORDER BY id`).all() as Record<string, unknown>[]];
        }),
      ),
    tables: async () => tablesOf(store.db),
    schemaVersion: async () =>
      store.db.prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").pluck().get() as number,
    schema: async () =>
      (
        store.db
          .prepare(
            `SELECT type, name, tbl_name AS tableName, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`,
          )
          .all() as { type: string; name: string; tableName: string; sql: string | null }[]
      ).map((row) => `${row.type} ${row.name} on ${row.tableName}: ${row.sql ?? "(automatic)"}`),
    execute: async (command) => engine.execute(command),
    apply: async (change) => engine.apply(change),
    applyEach: async (changes, onError) => engine.applyEach(changes, onError),
  };
}

function columnsOf(db: Database.Database, table: string): Set<string> {
  return new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
}

/** `INSERT` (or, given a conflict target, upsert) of the row's keys that `table` has at this version. */
function writeRow(db: Database.Database, table: string, row: Record<string, unknown>, conflict?: string): number {
  const present = columnsOf(db, table);
  const columns = Object.keys(row).filter((column) => present.has(column));
  const onConflict =
    conflict === undefined
      ? ""
      : ` ON CONFLICT(${conflict}) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(", ")}`;
  const info = db
    .prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})${onConflict}`)
    .run(...columns.map((column) => row[column]));
  return Number(info.lastInsertRowid);
}

/**
 * What the store of the previous version wrote for an upsert, in that version's columns: the
 * event (linked to the record's previous one where the log has links) and the projection row.
 */
function appendAsPreviousVersion(
  db: Database.Database,
  commandId: string | null,
  { entity, record }: RecordUpsert,
  now: string,
): void {
  const spec = ENTITY_TABLES[entity] as EntityTable<EntityName>;
  const id = (record as { id: string }).id;
  const data = JSON.stringify(record);
  // Before migration 16 rows did not name their last event, nor events their previous one.
  const linked = columnsOf(db, spec.table).has("last_sequence");
  const previous = linked
    ? (db.prepare(`SELECT last_sequence FROM ${spec.table} WHERE id = ?`).pluck().get(id) ?? null)
    : null;
  const sequence = writeRow(db, "events", {
    type: `${entity}.upserted`,
    entity,
    entity_id: id,
    thread_id: spec.threadId(record),
    command_id: commandId,
    data,
    created_at: now,
    previous_sequence: previous,
  });
  if (spec.removes?.(record as EntityRecords[EntityName]) === true) {
    db.prepare(`DELETE FROM ${spec.table} WHERE id = ?`).run(id);
    return;
  }
  const columns = Object.entries(spec.columns).map(([column, read]) => [column, read(record)]);
  writeRow(db, spec.table, { ...Object.fromEntries(columns), data, last_sequence: sequence }, "id");
}

function previousVersionOf(db: Database.Database, version: number, open: () => StoreHarness): PreviousVersionDatabase {
  const clock = frozenClock;
  return {
    version,
    append: (commandId, upserts) =>
      db.transaction(() => {
        for (const upsert of upserts) appendAsPreviousVersion(db, commandId, upsert, clock.nowIso());
      })(),
    putReceipt: (receipt: CommandReceipt) =>
      writeRow(db, "command_receipts", {
        command_id: receipt.commandId,
        operation: receipt.operation,
        request_hash: receipt.requestHash,
        result: JSON.stringify(receipt.result),
        first_sequence: receipt.firstSequence,
        last_sequence: receipt.lastSequence,
        created_at: receipt.createdAt,
      }),
    enqueueEffect: (effect: EffectToQueue) =>
      writeRow(db, "outbox", {
        id: effect.id,
        lane: effect.lane,
        type: effect.type,
        payload: JSON.stringify(effect.payload),
        status: "pending",
        attempts: 0,
        available_at: clock.nowMs(),
        created_at: clock.nowIso(),
        updated_at: clock.nowIso(),
      }),
    tables: async () => tablesOf(db),
    upgrade: async () => {
      db.close();
      return open();
    },
  };
}

/** Runs the built store (dist: `npm run build` first), as the server process would. */
const STORE_PROCESS = fileURLToPath(new URL("./sqlite-store-process.mjs", import.meta.url));

function storeProcess(file: string): StoreProcess {
  const child = spawn(process.execPath, [STORE_PROCESS, file], { stdio: ["pipe", "pipe", "inherit"] });
  // "close", not "exit": every answer it wrote before the kill has been read by then.
  const exited = once(child, "close");
  const waiting: ((answer: Record<string, unknown>) => void)[] = [];
  /** An `execute`'s answers, by its tag: they come as its phases do, between other answers. */
  const tagged = new Map<string, (answer: Record<string, unknown>) => void>();
  let tags = 0;
  let onAck: ((sequence: number) => void) | null = null;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    let answer: Record<string, unknown>;
    try {
      answer = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // The last line, cut short by the kill: not an answer.
    }
    if (typeof answer.acked === "number") onAck?.(answer.acked);
    else if (typeof answer.tag === "string") tagged.get(answer.tag)?.(answer);
    else waiting.shift()?.(answer);
  });
  const request = (body: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      waiting.push(resolve);
      void exited.then(
        () => reject(new Error(`the store process exited before answering ${JSON.stringify(body)}`)),
        reject,
      );
      child.stdin!.write(`${JSON.stringify(body)}\n`);
    });
  return {
    append: async (commandId, upserts) =>
      (await request({ op: "append", commandId, upserts })).sequences as readonly number[],
    enqueueEffect: async (effect, nowMs) => {
      await request({ op: "enqueue", effect, nowMs });
    },
    claimEffect: async (id, nowMs) => (await request({ op: "claim", id, nowMs })).claimed === true,
    appendInOpenTransaction: async (commandId, upserts) => {
      await request({ op: "appendInOpenTransaction", commandId, upserts });
    },
    appendUntilKilled: (listener) => {
      onAck = listener;
      child.stdin!.write(`${JSON.stringify({ op: "appendUntilKilled" })}\n`);
    },
    execute: (command) => {
      const tag = `execution-${(tags += 1)}`;
      const { execution, onAnswer } = processExecution((line) => child.stdin!.write(line), exited, tag, command);
      tagged.set(tag, onAnswer);
      return execution;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** The SQLite backend: `Store` (better-sqlite3) on a database file in a fresh mkdtemp folder. */
export function sqliteBackend(): StoreBackend {
  const stores = new Map<StoreHarness, Store>();
  const folders: string[] = [];
  const connections: Database.Database[] = [];
  const processes: StoreProcess[] = [];
  const newFile = () => {
    const folder = mkdtempSync(join(tmpdir(), "switchyard-store-contract-"));
    folders.push(folder);
    return join(folder, "switchyard.db");
  };
  const openStore = (file: string) => {
    const store = new Store(file);
    const harness = harnessOf(store);
    stores.set(harness, store);
    return harness;
  };
  const storeOf = (harness: StoreHarness) => {
    const store = stores.get(harness);
    if (store === undefined) throw new Error("this harness was not opened by the sqlite backend (or was closed)");
    return store;
  };
  /** A connection of its own, as an older Switchyard would hold; closed by `closeAll` at the latest. */
  const rawConnection = (file: string) => {
    const db = new Database(file);
    connections.push(db);
    return db;
  };
  return {
    name: "sqlite",
    has: { engine: true },
    newestVersion: NEWEST_VERSION,
    open: async () => openStore(newFile()),
    reopen: async (harness) => {
      const store = storeOf(harness);
      store.close();
      stores.delete(harness);
      return openStore(store.file);
    },
    connectAgain: async (harness) => openStore(storeOf(harness).file),
    spawnStoreProcess: async (harness) => {
      const child = storeProcess(storeOf(harness).file);
      processes.push(child);
      return child;
    },
    openStepByStep: async () => {
      const file = newFile();
      for (const version of MIGRATIONS.map((migration) => migration.version).sort((a, b) => a - b)) {
        const db = rawConnection(file);
        migrate(
          db,
          MIGRATIONS.filter((migration) => migration.version <= version),
        );
        db.close();
      }
      return openStore(file);
    },
    previousVersions: PREVIOUS_VERSIONS,
    openPreviousVersion: async (version = PREVIOUS_VERSIONS[0]!) => {
      if (!PREVIOUS_VERSIONS.includes(version)) throw new Error(`no previous version ${version} on sqlite`);
      const file = newFile();
      const db = rawConnection(file);
      migrate(
        db,
        MIGRATIONS.filter((migration) => migration.version <= version),
      );
      return previousVersionOf(db, version, () => openStore(file));
    },
    closeAll: async () => {
      for (const child of processes.splice(0)) await child.kill();
      for (const store of stores.values()) store.close();
      stores.clear();
      for (const db of connections.splice(0)) if (db.open) db.close();
      for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
    },
  };
}
