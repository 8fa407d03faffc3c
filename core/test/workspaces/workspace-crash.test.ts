import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR, releaseGate } from "@switchyard/testkit/scripted-provider";
import { acpAgentInstance, GROK_PLUGIN_DIR } from "../support/acp-agent-instance.js";
import { runCli } from "../support/cli.js";
import { EngineChild } from "../support/engine-child.js";
import { untilGatesReached } from "../support/gates.js";
import { holdMainRefUpdates, makeGitRepo, type GitRepo } from "../support/git-repo.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { until } from "../support/until.js";

type Outcome = { action: string; outcome: string; requestId: string };
type WorkspaceRow = {
  status: string;
  path: string;
  applying: unknown;
  outcomes: Outcome[];
  changes: { fileCount: number } | null;
};

/** A workspace record as the database holds it now. */
function workspaceRow(home: string, threadId: string): WorkspaceRow {
  const db = new Database(join(home, "switchyard.db"), { readonly: true });
  try {
    return JSON.parse(
      (db.prepare("SELECT data FROM workspaces WHERE thread_id = ?").get(threadId) as { data: string }).data,
    ) as WorkspaceRow;
  } finally {
    db.close();
  }
}

/** How many upserts of the workspace recorded a new `applied` outcome, from the event log. */
function appliedEvents(home: string, threadId: string): number {
  const db = new Database(join(home, "switchyard.db"), { readonly: true });
  try {
    const rows = db
      .prepare("SELECT data FROM events WHERE entity = 'workspace' AND entity_id = ? ORDER BY sequence")
      .all(`workspace:${threadId}`) as { data: string }[];
    let seen = 0;
    let count = 0;
    for (const row of rows) {
      const outcomes = (JSON.parse(row.data) as WorkspaceRow).outcomes;
      const applied = outcomes.filter((entry) => entry.outcome === "applied").length;
      if (applied > seen) count += applied - seen;
      seen = applied;
    }
    return count;
  } finally {
    db.close();
  }
}

