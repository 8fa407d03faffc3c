import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import { Store } from "../../src/store/store.js";
import { ReachForeignTasksTable } from "../../src/store/tables/reach-foreign-tasks.js";
import { ReachRemoteTasksTable } from "../../src/store/tables/reach-remote-tasks.js";

/** The reads these columns replaced, verbatim: on rows the old schema wrote, old and new must agree. */
const before = {
  unreceivedOfRun: (db: Database.Database, runId: string) =>
    (
      db
        .prepare(
          "SELECT COUNT(*) AS n FROM reach_remote_tasks WHERE received_at IS NULL AND json_extract(data, '$.parentRunId') = ?",
        )
        .get(runId) as { n: number }
    ).n,
  ofTree: (db: Database.Database, rootThreadId: string) =>
    (
      db
        .prepare(
          "SELECT COUNT(*) AS n FROM reach_remote_tasks r JOIN threads t ON t.id = r.parent_thread_id WHERE json_extract(t.data, '$.lineage.rootThreadId') = ?",
        )
        .get(rootThreadId) as { n: number }
    ).n,
  linkOfEnvironment: (db: Database.Database, environmentId: string) =>
    (
      db
        .prepare("SELECT link_name FROM reach_remote_tasks WHERE json_extract(data, '$.environmentId') = ? LIMIT 1")
        .get(environmentId) as { link_name: string } | undefined
    )?.link_name ?? null,
  // The delegated-to side read every foreign task and filtered their parents in JS.
  foreignParents: (db: Database.Database) =>
    (
      db.prepare("SELECT data, finished_at FROM reach_foreign_tasks").all() as {
        data: string;
        finished_at: number | null;
      }[]
    ).map((row) => ({
      parent: (JSON.parse(row.data) as { parent: { environmentId: string; runId: string; rootThreadId: string } })
        .parent,
      finished: row.finished_at !== null,
    })),
};

const plan = (db: Database.Database, sql: string, ...params: unknown[]) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail).join("; ");

/** The named queries' plans: each reads an index of the rows it is about, never the whole table. */
function expectIndexedPlans(db: Database.Database): void {
  expect(
    plan(db, "SELECT COUNT(*) AS n FROM reach_remote_tasks WHERE parent_run_id = ? AND received_at IS NULL", "r"),
  ).toMatch(/USING (COVERING )?INDEX reach_remote_tasks_unreceived_run/);
  expect(plan(db, "SELECT COUNT(*) AS n FROM reach_remote_tasks WHERE root_thread_id = ?", "root")).toMatch(
    /USING COVERING INDEX reach_remote_tasks_tree/,
  );
  expect(plan(db, "SELECT link_name FROM reach_remote_tasks WHERE environment_id = ? LIMIT 1", "env")).toMatch(
    /USING INDEX reach_remote_tasks_environment/,
  );
  expect(
    plan(
      db,
      "SELECT COUNT(*) AS n FROM reach_foreign_tasks WHERE parent_environment_id = ? AND parent_run_id = ? AND finished_at IS NULL",
      "env",
      "run",
    ),
  ).toMatch(/USING (COVERING )?INDEX reach_foreign_tasks_unfinished_parent_run/);
  expect(
    plan(
      db,
      "SELECT COUNT(*) AS n FROM reach_foreign_tasks WHERE parent_environment_id = ? AND parent_root_thread_id = ?",
      "env",
      "root",
    ),
  ).toMatch(/USING COVERING INDEX reach_foreign_tasks_parent_tree/);
}

