import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** Commits between two checkpoint requests (about 1,500 WAL frames: each commit writes ~6 pages). */
export const CHECKPOINT_EVERY_COMMITS = 256;

/**
 * The worker's V8 heap. Its program allocates a few small objects per checkpoint (the pragma's
 * row, the reply), but an isolate with V8's defaults sizes its young generation for a busy main
 * thread: measured, each store's worker added ~14 MB of RSS with the defaults and ~12 MB with
 * these. A limit too small would end the worker with ERR_WORKER_OUT_OF_MEMORY, which the store
 * survives (checkpoints fall back to the writing connection, with a warning).
 */
const CHECKPOINT_WORKER_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 } as const;

/** How long closing waits for the worker to close its connection before going on without it. */
const CLOSE_WAIT_MS = 2_000;

/**
 * The worker's whole program. A string, not a file: it runs the same whether the store was
 * loaded from core/dist or from TypeScript sources under the test runner, and needs only the
 * SQLite driver, whose resolved path it is given.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const closed = new Int32Array(workerData.closed);
const db = new Database(workerData.file, { fileMustExist: true });
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close();
    Atomics.store(closed, 0, 1);
    Atomics.notify(closed, 0);
    parentPort.close();
    return;
  }
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ ok: true, frames: result.log, copied: result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String(error && error.message || error) });
  }
});
`;

/**
 * The SQLite driver this process loaded, for the worker to load the same: a loader hook may have
 * sent `better-sqlite3` to another copy (CI's Node 22 step loads one built for that Node's ABI),
 * which resolving the name afresh would not find.
 */
function loadedDriver(): string {
  const require = createRequire(import.meta.url);
  const loaded = Object.keys(require.cache).find((file) => /[\\/]better-sqlite3[\\/]lib[\\/]index\.js$/.test(file));
  return loaded ?? require.resolve("better-sqlite3");
}

/** What the last checkpoint did (for tests and diagnostics). */
export interface CheckpointReport {
  /** Frames the WAL held when the checkpoint ran. */
  readonly frames: number;
  /** Frames it copied back into the database. */
  readonly copied: number;
}

/**
 * Copies the WAL back into the database file on a worker thread with its own connection, so no
 * commit on the main thread pays for a checkpoint. With SQLite's automatic checkpoint, the
 * commit that crossed the threshold copied every page the WAL held and synced both files on the
 * event loop: measured under bench/delegation-scale.bench.js, ~13% of the run and most of the
 * commits slower than 3 ms. A PASSIVE checkpoint never blocks the writer or a reader and
 * changes nothing about durability: committed frames stay in the WAL until copied, and a crash
 * (kill -9) part way through leaves them there to be replayed on the next open.
 *
 * The worker starts on the first request (a store that commits little never starts one). If it
 * cannot start or fails, `onFailure` runs once, and the owner goes back to automatic
 * checkpoints on its own connection.
 */
export class WalCheckpointer {
  private worker: Worker | null = null;
  private closedFlag: Int32Array | null = null;
  private commitsSinceRequest = 0;
  private inFlight = false;
  private failed = false;
  private stopped = false;
  private lastReport: CheckpointReport | null = null;
  /** Resolved by the next checkpoint that finishes. */
  private readonly waiters = new Set<() => void>();
  /** Asked for while one was in flight: resolved by a checkpoint requested after that one. */
  private readonly laterWaiters = new Set<() => void>();

  constructor(
    private readonly file: string,
    private readonly onFailure: (error: Error) => void,
    private readonly everyCommits = CHECKPOINT_EVERY_COMMITS,
  ) {}

  /** Counts a commit; every `everyCommits` commits asks the worker for a checkpoint (one at a time). */
  noteCommit(): void {
    if (this.failed || this.stopped) return;
    this.commitsSinceRequest += 1;
    if (!this.inFlight && this.commitsSinceRequest >= this.everyCommits) this.request();
  }

  /** What the last finished checkpoint did, or null before the first. */
  get last(): CheckpointReport | null {
    return this.lastReport;
  }

  /** Whether checkpoints run on the worker (false once it failed or was closed). */
  get active(): boolean {
    return !this.failed && !this.stopped;
  }

  /** Asks for a checkpoint of every commit made so far; resolves with what it did once it finished. */
  checkpointNow(): Promise<CheckpointReport | null> {
    if (!this.active) return Promise.resolve(null);
    return new Promise((resolve) => {
      const done = () => resolve(this.lastReport);
      if (this.inFlight) this.laterWaiters.add(done);
      else {
        this.waiters.add(done);
        this.request();
      }
    });
  }

  /**
   * Closes the worker's connection before the owner closes its own, so the owner's close is the
   * last one (SQLite then checkpoints and removes the WAL). Waits for that at most CLOSE_WAIT_MS.
   */
  close(): void {
    this.stopped = true;
    const worker = this.worker;
    this.worker = null;
    if (worker === null || this.closedFlag === null) return;
    worker.postMessage("close");
    Atomics.wait(this.closedFlag, 0, 0, CLOSE_WAIT_MS);
    void worker.terminate();
    this.settleWaiters();
  }

  private request(): void {
    const worker = this.workerOrNull();
    if (worker === null) return;
    this.commitsSinceRequest = 0;
    this.inFlight = true;
    worker.postMessage("checkpoint");
  }

  private workerOrNull(): Worker | null {
    if (this.worker !== null) return this.worker;
    try {
      const closed = new SharedArrayBuffer(4);
      this.closedFlag = new Int32Array(closed);
      const driver = loadedDriver();
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { file: this.file, driver, closed },
        resourceLimits: CHECKPOINT_WORKER_LIMITS,
      });
      // The worker must never keep the process alive: the host's stop closes it, a crash ends it.
      worker.unref();
      worker.on("message", (message: { ok: boolean; frames?: number; copied?: number; error?: string }) =>
        this.onReply(message),
      );
      worker.on("error", (error) => this.fail(error));
      this.worker = worker;
      return worker;
    } catch (error) {
      this.fail(error as Error);
      return null;
    }
  }

  private onReply(message: { ok: boolean; frames?: number; copied?: number; error?: string }): void {
    this.inFlight = false;
    if (!message.ok) {
      this.fail(new Error(`WAL checkpoint failed: ${message.error ?? "unknown error"}`));
      return;
    }
    this.lastReport = { frames: message.frames ?? 0, copied: message.copied ?? 0 };
    this.settleWaiters();
    for (const waiter of this.laterWaiters) this.waiters.add(waiter);
    const wanted = this.laterWaiters.size > 0;
    this.laterWaiters.clear();
    if (this.active && (wanted || this.commitsSinceRequest >= this.everyCommits)) this.request();
  }

  private fail(error: Error): void {
    if (this.failed || this.stopped) return;
    this.failed = true;
    this.inFlight = false;
    const worker = this.worker;
    this.worker = null;
    void worker?.terminate();
    this.settleWaiters();
    this.onFailure(error);
  }

  private settleWaiters(): void {
    const waiters = [...this.waiters, ...(this.active ? [] : this.laterWaiters)];
    this.waiters.clear();
    if (!this.active) this.laterWaiters.clear();
    for (const waiter of waiters) waiter();
  }
}
