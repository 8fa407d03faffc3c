import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { releaseGate, SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { EngineChild } from "../support/engine-child.js";
import { untilGatesReached } from "../support/gates.js";

interface Totals {
  /** Running totals per budget scope, as the host keeps them. */
  readonly running: Map<string, { tokens: number; cost: number }>;
  /** The same scopes summed over the turns' usage records. */
  readonly summed: Map<string, number>;
  readonly usageRecords: number;
}

/** Reads the running totals and sums the records they must equal, straight from the database. */
function readTotals(dbFile: string, rootThreadId: string, taskId: string, childThreadId: string): Totals {
  const db = new Database(dbFile, { readonly: true });
  try {
    const running = new Map(
      (
        db.prepare("SELECT scope_id, tokens, cost_usd FROM budget_totals").all() as {
          scope_id: string;
          tokens: number;
          cost_usd: number;
        }[]
      ).map((row) => [row.scope_id, { tokens: row.tokens, cost: row.cost_usd }]),
    );
    const root = db
      .prepare("SELECT COALESCE(SUM(total_tokens), 0) AS n FROM turn_usage WHERE root_thread_id = ?")
      .get(rootThreadId) as { n: number };
    const task = db
      .prepare(
        "WITH RECURSIVE tree(id) AS (SELECT ? UNION ALL SELECT t.id FROM threads t JOIN tree ON t.parent_thread_id = tree.id) SELECT COALESCE(SUM(total_tokens), 0) AS n FROM turn_usage WHERE thread_id IN (SELECT id FROM tree)",
      )
      .get(childThreadId) as { n: number };
    const records = db.prepare("SELECT COUNT(*) AS n FROM turn_usage WHERE root_thread_id = ?").get(rootThreadId) as {
      n: number;
    };
    return {
      running,
      summed: new Map([
        [`budget:root:${rootThreadId}`, root.n],
        [`budget:task:${taskId}`, task.n],
      ]),
      usageRecords: records.n,
    };
  } finally {
    db.close();
  }
}

/**
 * Budget checks read running totals per budget scope, kept in the transaction that records
 * each turn's usage. A host killed with SIGKILL (while a budgeted child's turn runs, and again
 * right after a turn's usage was recorded) and restarted neither loses a turn nor counts one
 * twice: every total equals the sum of its tree's records, and the budget stops the child at
 * exactly what it used.
 */
describe("running usage totals across a kill -9", () => {
  const dirs: string[] = [];
  let child: EngineChild | null = null;
  afterEach(async () => {
    await child?.stop();
    child = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("keeps each budget scope's total equal to its tree's records through two crashes, and stops the child at its limit with the right count", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-totals-crash-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-totals-crash-ws-"));
    dirs.push(root, workspace);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const stateDir = join(root, "state");
    const config = {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: { gateDir, stateDir } }],
      budgets: { rootThread: { tokens: 100_000 } },
    };
    const dbFile = join(home, "switchyard.db");

    child = EngineChild.start(home, config);
    await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    const thread = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      runtimeMode: "full-access",
      prompt: "@@usage in=100 out=10 @@reply first",
    });
    expect(
      (await child.call<{ run: { status: string } }>("wait", { threadId: thread, timeoutMs: 15_000 })).run.status,
    ).toBe("completed");
    // A child with a 200-token budget whose turn (220 tokens) is live at its gate when the host dies.
    const delegation = {
      task: "@@usage in=200 out=20 @@gate totals-child @@reply child done",
      title: "budgeted child",
      mode: "async",
      budget: { tokens: 200 },
      clientRequestId: "totals-child",
    };
    const send = await child.call<{ runId: string }>("send", {
      threadId: thread,
      text: `@@usage in=50 out=5 @@tool delegate_task ${JSON.stringify(delegation)} @@reply delegated`,
      mode: "auto",
    });
    expect(
      (
        await child.call<{ run: { status: string } }>("wait", {
          threadId: thread,
          runId: send.runId,
          timeoutMs: 15_000,
        })
      ).run.status,
    ).toBe("completed");
    await child.call("waitFor", {
      sql: "SELECT 1 FROM attempts WHERE thread_id LIKE 'thread:delegated-task:%' AND status = 'running'",
      params: [],
      timeoutMs: 15_000,
    });
    await untilGatesReached(gateDir, ["totals-child"]);
    await child.kill9();

    child = EngineChild.start(home, config);
    expect((await child.ready).report.continuedRuns).toHaveLength(1);
    releaseGate(gateDir, "totals-child");
    // The child's turn ends with its 220 tokens recorded; the host dies again right after.
    await child.call("waitFor", {
      sql: "SELECT 1 FROM turn_usage WHERE thread_id LIKE 'thread:delegated-task:%'",
      params: [],
      timeoutMs: 15_000,
    });
    await child.kill9();

    child = EngineChild.start(home, config);
    await child.ready;
    await child.call("waitFor", {
      sql: "SELECT 1 FROM delegated_tasks WHERE json_extract(data, '$.finalizedAt') IS NOT NULL",
      params: [],
      timeoutMs: 15_000,
    });
    await child.call("drain");
    await child.stop();
    child = null;

    const db = new Database(dbFile, { readonly: true });
    const task = JSON.parse((db.prepare("SELECT data FROM delegated_tasks").get() as { data: string }).data) as {
      id: string;
      childThreadId: string;
      status: string;
      cancelReason: string | null;
    };
    const budget = JSON.parse(
      (db.prepare("SELECT data FROM budgets WHERE id = ?").get(`budget:task:${task.id}`) as { data: string }).data,
    ) as { exceeded: { used: number; allowed: number } | null };
    db.close();
    // The budget saw the child's one turn, once: 220 of 200.
    expect(task).toMatchObject({ status: "completed", cancelReason: "budget_exceeded:tokens" });
    expect(budget.exceeded).toMatchObject({ limit: "tokens", used: 220, allowed: 200 });
    const totals = readTotals(dbFile, thread, task.id, task.childThreadId);
    expect(totals.usageRecords).toBe(3);
    expect(totals.summed).toEqual(
      new Map([
        [`budget:root:${thread}`, 110 + 55 + 220],
        [`budget:task:${task.id}`, 220],
      ]),
    );
    for (const [scopeId, sum] of totals.summed) expect(totals.running.get(scopeId)?.tokens, scopeId).toBe(sum);
  }, 120_000);
});
