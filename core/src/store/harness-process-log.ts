import { type EventStore, type HarnessProcessLedger, StoreToken } from "./ports.js";
import { type SqliteEventStore, sqliteStoreOf } from "./sqlite-only.js";
import { processStartTime } from "../util/process-start-time.js";
import { inject, injectable } from "tsyringe";

/**
 * Records harness pids in the database while they run, so a host restarted after a crash can
 * stop the process groups its predecessor left behind.
 */
@injectable()
export class HarnessProcessLog implements HarnessProcessLedger {
  private readonly store: SqliteEventStore;

  // A synchronous ledger (a harness starts and exits outside any await): SQLite's for now.
  constructor(@inject(StoreToken) store: EventStore) {
    this.store = sqliteStoreOf(store, "synchronous harness process log");
  }

  started(pid: number, label: string): void {
    const startedAt = new Date().toISOString();
    const procStart = processStartTime(pid);
    this.write(`recording harness ${pid}`, () =>
      this.store
        .statement(
          "INSERT OR REPLACE INTO harness_processes (pid, label, host_pid, proc_start, started_at) VALUES (?, ?, ?, ?, ?)",
        )
        .run(pid, label, process.pid, procStart, startedAt),
    );
  }

  exited(pid: number): void {
    if (!this.store.isOpen()) return;
    this.write(`forgetting harness ${pid}`, () => {
      if (this.store.isOpen()) this.store.statement("DELETE FROM harness_processes WHERE pid = ?").run(pid);
    });
  }

  /**
   * Now when the store is free, else once the command under way commits (a harness starts and
   * exits while commands run, and a write then would join their transaction).
   */
  private write(what: string, write: () => void): void {
    this.store.writeAsync(write).catch((error: unknown) => {
      process.emitWarning(`${what} failed: ${(error as Error).message}`, { code: "SWITCHYARD_HARNESS_PROCESS_LOG" });
    });
  }

  /** Processes recorded by hosts that are no longer running. */
  leftovers(): { pid: number; procStart: string | null }[] {
    const rows = this.store.statement("SELECT pid, host_pid, proc_start FROM harness_processes").all() as {
      pid: number;
      host_pid: number;
      proc_start: string | null;
    }[];
    return rows
      .filter((row) => row.host_pid !== process.pid && !hostAlive(row.host_pid))
      .map((row) => ({ pid: row.pid, procStart: row.proc_start }));
  }

  /** Forgets processes of hosts that are gone. */
  forgetLeftovers(pids: readonly number[]): void {
    const remove = this.store.statement("DELETE FROM harness_processes WHERE pid = ?");
    for (const pid of pids) remove.run(pid);
  }
}

function hostAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
