import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../../src/store/ports.js";
import { AttemptsTable } from "../../../src/store/tables/attempts.js";
import { BudgetsTable } from "../../../src/store/tables/budgets.js";
import { DelegatedTasksTable } from "../../../src/store/tables/delegated-tasks.js";
import { ItemsTable } from "../../../src/store/tables/items.js";
import { NativeSubagentItemsTable } from "../../../src/store/tables/native-subagent-items.js";
import { type CredentialKind, McpCredentialsTable } from "../../../src/store/tables/mcp-credentials.js";
import { ProviderSessionsTable } from "../../../src/store/tables/provider-sessions.js";
import { ReachAuditTable } from "../../../src/store/tables/reach-audit.js";
import { ReachForeignTasksTable } from "../../../src/store/tables/reach-foreign-tasks.js";
import { ReachGrantsTable } from "../../../src/store/tables/reach-grants.js";
import { ReachLinksTable } from "../../../src/store/tables/reach-links.js";
import { ReachRemoteTasksTable } from "../../../src/store/tables/reach-remote-tasks.js";
import { RunsTable } from "../../../src/store/tables/runs.js";
import { ScheduledTriggersTable } from "../../../src/store/tables/scheduled-triggers.js";
import { ThreadsTable } from "../../../src/store/tables/threads.js";
import { TurnUsageTable } from "../../../src/store/tables/turn-usage.js";
import { WebSessionsTable } from "../../../src/store/tables/web-sessions.js";
import { backends } from "./backends.js";
import { attempt, item, project, thread, trigger } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

// Issue 33/34: the table modules (core/src/store/tables) are the named queries a backend
// implements, through `TableSql`. Each one's reads and writes answer the same on every backend,
// inside a unit of work (its own uncommitted writes seen) and outside one (what has committed).

const CREATED = "2026-12-01T00:00:00.000Z";
const LATER = "2026-12-01T00:00:05.000Z";

/** Records the projections' queries filter on; only the fields their columns and answers read. */
function partial<E extends RecordUpsert["entity"]>(entity: E, record: Record<string, unknown>): RecordUpsert {
  return { entity, record } as unknown as RecordUpsert;
}

function subagentThread(id: string, parentId: string): RecordUpsert {
  const base = thread(id, "p1", "the child").record;
  return partial("thread", {
    ...base,
    createdAt: LATER,
    lineage: { ...base.lineage, relationship: "subagent", parentThreadId: parentId, rootThreadId: parentId, depth: 1 },
  });
}

const queuedRun = partial("run", {
  id: "run:t1:2",
  threadId: "t1",
  ordinal: 2,
  status: "queued",
  delegatedTaskId: null,
  createdAt: CREATED,
});
const runningRun = partial("run", {
  id: "run:t1:1",
  threadId: "t1",
  ordinal: 1,
  status: "running",
  delegatedTaskId: null,
  createdAt: CREATED,
});
const openSession = partial("providerSession", {
  id: "ps1",
  threadId: "t1",
  providerInstanceId: "provider:test",
  status: "open",
});
const unfinalizedTask = partial("delegatedTask", {
  id: "dt1",
  parentThreadId: "t1",
  parentRunId: "run:t1:1",
  childThreadId: "t2",
  rootThreadId: "t1",
  status: "running",
  finalizedAt: null,
  createdAt: CREATED,
});
const wallClockBudget = partial("budget", {
  id: "b1",
  scope: "delegated_task",
  threadId: "t2",
  taskId: "dt1",
  rootThreadId: "t1",
  limits: { wallClockMs: 60_000 },
});
/** A top-level thread's profile budget record (its wall clock), found from its tree's unfinished task. */
const rootWallClockBudget = partial("budget", {
  id: "budget:root:t1",
  scope: "root_thread",
  threadId: "t1",
  taskId: null,
  rootThreadId: "t1",
  limits: { wallClockMs: 60_000 },
});
function usage(id: string, threadId: string, tokens: number, costUsd: number): RecordUpsert {
  return partial("turnUsage", {
    id,
    runId: `run:${threadId}:1`,
    threadId,
    rootThreadId: "t1",
    inputTokens: tokens - 1,
    outputTokens: 1,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    reasoningOutputTokens: 0,
    totalTokens: tokens,
    costUsd,
    costBasis: "reported",
  });
}

