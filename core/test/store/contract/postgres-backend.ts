import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";
import { createTestDatabase, stopSharedPostgresServer } from "@switchyard/testkit";
import { ENTITY_NAMES, ENTITY_TABLES } from "../../../src/store/entity-tables.js";
import {
  migratePostgres,
  openPostgresEventStore,
  openPostgresPool,
  POSTGRES_MIGRATIONS,
  type PostgresAsyncUnitOfWork,
  type PostgresEventStore,
  type PostgresPool,
  type PostgresSyncUnitOfWork,
  type PostgresUnitOfWork,
} from "../../../src/store/postgres/index.js";
import { CommandProcessor, engineHooks } from "../../../src/engine/command-processor.js";
import { ThreadSearchTable } from "../../../src/store/tables/thread-search.js";
import type { Clock } from "../../../src/util/clock.js";
import { randomIdAllocator } from "../../../src/util/ids.js";
import type {
  AsyncUnitOfWork,
  StoreBackend,
  StoreHarness,
  StoreProcess,
  TableRows,
  UnitOfWork,
} from "./store-harness.js";
import { processExecution } from "./process-execution.js";

const NEWEST_VERSION = Math.max(...POSTGRES_MIGRATIONS.map((migration) => migration.version));

/** As the SQLite backend's: time stands still for the suite. */
const FROZEN_MS = Date.UTC(2026, 11, 1);
const frozenClock: Clock = { nowMs: () => FROZEN_MS, nowIso: () => new Date(FROZEN_MS).toISOString() };

function writesOf(work: PostgresUnitOfWork, clock: Clock): Omit<UnitOfWork, "nested"> {
  return {
    append: (commandId, upserts) => work.append(commandId, upserts, clock.nowIso()),
    forget: (entity, ids) => work.forget(entity, ids),
    putReceipt: (receipt) => work.putReceipt(receipt),
    enqueueEffect: (effect, delayMs = 0) => work.enqueueEffect(effect, clock.nowMs() + delayMs, clock.nowIso()),
  };
}

function unitOfWork(work: PostgresSyncUnitOfWork, clock: Clock): UnitOfWork {
  return { ...writesOf(work, clock), nested: (body) => work.nested((inner) => body(unitOfWork(inner, clock))) };
}

function asyncUnitOfWork(work: PostgresAsyncUnitOfWork, clock: Clock): AsyncUnitOfWork {
  return {
    ...writesOf(work, clock),
    tableHost: work,
    get: (entity, id) => work.get(entity, id),
    nested: (body) => work.nested((inner) => body(asyncUnitOfWork(inner, clock))),
  };
}

// The table dumps read the database itself: the store offers no dump, and comparing rebuilt
// or migrated data column by column is the property (as the SQLite backend's).

async function rowsOf(pool: PostgresPool, table: string, orderBy: readonly string[]) {
  const order = orderBy.length > 0 ? ` ORDER BY ${orderBy.join(", ")}` : "";
  return (await pool.query<Record<string, unknown>>(`SELECT * FROM "${table}"${order}`)).rows;
}

async function tablesOf(pool: PostgresPool): Promise<TableRows> {
  const tables = (
    await pool.query<{ name: string; key: string[] | null }>(
      `SELECT c.relname AS name,
         (SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum))
            FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
            WHERE i.indrelid = c.oid AND i.indisprimary) AS key
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'schema_migrations'
       ORDER BY c.relname`,
    )
  ).rows;
  const dump: Record<string, Record<string, unknown>[]> = {};
  for (const { name, key } of tables) dump[name] = await rowsOf(pool, name, key ?? []);
  return dump;
}

async function schemaOf(pool: PostgresPool): Promise<readonly string[]> {
  const columns = await pool.query<{ line: string }>(
    `SELECT format('column %s.%s: %s%s%s', table_name, column_name, data_type,
         CASE WHEN is_nullable = 'NO' THEN ' not null' ELSE '' END,
         COALESCE(' default ' || column_default, '')) AS line
       FROM information_schema.columns WHERE table_schema = 'public'
       ORDER BY table_name, ordinal_position`,
  );
  const indexes = await pool.query<{ line: string }>(
    "SELECT format('index %s on %s: %s', indexname, tablename, indexdef) AS line FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
  );
  const functions = await pool.query<{ line: string }>(
    `SELECT format('function %s: %s', p.proname, pg_get_functiondef(p.oid)) AS line
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY p.proname`,
  );
  return [...columns.rows, ...indexes.rows, ...functions.rows].map((row) => row.line);
}