// A Switchyard in its own process, killed with SIGKILL at the worst moments of a workspace's
// life, and started again on the same home.
describe("workspaces across kill -9", () => {
  const dirs: string[] = [];
  const repos: GitRepo[] = [];
  const clients: Client[] = [];
  let child: EngineChild | null = null;
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await child?.stop();
    child = null;
    for (const repo of repos.splice(0)) repo.cleanup();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function setup() {
    const root = mkdtempSync(join(tmpdir(), "switchyard-ws-crash-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const repo = makeGitRepo({ "shared.txt": "base\n" });
    repos.push(repo);
    const config = {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, GROK_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: { gateDir, stateDir: join(root, "state") } },
        acpAgentInstance("acp", { home, gateDir }),
      ],
    };
    return { root, home, gateDir, repo, config };
  }

  /** A parent held in a live turn, its agent's MCP client, and a delegated child in a worktree. */
  async function parentWithChild(engine: EngineChild, mcpUrl: string, repo: GitRepo, gateDir: string, task: string) {
    const projectId = await engine.call<string>("project", { path: repo.path });
    const parent = await engine.call<string>("thread", {
      projectId,
      instance: "alpha",
      runtimeMode: "full-access",
      prompt: "@@gate parent-hold @@reply parent done",
    });
    await untilGatesReached(gateDir, ["parent-hold"]);
    const grants = await engine.call<{ threadId: string; token: string }[]>("grants");
    const agent = await connectMcp(mcpUrl, grants.find((grant) => grant.threadId === parent)!.token);
    clients.push(agent);
    const delegated = await mustCall<{ childThreadId: string }>(agent, "delegate_task", {
      task,
      target: { providerInstanceId: "acp" },
      workspace: "worktree",
      clientRequestId: "crash-child",
    });
    return { parent, agent, childThreadId: delegated.childThreadId };
  }

  it("an apply killed after the parent's tree changed but before its branch moved is finished, once, after the restart", async () => {
    const { root, home, gateDir, repo, config } = setup();
    const hook = {
      armed: join(root, "hook-armed"),
      reached: join(root, "hook-reached"),
      release: join(root, "hook-release"),
    };
    holdMainRefUpdates(repo, hook);
    child = EngineChild.start(home, config);
    const { mcpUrl } = await child.ready;
    const start = repo.head();
    const { childThreadId } = await parentWithChild(
      child,
      mcpUrl,
      repo,
      gateDir,
      "@write shared.txt from the child\n@say done",
    );
    await child.call("wait", { threadId: childThreadId, timeoutMs: 60_000 });

    const token = await child.call<string>("clientToken");
    const client = await connectMcp(mcpUrl, token);
    clients.push(client);
    writeFileSync(hook.armed, "");
    const cut = callTool(client, "apply_changes", {
      threadId: childThreadId,
      clientRequestId: "crash-apply",
      timeoutMs: 60_000,
    }).catch((error: Error) => error);
    await until("the apply to reach the parent's branch update", () => existsSync(hook.reached), {
      attempts: 1_200,
      intervalMs: 25,
    });
    await child.kill9();
    child = null;
    // The machine went down with it: the git process in the middle of moving the branch too.
    process.kill(Number(readFileSync(hook.reached, "utf8").trim()), "SIGKILL");
    await until(
      "git to give up the ref lock",
      () => !existsSync(join(repo.path, ".git", "refs", "heads", "main.lock")),
      { attempts: 400 },
    );
    await cut;

    // Half-way: the parent's files are the child's, its branch is not.
    expect(repo.head()).toBe(start);
    expect(repo.read("shared.txt")).toBe("from the child");
    expect(repo.status()).not.toBe("");
    expect(workspaceRow(home, childThreadId).applying).not.toBeNull();

    child = EngineChild.start(home, config);
    const { mcpUrl: again } = await child.ready;
    await child.call("waitFor", {
      sql: "SELECT 1 FROM workspaces WHERE thread_id = ? AND json_extract(data, '$.applying') IS NULL",
      params: [childThreadId],
      timeoutMs: 30_000,
    });

    // Whole: the branch moved to the child's work, the tree matches it, nothing is left over.
    const row = workspaceRow(home, childThreadId);
    expect(row.outcomes.map((entry) => `${entry.action}:${entry.outcome}`)).toEqual(["apply:applied"]);
    expect(repo.read("shared.txt")).toBe("from the child");
    expect(repo.status()).toBe("");
    expect(repo.git("log", "--format=%s", `${start}..HEAD`).split("\n")).toHaveLength(1);
    // The retried call answers the same outcome; a new one finds nothing to apply: applied once.
    const client2 = await connectMcp(again, token);
    clients.push(client2);
    expect(
      await mustCall(client2, "apply_changes", { threadId: childThreadId, clientRequestId: "crash-apply" }),
    ).toMatchObject({ replayed: true, outcome: { outcome: "applied" } });
    expect(await mustCall(client2, "apply_changes", { threadId: childThreadId })).toMatchObject({
      outcome: { outcome: "nothing_to_apply" },
    });
    expect(appliedEvents(home, childThreadId)).toBe(1);
    expect(repo.git("log", "--format=%s", `${start}..HEAD`).split("\n")).toHaveLength(1);
  }, 240_000);

  it("a child's worktree outlives a crash of its server: kept, listed, its work committed; nothing is orphaned", async () => {
    const { home, gateDir, repo, config } = setup();
    child = EngineChild.start(home, config);
    const { mcpUrl } = await child.ready;
    const { childThreadId } = await parentWithChild(
      child,
      mcpUrl,
      repo,
      gateDir,
      "@write half.txt written before the crash\n@gate child-hold\n@say never said",
    );
    const path = workspaceRow(home, childThreadId).path;
    // The agent writes, then waits at its gate. The file exists before its text is in it (a
    // write is not atomic): wait for the text, not the name (CI's Node 22 step read it empty).
    const half = join(path, "half.txt");
    await until(
      "the child to write into its worktree",
      () => existsSync(half) && readFileSync(half, "utf8") === "written before the crash",
      { attempts: 2_400, intervalMs: 25 },
    );

    await child.kill9();
    child = EngineChild.start(home, config);
    await child.ready;
    releaseGate(gateDir, "child-hold");
    await child.call("waitFor", {
      sql: "SELECT 1 FROM runs WHERE thread_id = ? AND status IN ('completed', 'failed', 'interrupted', 'cancelled') AND ordinal = 1",
      params: [childThreadId],
      timeoutMs: 60_000,
    });
    await child.call("drain");
    await child.call("waitFor", {
      sql: "SELECT 1 FROM workspaces WHERE thread_id = ? AND json_extract(data, '$.changes.fileCount') = 1",
      params: [childThreadId],
      timeoutMs: 30_000,
    });

    const row = workspaceRow(home, childThreadId);
    expect(row.status).toBe("ready");
    expect(repo.gitIn(path, "log", "-1", "--format=%s")).not.toBe("initial");
    expect(repo.status(path)).toBe("");
    expect(repo.read("shared.txt")).toBe("base\n");
    await child.stop();
    child = null;
    const listed = await runCli(["worktrees", "list", "--json", "--home", home]);
    expect(listed.code, listed.stderr).toBe(0);
    const report = JSON.parse(listed.stdout) as {
      workspaces: { threadId: string; path: string; hasChanges: boolean }[];
      orphans: string[];
    };
    expect(report.workspaces).toMatchObject([{ threadId: childThreadId, path, hasChanges: true }]);
    expect(report.orphans).toEqual([]);
  }, 240_000);
});
