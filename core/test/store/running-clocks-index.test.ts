import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import { Store } from "../../src/store/store.js";

describe("unfinalized tasks and wall-clock budgets as indexed columns (migration 19)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-running-clocks-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("backfills both from an older database, and the wall-clock timer's reads touch only the rows that matter", () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 19),
    );
    const task = old.prepare(
      "INSERT INTO delegated_tasks (id, parent_thread_id, parent_run_id, child_thread_id, root_thread_id, status, data) VALUES (?, 'p', 'r', ?, 'root', ?, ?)",
    );
    task.run("task:open", "child:open", "running", JSON.stringify({ id: "task:open", finalizedAt: null }));
    task.run(
      "task:done",
      "child:done",
      "completed",
      JSON.stringify({ id: "task:done", finalizedAt: "2026-12-01T00:00:00.000Z" }),
    );
    const budget = old.prepare(
      "INSERT INTO budgets (id, scope, thread_id, task_id, root_thread_id, data) VALUES (?, ?, 't', ?, 'root', ?)",
    );
    budget.run(
      "budget:task:task:open",
      "delegated_task",
      "task:open",
      JSON.stringify({ limits: { tokens: null, costUsd: null, wallClockMs: 60_000 } }),
    );
    budget.run(
      "budget:task:task:done",
      "delegated_task",
      "task:done",
      JSON.stringify({ limits: { tokens: 10, costUsd: null, wallClockMs: null } }),
    );
    old.close();

    const store = new Store(file);
    try {
      expect(store.db.prepare("SELECT id, finalized FROM delegated_tasks ORDER BY id").all()).toEqual([
        { id: "task:done", finalized: 1 },
        { id: "task:open", finalized: 0 },
      ]);
      expect(store.db.prepare("SELECT id, wall_clock_ms FROM budgets ORDER BY id").all()).toEqual([
        { id: "budget:task:task:done", wall_clock_ms: null },
        { id: "budget:task:task:open", wall_clock_ms: 60_000 },
      ]);
      const plan = (sql: string) =>
        (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
          .map((row) => row.detail)
          .join("; ");
      // tree-budgets.ts, on every re-arm of the wall-clock timer:
      expect(plan("SELECT DISTINCT root_thread_id FROM delegated_tasks WHERE finalized = 0")).toMatch(
        /USING COVERING INDEX delegated_tasks_unfinalized/,
      );
      expect(
        plan(
          "SELECT b.task_id FROM budgets b JOIN delegated_tasks t ON t.id = b.task_id WHERE b.scope = 'delegated_task' AND b.wall_clock_ms IS NOT NULL AND t.finalized = 0",
        ),
      ).toMatch(/USING (COVERING )?INDEX budgets_task_wall_clock/);
    } finally {
      store.close();
    }
  });
});