function harnessOf(store: PostgresEventStore): StoreHarness {
  const clock = frozenClock;
  const pool = store.pool;
  // The engine's own command processing (TransactionalEngine runs the same), on this store's units of work.
  const engine = new CommandProcessor(store, clock, randomIdAllocator, engineHooks([]));
  return {
    backend: "postgres",
    nowMs: () => clock.nowMs(),
    transaction: (body) => store.transaction((work) => body(unitOfWork(work, clock))),
    transactionAsync: (body) => store.transactionAsync((work) => body(asyncUnitOfWork(work, clock))),
    tableHost: store,
    onCommitted: (listener) => store.onCommitted(listener),
    get: (entity, id) => store.get(entity, id),
    lastSequence: () => store.lastSequence(),
    eventsAfter: (sequence, limit) => store.eventsAfter(sequence, limit),
    receipt: (commandId) => store.receipt(commandId),
    dueEffects: (nowMs) => store.dueEffects(nowMs),
    nextEffectDueAt: () => store.nextEffectDueAt(),
    outboxAgenda: (nowMs) => store.outboxAgenda(nowMs),
    claimEffect: (id, nowMs) => store.claimEffect(id, nowMs),
    settleEffect: (id, status, error) => store.settleEffect(id, status, error, clock.nowIso()),
    retryEffect: (id, availableAtMs, error) => store.retryEffect(id, availableAtMs, error, clock.nowIso()),
    unfinishedEffects: () => store.unfinishedEffects(),
    effect: (id) => store.effect(id),
    searchThreads: async (projectId, text) =>
      (await new ThreadSearchTable(store).page(projectId, { includeSubagents: true }, text, 50, 0)).map(
        (hit) => hit.threadId,
      ),
    catchUpThreadSearch: (maxEvents) => store.threadSearchIndex.catchUp(maxEvents),
    rebuildProjections: () => store.rebuildProjections(),
    projections: async () => {
      const dump: Record<string, Record<string, unknown>[]> = {};
      for (const name of ENTITY_NAMES)
        dump[ENTITY_TABLES[name].table] = await rowsOf(pool, ENTITY_TABLES[name].table, ["id"]);
      return dump;
    },
    tables: () => tablesOf(pool),
    schemaVersion: async () =>
      (await pool.query<{ version: number }>("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations"))
        .rows[0]!.version,
    schema: () => schemaOf(pool),
    execute: (command) => engine.execute(command),
    apply: (change) => engine.apply(change),
    applyEach: (changes, onError) => engine.applyEach(changes, onError),
  };
}

/** Runs the built store (dist: `npm run build` first) in a process of its own, as a server node would. */
const STORE_PROCESS = fileURLToPath(new URL("./postgres-store-process.mjs", import.meta.url));

function storeProcess(url: string): StoreProcess {
  const child = spawn(process.execPath, [STORE_PROCESS, url], { stdio: ["pipe", "pipe", "inherit"] });
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
      waiting.push((answer) =>
        typeof answer.error === "string" ? reject(new Error(`the store process: ${answer.error}`)) : resolve(answer),
      );
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

/**
 * The PostgreSQL backend: `PostgresEventStore` on a database of its own per `open*`, on the
 * worker's throw-away server (the testkit's; stopped after the test file).
 */
export function postgresBackend(): StoreBackend {
  const stores = new Map<StoreHarness, { store: PostgresEventStore; url: string }>();
  const processes: StoreProcess[] = [];
  afterAll(() => stopSharedPostgresServer());
  const openStore = async (url: string) => {
    const store = await openPostgresEventStore(url, { max: 10 });
    const harness = harnessOf(store);
    stores.set(harness, { store, url });
    return harness;
  };
  const opened = (harness: StoreHarness) => {
    const found = stores.get(harness);
    if (found === undefined) throw new Error("this harness was not opened by the postgres backend (or was closed)");
    return found;
  };
  return {
    name: "postgres",
    has: { engine: true },
    newestVersion: NEWEST_VERSION,
    open: async () => openStore(await createTestDatabase()),
    reopen: async (harness) => {
      const { store, url } = opened(harness);
      stores.delete(harness);
      await store.close();
      return openStore(url);
    },
    connectAgain: async (harness) => openStore(opened(harness).url),
    spawnStoreProcess: async (harness) => {
      const child = storeProcess(opened(harness).url);
      processes.push(child);
      return child;
    },
    openStepByStep: async () => {
      const url = await createTestDatabase();
      for (const version of POSTGRES_MIGRATIONS.map((migration) => migration.version).sort((a, b) => a - b)) {
        const pool = openPostgresPool(url, { max: 1 });
        try {
          await migratePostgres(pool, {
            migrations: POSTGRES_MIGRATIONS.filter((migration) => migration.version <= version),
          });
        } finally {
          await pool.end();
        }
      }
      return openStore(url);
    },
    // PostgreSQL's first version is its baseline (SQLite's schema at 31): there is no older
    // PostgreSQL database to migrate from yet. The first migration after the baseline lists 31.
    previousVersions: [],
    openPreviousVersion: async () => {
      throw new Error(`no previous version on postgres: its first version (${NEWEST_VERSION}) is its baseline`);
    },
    closeAll: async () => {
      for (const child of processes.splice(0)) await child.kill();
      for (const { store } of stores.values()) await store.close();
      stores.clear();
    },
  };
}
