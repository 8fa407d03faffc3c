import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import type { RecordUpsert } from "../../src/store/ports.js";
import { Store } from "../../src/store/store.js";
import { AttemptsTable } from "../../src/store/tables/attempts.js";
import { DelegatedTasksTable } from "../../src/store/tables/delegated-tasks.js";
import { TurnUsageTable } from "../../src/store/tables/turn-usage.js";

const NOW = "2026-12-01T00:00:00.000Z";

function attempt(id: string, status: string, providerSessionId: string | null): RecordUpsert {
  return {
    entity: "attempt",
    record: {
      id,
      runId: "run:1",
      threadId: "thread:1",
      ordinal: 1,
      status,
      providerSessionId,
      providerTurnId: null,
      text: "hi",
      instructions: null,
      restartOfAttemptId: null,
      reason: "initial",
      createdAt: NOW,
      startedAt: null,
      endedAt: null,
      error: null,
    },
  } as unknown as RecordUpsert;
}

function task(id: string, createdAt: string, finalizedAt: string | null): RecordUpsert {
  return {
    entity: "delegatedTask",
    record: {
      id,
      parentThreadId: "thread:root",
      parentRunId: "run:root",
      childThreadId: `thread:${id}`,
      rootThreadId: "thread:root",
      status: finalizedAt === null ? "running" : "completed",
      createdAt,
      finalizedAt,
    },
  } as unknown as RecordUpsert;
}

function plan(store: Store, sql: string, ...params: unknown[]): string {
  return (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
    .map((r) => r.detail)
    .join("; ");
}

describe("attempts by provider session and unfinalized tasks by creation, as indexed columns (migration 29)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-session-columns-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("backfills both from rows an older schema wrote, and the named queries answer from them through their indexes", async () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 29),
    );
    const oldAttempt = old.prepare(
      "INSERT INTO attempts (id, run_id, thread_id, status, data) VALUES (?, 'run:1', 'thread:1', ?, ?)",
    );
    oldAttempt.run("attempt:running", "running", JSON.stringify({ providerSessionId: "ps:busy" }));
    oldAttempt.run("attempt:ended", "completed", JSON.stringify({ providerSessionId: "ps:done" }));
    oldAttempt.run("attempt:never-ran", "cancelled", JSON.stringify({ providerSessionId: null }));
    const oldTask = old.prepare(
      "INSERT INTO delegated_tasks (id, parent_thread_id, parent_run_id, child_thread_id, root_thread_id, status, data, finalized) VALUES (?, 'p', 'r', ?, 'thread:root', ?, ?, ?)",
    );
    oldTask.run("task:old-done", "c1", "completed", JSON.stringify({ createdAt: "2026-11-01T00:00:00.000Z" }), 1);
    oldTask.run("task:open", "c2", "running", JSON.stringify({ createdAt: "2026-11-20T00:00:00.000Z" }), 0);
    oldTask.run("task:newer", "c3", "running", JSON.stringify({ createdAt: "2026-11-25T00:00:00.000Z" }), 0);
    old.close();

    const store = new Store(file);
    try {
      expect(store.db.prepare("SELECT id, provider_session_id FROM attempts ORDER BY id").all()).toEqual([
        { id: "attempt:ended", provider_session_id: "ps:done" },
        { id: "attempt:never-ran", provider_session_id: null },
        { id: "attempt:running", provider_session_id: "ps:busy" },
      ]);
      const attempts = new AttemptsTable(store);
      expect(await attempts.hasRunningTurn("ps:busy")).toBe(true);
      expect(await attempts.hasRunningTurn("ps:done")).toBe(false);
      // The finalized task is older, but only unfinalized ones start a root's wall clock.
      expect(await new DelegatedTasksTable(store).oldestUnfinalizedCreatedAt("thread:root")).toBe(
        "2026-11-20T00:00:00.000Z",
      );
      expect(await new DelegatedTasksTable(store).rootsWithUnfinalizedTasks()).toEqual(["thread:root"]);
      // The ended turn with a provider session counts; the one cancelled before it ran does not.
      expect(await new TurnUsageTable(store).attemptCounts({ kind: "thread", threadId: "thread:1" })).toEqual({
        ended: 1,
        in_flight: 1,
      });
      expect(
        plan(
          store,
          "SELECT 1 FROM attempts WHERE status IN ('starting', 'running') AND provider_session_id = ? LIMIT 1",
          "ps:busy",
        ),
      ).toMatch(/USING (COVERING )?INDEX attempts_running_session/);
      expect(
        plan(
          store,
          "SELECT MIN(created_at) AS started FROM delegated_tasks WHERE root_thread_id = ? AND finalized = 0",
          "thread:root",
        ),
      ).toMatch(/USING COVERING INDEX delegated_tasks_unfinalized/);
    } finally {
      store.close();
    }
  });

  it("writes both columns from every upsert on a store made from empty", async () => {
    const store = new Store(join(dir, "switchyard.db"));
    try {
      const attempts = new AttemptsTable(store);
      const tasks = new DelegatedTasksTable(store);
      store.transaction(() =>
        store.append(
          null,
          [
            attempt("attempt:1", "starting", null),
            task("task:a", "2026-11-30T00:00:00.000Z", null),
            task("task:b", "2026-11-29T00:00:00.000Z", null),
          ],
          NOW,
        ),
      );
      expect(await attempts.hasRunningTurn("ps:1")).toBe(false);
      expect(await tasks.oldestUnfinalizedCreatedAt("thread:root")).toBe("2026-11-29T00:00:00.000Z");

      // The session is known once the turn runs; the older task's result is published.
      store.transaction(() =>
        store.append(
          null,
          [attempt("attempt:1", "running", "ps:1"), task("task:b", "2026-11-29T00:00:00.000Z", NOW)],
          NOW,
        ),
      );
      expect(await attempts.hasRunningTurn("ps:1")).toBe(true);
      expect(await tasks.oldestUnfinalizedCreatedAt("thread:root")).toBe("2026-11-30T00:00:00.000Z");

      store.transaction(() =>
        store.append(
          null,
          [attempt("attempt:1", "completed", "ps:1"), task("task:a", "2026-11-30T00:00:00.000Z", NOW)],
          NOW,
        ),
      );
      expect(await attempts.hasRunningTurn("ps:1")).toBe(false);
      expect(await tasks.oldestUnfinalizedCreatedAt("thread:root")).toBeNull();
      expect(store.db.prepare("SELECT provider_session_id FROM attempts").pluck().all()).toEqual(["ps:1"]);

      // Rebuilt from the log, the columns read the same.
      store.rebuildProjections();
      expect(store.db.prepare("SELECT id, created_at FROM delegated_tasks ORDER BY id").all()).toEqual([
        { id: "task:a", created_at: "2026-11-30T00:00:00.000Z" },
        { id: "task:b", created_at: "2026-11-29T00:00:00.000Z" },
      ]);
    } finally {
      store.close();
    }
  });
});