describe("reach tasks' filtered fields as indexed columns (migration 30)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-reach-columns-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("backfills them on a database of the previous version, where the named queries agree with the reads they replace", async () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 30),
    );
    const thread = old.prepare(
      "INSERT INTO threads (id, project_id, parent_thread_id, relationship, provider_instance_id, title, deleted, created_at, updated_at, data) VALUES (?, 'p', NULL, 'root', 'alpha', 't', 0, '', '', ?)",
    );
    thread.run("root-1", JSON.stringify({ id: "root-1", lineage: { rootThreadId: "root-1" } }));
    thread.run("child-1", JSON.stringify({ id: "child-1", lineage: { rootThreadId: "root-1" } }));
    thread.run("root-2", JSON.stringify({ id: "root-2", lineage: { rootThreadId: "root-2" } }));
    const remote = old.prepare(
      "INSERT INTO reach_remote_tasks (link_name, remote_task_id, parent_thread_id, data, created_at, received_at, delivered_at) VALUES (?, ?, ?, ?, ?, ?, NULL)",
    );
    const remoteData = (environmentId: string, parentRunId: string) =>
      JSON.stringify({ environmentId, parentRunId, childThreadId: "c", delivery: "pending", status: null });
    remote.run("mac", "task:1", "root-1", remoteData("env_mac", "run-a"), 1, null);
    remote.run("mac", "task:2", "root-1", remoteData("env_mac", "run-a"), 2, 5);
    remote.run("pi", "task:3", "child-1", remoteData("env_pi", "run-b"), 3, null);
    remote.run("pi", "task:4", "root-2", remoteData("env_pi", "run-c"), 4, null);
    // A parent thread no longer here: the old join counted it in no tree.
    remote.run("pi", "task:5", "gone", remoteData("env_pi", "run-a"), 5, null);
    const foreign = old.prepare(
      "INSERT INTO reach_foreign_tasks (task_id, grant_id, child_thread_id, child_run_id, data, result, created_at, finished_at, acked_at) VALUES (?, 'grant', ?, ?, ?, NULL, 1, ?, NULL)",
    );
    const foreignData = (environmentId: string, runId: string, rootThreadId: string) =>
      JSON.stringify({ parent: { environmentId, threadId: "t", runId, rootThreadId, depth: 1, maxDepth: 3 } });
    foreign.run("f:1", "c1", "r1", foreignData("env_a", "run-a", "root-a"), null);
    foreign.run("f:2", "c2", "r2", foreignData("env_a", "run-a", "root-a"), 9);
    foreign.run("f:3", "c3", "r3", foreignData("env_a", "run-b", "root-a"), null);
    // Another environment's run and tree of the same ids: a budget of its own.
    foreign.run("f:4", "c4", "r4", foreignData("env_b", "run-a", "root-a"), null);
    old.close();

    const store = new Store(file);
    try {
      expect(
        store.db
          .prepare(
            "SELECT remote_task_id, environment_id, parent_run_id, root_thread_id FROM reach_remote_tasks ORDER BY remote_task_id",
          )
          .all(),
      ).toEqual([
        { remote_task_id: "task:1", environment_id: "env_mac", parent_run_id: "run-a", root_thread_id: "root-1" },
        { remote_task_id: "task:2", environment_id: "env_mac", parent_run_id: "run-a", root_thread_id: "root-1" },
        { remote_task_id: "task:3", environment_id: "env_pi", parent_run_id: "run-b", root_thread_id: "root-1" },
        { remote_task_id: "task:4", environment_id: "env_pi", parent_run_id: "run-c", root_thread_id: "root-2" },
        { remote_task_id: "task:5", environment_id: "env_pi", parent_run_id: "run-a", root_thread_id: null },
      ]);
      const remoteTasks = new ReachRemoteTasksTable(store);
      for (const runId of ["run-a", "run-b", "run-c", "run-z"])
        expect(await remoteTasks.countUnreceivedOfRun(runId), runId).toBe(before.unreceivedOfRun(store.db, runId));
      for (const rootThreadId of ["root-1", "root-2", "child-1", "gone"])
        expect(await remoteTasks.countOfTree(rootThreadId), rootThreadId).toBe(before.ofTree(store.db, rootThreadId));
      for (const environmentId of ["env_mac", "env_pi", "env_none"])
        expect(await remoteTasks.linkOfEnvironment(environmentId), environmentId).toBe(
          before.linkOfEnvironment(store.db, environmentId),
        );
      expect(await remoteTasks.countUnreceivedOfRun("run-a")).toBe(2);
      expect(await remoteTasks.countOfTree("root-1")).toBe(3);

      const foreignTasks = new ReachForeignTasksTable(store);
      const parents = before.foreignParents(store.db);
      for (const [environmentId, runId, rootThreadId] of [
        ["env_a", "run-a", "root-a"],
        ["env_a", "run-b", "root-a"],
        ["env_b", "run-a", "root-a"],
        ["env_c", "run-a", "root-a"],
      ] as const) {
        const running = parents.filter(
          (entry) => !entry.finished && entry.parent.environmentId === environmentId && entry.parent.runId === runId,
        ).length;
        const total = parents.filter(
          (entry) => entry.parent.environmentId === environmentId && entry.parent.rootThreadId === rootThreadId,
        ).length;
        expect(await foreignTasks.countUnfinishedOfParentRun(environmentId, runId), `${environmentId} ${runId}`).toBe(
          running,
        );
        expect(await foreignTasks.countOfParentTree(environmentId, rootThreadId), environmentId).toBe(total);
      }
      expect(await foreignTasks.countOfParentTree("env_a", "root-a")).toBe(3);
      expectIndexedPlans(store.db);
    } finally {
      store.close();
    }
  });

  it("has them from empty, written with the JSON they come from by every insert and update", async () => {
    const store = new Store(join(dir, "switchyard.db"));
    try {
      const remoteTasks = new ReachRemoteTasksTable(store);
      const key = { linkName: "mac", remoteTaskId: "task:1" };
      await remoteTasks.insert(
        { ...key, parentThreadId: "parent", rootThreadId: "root", createdAt: 1 },
        { environmentId: "env_mac", parentRunId: "run-a", title: "kept in the JSON" },
      );
      expect(await remoteTasks.countUnreceivedOfRun("run-a")).toBe(1);
      expect(await remoteTasks.countOfTree("root")).toBe(1);
      expect(await remoteTasks.linkOfEnvironment("env_mac")).toBe("mac");
      // The other side's own id learned later: the column follows the JSON.
      await remoteTasks.update(
        key,
        { environmentId: "env_mac_own", parentRunId: "run-a" },
        { receivedAt: 7, deliveredAt: null },
      );
      expect(await remoteTasks.linkOfEnvironment("env_mac")).toBeNull();
      expect(await remoteTasks.linkOfEnvironment("env_mac_own")).toBe("mac");
      expect(await remoteTasks.countUnreceivedOfRun("run-a")).toBe(0);
      expect(JSON.parse((await remoteTasks.byKey("mac", "task:1"))!.data)).toEqual({
        environmentId: "env_mac_own",
        parentRunId: "run-a",
      });

      const foreignTasks = new ReachForeignTasksTable(store);
      const parent = { environmentId: "env_a", threadId: "t", runId: "run-a", rootThreadId: "root-a" };
      await foreignTasks.insert(
        { taskId: "f:1", grantId: "grant", childThreadId: "c", childRunId: "r", createdAt: 1 },
        { parent, cancelRequestedAt: null },
      );
      expect(await foreignTasks.countUnfinishedOfParentRun("env_a", "run-a")).toBe(1);
      expect(await foreignTasks.countOfParentTree("env_a", "root-a")).toBe(1);
      await foreignTasks.updateData("f:1", { parent: { ...parent, runId: "run-b" }, cancelRequestedAt: "now" });
      expect(await foreignTasks.countUnfinishedOfParentRun("env_a", "run-a")).toBe(0);
      expect(await foreignTasks.countUnfinishedOfParentRun("env_a", "run-b")).toBe(1);
      await foreignTasks.finish("f:1", { taskId: "f:1", status: "completed" }, 3);
      expect(await foreignTasks.countUnfinishedOfParentRun("env_a", "run-b")).toBe(0);
      expect(await foreignTasks.countOfParentTree("env_a", "root-a")).toBe(1);
      expect((await foreignTasks.unacknowledged("grant", 10)).map((row) => row.task_id)).toEqual(["f:1"]);
      expectIndexedPlans(store.db);
    } finally {
      store.close();
    }
  });
});