const projections: readonly RecordUpsert[] = [
  project("p1", "one"),
  thread("t1", "p1", "the parent"),
  subagentThread("t2", "t1"),
  item("i1", "t1", 1, "hello"),
  item("i2", "t1", 2, "again", "user_message"),
  item("i3", "t1", 3, "last"),
  runningRun,
  queuedRun,
  attempt("a1", "t1", "running", "ps1"),
  openSession,
  unfinalizedTask,
  wallClockBudget,
  rootWallClockBudget,
  trigger("tr1", "task1", "started"),
  usage("u1", "t1", 10, 0.5),
  usage("u2", "t2", 5, 0.25),
];

function credential(id: string, kind: CredentialKind, providerSessionId: string | null) {
  return {
    id,
    tokenHash: `hash:${id}`,
    kind,
    providerSessionId,
    threadId: null,
    data: "{}",
    expiresAt: 9_000,
    issuedAt: 1_000,
  };
}

describe.each(backends)("store contract ($name): the table modules' named queries", (backend) => {
  let store: StoreHarness;
  beforeEach(async () => {
    store = await backend.open();
  });
  afterEach(() => backend.closeAll());

  it("answers the projections' queries inside a unit of work (its own writes) and after it commits", async () => {
    const readAll = async (host: StoreHarness["tableHost"]) => ({
      runningTurn: await new AttemptsTable(host).hasRunningTurn("ps1"),
      noRunningTurn: await new AttemptsTable(host).hasRunningTurn("ps-other"),
      oldestUnfinalized: await new DelegatedTasksTable(host).oldestUnfinalizedCreatedAt("t1"),
      unfinalizedRoots: await new DelegatedTasksTable(host).rootsWithUnfinalizedTasks(),
      wallClockTasks: await new BudgetsTable(host).taskIdsWithRunningWallClock(),
      wallClockRoots: await new BudgetsTable(host).rootIdsWithRunningWallClock("budget:root:"),
      lastPosition: await new ItemsTable(host).lastPosition("t1"),
      pageAfter: (await new ItemsTable(host).page("t1", null, "after", 1, 10)).map((row) => JSON.parse(row.data).id),
      pageBefore: (await new ItemsTable(host).page("t1", ["assistant_message"], "before", 3, 10)).map(
        (row) => JSON.parse(row.data).id,
      ),
      countAfter: await new ItemsTable(host).countBeyond("t1", ["assistant_message"], "after", 1),
      openSessions: await new ProviderSessionsTable(host).countOpen(),
      queuedThreads: await new RunsTable(host).threadsWithQueuedRuns(),
      activeThreads: await new RunsTable(host).countThreadsWithActiveRuns(),
      triggeredTasks: await new ScheduledTriggersTable(host).taskIdsWithTriggersBefore("2027-01-01T00:00:00.000Z"),
      listed: (await new ThreadsTable(host).listingPage("p1", { includeSubagents: true }, 10, 0)).map((t) => t.id),
      listedRoots: await new ThreadsTable(host).listingCount("p1", { includeSubagents: false }),
      titles: await new ThreadsTable(host).listingTitles("p1", { includeSubagents: true }),
      facts: Object.fromEntries(await new ThreadsTable(host).shellFacts(["t1", "t2"])),
      hasChildren: [await new ThreadsTable(host).hasChildren("t1"), await new ThreadsTable(host).hasChildren("t2")],
      live: await new ThreadsTable(host).countLive(),
      treeUsed: await new TurnUsageTable(host).used({ kind: "tree", rootThreadId: "t1" }),
      subtreeSums: await new TurnUsageTable(host).sums({ kind: "subtree", threadId: "t1" }),
      noProjects: await new TurnUsageTable(host).used({ kind: "projects", projectIds: [] }),
      attemptCounts: await new TurnUsageTable(host).attemptCounts({ kind: "tree", rootThreadId: "t1" }),
      figures: await new TurnUsageTable(host).figuresOf("u1"),
    });
    const expected = {
      runningTurn: true,
      noRunningTurn: false,
      oldestUnfinalized: CREATED,
      unfinalizedRoots: ["t1"],
      wallClockTasks: ["dt1"],
      wallClockRoots: ["t1"],
      lastPosition: 3,
      pageAfter: ["i2", "i3"],
      pageBefore: ["i1"],
      countAfter: 1,
      openSessions: 1,
      queuedThreads: ["t1"],
      activeThreads: 1,
      triggeredTasks: ["task1"],
      listed: ["t2", "t1"],
      listedRoots: 1,
      titles: [
        { id: "t2", title: "the child" },
        { id: "t1", title: "the parent" },
      ],
      facts: {
        t1: { latestRun: expect.objectContaining({ id: "run:t1:1" }), queuedRuns: 1, pendingBackgroundTasks: 1 },
        t2: { latestRun: null, queuedRuns: 0, pendingBackgroundTasks: 0 },
      },
      hasChildren: [true, false],
      live: 2,
      treeUsed: { tokens: 15, costUsd: 0.75 },
      subtreeSums: {
        reported: 2,
        input: 13,
        output: 2,
        cache_read: 0,
        cache_write: 0,
        reasoning: 0,
        total: 15,
        reported_usd: 0.75,
        estimated_usd: 0,
        reported_cost_turns: 2,
        estimated_cost_turns: 0,
      },
      noProjects: { tokens: 0, costUsd: 0 },
      attemptCounts: { ended: 0, in_flight: 1 },
      figures: { total_tokens: 10, cost_usd: 0.5 },
    };

    const inside = await store.transactionAsync(async (work) => {
      work.append(null, projections);
      return readAll(work.tableHost);
    });
    expect(inside).toEqual(expected);
    expect(await readAll(store.tableHost)).toEqual(expected);
  });

  it("finds the subagent items among a thread's newest positions only (inside a unit of work and after)", async () => {
    const subagentItem = (id: string, position: number) =>
      partial("item", { ...item(id, "t1", position, id).record, kind: "subagent" });
    const records = [
      project("p1", "one"),
      thread("t1", "p1", "the parent"),
      subagentItem("s1", 1),
      item("m2", "t1", 2, "between", "user_message"),
      subagentItem("s3", 3),
      item("m4", "t1", 4, "after"),
      item("m5", "t1", 5, "last"),
    ];
    const readAll = async (host: StoreHarness["tableHost"]) => {
      const ids = async (window: number, limit: number) =>
        (await new NativeSubagentItemsTable(host).newest("t1", window, limit)).map((row) => JSON.parse(row.data).id);
      return { wide: await ids(10, 10), narrow: await ids(3, 10), first: await ids(10, 1), none: await ids(2, 10) };
    };
    const expected = { wide: ["s3", "s1"], narrow: ["s3"], first: ["s3"], none: [] };
    const inside = await store.transactionAsync(async (work) => {
      work.append(null, records);
      return readAll(work.tableHost);
    });
    expect(inside).toEqual(expected);
    expect(await readAll(store.tableHost)).toEqual(expected);
  });

  it("keeps the budget totals: a scope without a total adds nothing, then starts and adds (in a unit of work)", async () => {
    await store.transactionAsync(async (work) => {
      const budgets = new BudgetsTable(work.tableHost);
      expect(await budgets.addToTotal("scope:1", 5, 0.5)).toBe(false);
      await budgets.startTotal("scope:1", 5, 0.5);
      expect(await budgets.addToTotal("scope:1", 3, 0.25)).toBe(true);
    });
    expect(await new BudgetsTable(store.tableHost).totalOf("scope:1")).toEqual({ tokens: 8, costUsd: 0.75 });
    expect(await new BudgetsTable(store.tableHost).totalOf("scope:2")).toBeNull();
  });

  it("rolls a table's write back with the unit of work it ran in", async () => {
    const credentials = new McpCredentialsTable(store.tableHost);
    await credentials.insert(credential("c1", "client", null));
    await expect(
      store.transactionAsync(async (work) => {
        expect(await new McpCredentialsTable(work.tableHost).revoke("c1", 2_000)).toBe(true);
        throw new Error("the command failed");
      }),
    ).rejects.toThrow("the command failed");
    expect((await credentials.byId("c1"))!.revoked_at).toBeNull();
  });

  it("keeps the MCP credentials: each write says how many rows it changed, a second revoke none", async () => {
    // The open session the closed-session revocation spares.
    await store.transaction((work) => work.append(null, [openSession]));
    const table = new McpCredentialsTable(store.tableHost);
    await table.insert(credential("c1", "provider_session", "ps1"));
    await table.insert(credential("c2", "client", null));
    await table.insert(credential("c3", "provider_session", "ps-closed"));
    await table.insert(credential("c4", "provider_session", "ps1"));
    expect((await table.byTokenHash("hash:c1"))!.id).toBe("c1");
    expect(await table.byTokenHash("hash:none")).toBeNull();
    expect(await table.standingOf("c2")).toEqual({ revoked_at: null, expires_at: 9_000 });
    await table.markUsed("c2", 1_500);
    expect((await table.byId("c2"))!.last_used_at).toBe(1_500);
    expect(await table.markSessionUsed("ps1", 2_000, 1_000)).toBe(2);
    expect(await table.markSessionUsed("ps1", 2_100, 1_000)).toBe(0);
    expect(await table.expireSessionOthers("ps1", "hash:c1", 5_000)).toBe(1);
    expect((await table.byId("c4"))!.expires_at).toBe(5_000);
    expect((await table.byId("c1"))!.expires_at).toBe(9_000);
    expect(await table.expireSessionOthers("ps1", "hash:c1", 7_000)).toBe(1);
    expect((await table.byId("c4"))!.expires_at).toBe(5_000);
    expect(await table.revoke("c2", 3_000)).toBe(true);
    expect(await table.revoke("c2", 3_100)).toBe(false);
    expect(await table.revoke("unknown", 3_100)).toBe(false);
    expect((await table.byId("c2"))!.revoked_at).toBe(3_000);
    expect(await table.revokeOfClosedSessions(4_000)).toBe(1);
    expect(await table.revokeOfClosedSessions(4_100)).toBe(0);
    expect(await table.revokeOfSession("ps1", 4_200)).toBe(2);
    expect(await table.revokeOfSession("ps1", 4_300)).toBe(0);
    expect((await table.list({ includeProviderSessions: false })).map((row) => row.id)).toEqual(["c2"]);
    expect((await table.list({ includeProviderSessions: true })).map((row) => row.id).sort()).toEqual([
      "c1",
      "c2",
      "c3",
      "c4",
    ]);
  });

  it("spends a sign-in code once, even when two spends race, and ends a session once", async () => {
    const table = new WebSessionsTable(store.tableHost);
    await table.insert({
      id: "code1",
      secretHash: "code-hash",
      kind: "code",
      credentialId: "c1",
      createdAt: 1_000,
      expiresAt: 9_000,
      page: null,
    });
    await table.insert({
      id: "session1",
      secretHash: "session-hash",
      kind: "session",
      credentialId: "c1",
      createdAt: 1_000,
      expiresAt: 9_000,
      page: { secretHash: "page-hash", origin: "http://127.0.0.1:1" },
    });
    expect((await table.bySecretHash("code", "code-hash"))!.id).toBe("code1");
    expect(await table.bySecretHash("session", "code-hash")).toBeNull();
    const spends = await Promise.all([table.spendCode("code1", 2_000), table.spendCode("code1", 2_001)]);
    expect(spends.filter(Boolean)).toHaveLength(1);
    expect(await table.spendCode("code1", 2_002)).toBe(false);
    await table.markUsed("session1", 2_500);
    const session = (await table.bySecretHash("session", "session-hash"))!;
    expect(session).toMatchObject({ page_secret_hash: "page-hash", origin: "http://127.0.0.1:1", ended_at: null });
    expect(await table.end("session1", 3_000)).toBe(true);
    expect(await table.end("session1", 3_100)).toBe(false);
    expect((await table.bySecretHash("session", "session-hash"))!.ended_at).toBe(3_000);
  });

  it("keeps the reach tables: audit, grants, links, foreign and remote tasks", async () => {
    const host = store.tableHost;
    const audit = new ReachAuditTable(host);
    const row = { grant_id: "g1", link_name: null, verb: "read", tool: "t", outcome: "ok", data: "{}" };
    await audit.insert({ ...row, at: 1_000, direction: "in" });
    await audit.insert({ ...row, at: 2_000, direction: "out" });
    expect((await audit.newestSince(0, null, 10)).map((r) => r.at)).toEqual([2_000, 1_000]);
    expect((await audit.newestSince(0, "in", 10)).map((r) => r.at)).toEqual([1_000]);
    expect(await audit.newestSince(1_500, "in", 10)).toEqual([]);

    const grants = new ReachGrantsTable(host);
    const grant = { secret_hash: "s1", for_name: "laptop", data: "{}", expires_at: 9_000 };
    await grants.insert({ ...grant, id: "g1", created_at: 1_000 });
    await grants.insert({ ...grant, id: "g2", secret_hash: "s2", created_at: 2_000 });
    expect((await grants.bySecretHash("s2"))!.id).toBe("g2");
    expect((await grants.newestFirst()).map((g) => g.id)).toEqual(["g2", "g1"]);
    expect(await grants.revoke("g1", 3_000)).toBe(true);
    expect(await grants.revoke("g1", 3_100)).toBe(false);
    await grants.markUsed("g2", 3_200);
    expect(await grants.byId("g1")).toMatchObject({ revoked_at: 3_000, last_used_at: null });
    expect(await grants.byId("g2")).toMatchObject({ revoked_at: null, last_used_at: 3_200 });

    const links = new ReachLinksTable(host);
    expect(await links.insert({ id: "l1", name: "office", data: "{}", created_at: 1_000 })).toBe(true);
    expect(await links.insert({ id: "l2", name: "office", data: "{}", created_at: 1_001 })).toBe(false);
    expect(await links.insert({ id: "l3", name: "home", data: "{}", created_at: 2_000 })).toBe(true);
    expect((await links.oldestFirst()).map((l) => l.id)).toEqual(["l1", "l3"]);
    await links.remove("l1");
    expect(await links.byName("office")).toBeNull();
    expect((await links.byName("home"))!.id).toBe("l3");

    const foreign = new ReachForeignTasksTable(host);
    const parent = { environmentId: "env:a", runId: "run:a", rootThreadId: "root:a" };
    await foreign.insert(
      { taskId: "f1", grantId: "g2", childThreadId: "ct1", childRunId: "cr1", createdAt: 1_000 },
      { parent },
    );
    expect(await foreign.countUnfinishedOfParentRun("env:a", "run:a")).toBe(1);
    expect((await foreign.unfinishedOfChildRun("cr1"))!.task_id).toBe("f1");
    await foreign.updateData("f1", { parent: { ...parent, runId: "run:b" } });
    expect(await foreign.countUnfinishedOfParentRun("env:a", "run:a")).toBe(0);
    await foreign.finish("f1", { status: "completed" }, 2_000);
    expect(await foreign.unfinishedOfChildRun("cr1")).toBeNull();
    expect((await foreign.unacknowledged("g2", 10)).map((t) => t.task_id)).toEqual(["f1"]);
    await foreign.acknowledge("f1", "g1", 3_000);
    expect(await foreign.unacknowledged("g2", 10)).toHaveLength(1);
    await foreign.acknowledge("f1", "g2", 3_000);
    expect(await foreign.unacknowledged("g2", 10)).toEqual([]);
    expect(await foreign.byId("f1")).toMatchObject({ result: '{"status":"completed"}', acked_at: 3_000 });
    expect(await foreign.countOfParentTree("env:a", "root:a")).toBe(1);

    const remote = new ReachRemoteTasksTable(host);
    const task = { linkName: "home", parentThreadId: "t1", rootThreadId: "t1" };
    await remote.insert(
      { ...task, remoteTaskId: "r1", createdAt: 1_000 },
      { environmentId: "env:b", parentRunId: "run:t1:1" },
    );
    await remote.insert(
      { ...task, remoteTaskId: "r2", createdAt: 2_000 },
      { environmentId: "env:b", parentRunId: "run:t1:1" },
    );
    expect(await remote.countUnreceivedOfRun("run:t1:1")).toBe(2);
    await remote.update(
      { linkName: "home", remoteTaskId: "r1" },
      { environmentId: "env:b", parentRunId: "run:t1:1" },
      { receivedAt: 3_000, deliveredAt: null },
    );
    expect((await remote.byKey("home", "r1"))!.received_at).toBe(3_000);
    expect((await remote.byRemoteTaskId("r2"))!.link_name).toBe("home");
    expect((await remote.unreceivedOfLink("home")).map((t) => t.remote_task_id)).toEqual(["r2"]);
    expect(await remote.linksWithUnreceived()).toEqual(["home"]);
    expect((await remote.ofParent("t1")).map((t) => t.remote_task_id)).toEqual(["r1", "r2"]);
    expect((await remote.receivedUndelivered("t1")).map((t) => t.remote_task_id)).toEqual(["r1"]);
    expect(await remote.countUnreceivedOfRun("run:t1:1")).toBe(1);
    expect(await remote.countOfTree("t1")).toBe(2);
    expect(await remote.linkOfEnvironment("env:b")).toBe("home");
    expect(await remote.linkOfEnvironment("env:c")).toBeNull();
  });
});
