// The /mcp endpoint serves MCP 2026-07-28 beside the 2025 revisions, chosen per request (issue
// 30, item 5). Real SDK clients of both lines call real tools through the real endpoint, engine
// and SQLite: the v1 client (@modelcontextprotocol/sdk 1.32.2) on 2025-06-18, and the v2 client
// (@modelcontextprotocol/client 2.4.0) pinned to 2026-07-28, which never initializes. The
// language model is the scripted provider.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../support/sqlite-store.js";
import { LiveWaits } from "../../src/services/live-waits.js";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import { untilGatesReached } from "../support/gates.js";
import { McpLab } from "../support/mcp-lab.js";
import { connectRevision, type Revision, type RevisionClient } from "../support/mcp-revisions.js";
import { until } from "../support/until.js";

const REVISIONS: Revision[] = ["2025-06-18", "2026-07-28"];

describe.each(REVISIONS)("MCP %s, through the real endpoint", (revision) => {
  let lab: McpLab;
  let elsewhere: string;
  const clients: RevisionClient[] = [];
  let gates = 0;
  const gate = (name: string) => `${name}-${revision}-${++gates}`;

  beforeAll(async () => {
    lab = await McpLab.start();
    elsewhere = mkdtempSync(join(tmpdir(), "switchyard-elsewhere-"));
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await lab.stop();
    rmSync(elsewhere, { recursive: true, force: true });
  });

  async function connect(
    token: string,
    identity: { name?: string; version?: string; roots?: string[] } = {},
  ): Promise<RevisionClient> {
    const client = await connectRevision(revision, lab.server.mcpUrl, token, identity);
    clients.push(client);
    return client;
  }

  /** A thread whose turn is held live, and its agent's client on this revision (its own provider-session credential). */
  async function liveAgent() {
    const held = await lab.liveAgent({ instance: "alpha" });
    return { ...held, client: await connect(await lab.tokenFor(held.threadId)) };
  }

  it("runs on that revision and lists the same tools as every revision", async () => {
    const client = await lab.client();
    const expected = (await client.listTools()).tools.map((tool) => tool.name);
    const ours = await connect(
      lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token,
    );
    expect(ours.negotiated()).toBe(revision);
    expect(await ours.listToolNames()).toEqual(expected);
  });

  it("delegates a task to a scripted provider and waits for the child's answer in the same call", async () => {
    const parent = await liveAgent();
    try {
      const result = await parent.client.call<DelegateTaskResult>("delegate_task", {
        task: `@@reply answered on ${revision}`,
        target: { providerInstanceId: "beta" },
        mode: "wait",
        clientRequestId: "first",
      });
      expect(result).toMatchObject({
        ok: true,
        value: {
          status: "completed",
          workState: "result_available",
          summary: `answered on ${revision}`,
          providerInstanceId: "beta",
          waitTimedOut: false,
        },
      });
      const task = lab.host.store.get("delegatedTask", (result as { value: DelegateTaskResult }).value.taskId)!;
      expect(task).toMatchObject({ parentThreadId: parent.threadId, delivery: "acknowledged" });
    } finally {
      parent.release();
    }
  });

  it("returns a pending wait within its timeout, and the same call resumes it to the result", async () => {
    const parent = await liveAgent();
    const hold = gate("slow-child");
    try {
      const progress: unknown[] = [];
      const call = {
        task: `@@gate ${hold} @@reply finally done`,
        target: { providerInstanceId: "alpha" },
        mode: "wait",
        timeoutMs: 300,
        clientRequestId: "resumable",
      };
      const pending = await parent.client.call<DelegateTaskResult>("delegate_task", call, {
        onprogress: (p) => progress.push(p),
      });
      expect(pending).toMatchObject({
        ok: true,
        value: { status: "running", workState: "working", waitTimedOut: true },
      });
      const { taskId } = (pending as { value: DelegateTaskResult }).value;
      lab.release(hold);
      // The same call again (same clientRequestId) lands on the same task and waits for its result.
      const resumed = await parent.client.call<DelegateTaskResult>("delegate_task", { ...call, timeoutMs: 30_000 });
      expect(resumed).toMatchObject({
        ok: true,
        value: { taskId, status: "completed", summary: "finally done", waitTimedOut: false },
      });
      expect(lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId])).toHaveLength(1);
    } finally {
      parent.release();
    }
  });

  it("reports progress while a wait blocks", async () => {
    const parent = await liveAgent();
    const hold = gate("progress-child");
    try {
      const progress: { message?: string }[] = [];
      const waiting = parent.client.call<DelegateTaskResult>(
        "delegate_task",
        { task: `@@gate ${hold} @@reply progressed`, target: { providerInstanceId: "alpha" }, mode: "wait" },
        { onprogress: (p) => progress.push(p as { message?: string }) },
      );
      await untilGatesReached(lab.t.gateDir, [hold]);
      await until("a progress notification to arrive", () => progress.length > 0);
      lab.release(hold);
      expect(await waiting).toMatchObject({ ok: true, value: { status: "completed", summary: "progressed" } });
      expect(progress[0]).toMatchObject({ progress: 1, message: expect.any(String) });
    } finally {
      parent.release();
    }
  });

  it("cancels a blocking wait: the server lets go of it, and the result reaches the parent later", async () => {
    const parent = await liveAgent();
    const hold = gate("cancelled-child");
    const liveWaits = lab.host.container.resolve(LiveWaits);
    try {
      const controller = new AbortController();
      const waiting = parent.client.call(
        "delegate_task",
        { task: `@@gate ${hold} @@reply after the cancel`, target: { providerInstanceId: "alpha" }, mode: "wait" },
        { signal: controller.signal },
      );
      await untilGatesReached(lab.t.gateDir, [hold]);
      await until("the parent to be blocked in its wait", () => liveWaits.isThreadBlocked(parent.threadId));
      controller.abort("the harness gave up");
      await expect(waiting).rejects.toThrow();
      await until("the wait to end on the server", () => !liveWaits.isThreadBlocked(parent.threadId));
      const [task] = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId]);
      lab.release(hold);
      await lab.host.waiter.waitFor(() => lab.host.store.get("delegatedTask", task!.id)!.finalizedAt, {
        timeoutMs: 15_000,
      });
      // Nobody read the result: it is delivered to the parent instead of being marked as read.
      expect(lab.host.store.get("delegatedTask", task!.id)!.delivery).not.toBe("acknowledged");
      // The client goes on calling.
      expect(await parent.client.call("t3_thread_list", { projectId: lab.projectId })).toMatchObject({ ok: true });
    } finally {
      parent.release();
    }
  });

  it("gives an outside client's session its attached thread, the same one for each of its calls", async () => {
    const token = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const client = await connect(token, { name: `outside-${revision}`, version: "3.1.0" });
    const first = await client.call<DelegateTaskResult>("delegate_task", {
      task: "@@reply one",
      target: { providerInstanceId: "beta" },
      mode: "wait",
      clientRequestId: "one",
    });
    const second = await client.call<DelegateTaskResult>("delegate_task", {
      task: "@@reply two",
      target: { providerInstanceId: "beta" },
      mode: "wait",
      clientRequestId: "two",
    });
    expect([first, second]).toMatchObject([
      { ok: true, value: { summary: "one" } },
      { ok: true, value: { summary: "two" } },
    ]);
    const parents = [first, second].map(
      (outcome) =>
        lab.host.store.get("delegatedTask", (outcome as { value: DelegateTaskResult }).value.taskId)!.parentThreadId,
    );
    expect(parents[0]).toBe(parents[1]);
    const attached = lab.host.store.get("thread", parents[0]!)!;
    expect(attached).toMatchObject({
      providerInstanceId: `attached:outside-${revision}`,
      creationSource: "attached",
      lineage: { relationship: "attached", attached: { client: { name: `outside-${revision}`, version: "3.1.0" } } },
    });
    // 2025: the session the endpoint named at initialize; 2026-07-28 has no session: the client's declared name stands for it.
    expect(attached.lineage.attached?.mcpSessionId).toMatch(
      revision === "2025-06-18" ? /^[0-9a-f]{24}$/ : /^client:outside-2026-07-28$/,
    );
  });

  it("puts an outside client's new work in the project its roots name, asking the client for them", async () => {
    const project = await lab.host.projects.add(mkdtempSync(join(elsewhere, "rooted-")), "rooted");
    const client = await connect(
      lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token,
      { name: `rooted-${revision}`, roots: [project.rootPath] },
    );
    const result = await client.call<DelegateTaskResult>("delegate_task", {
      task: "@@reply in the rooted project",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    });
    expect(result).toMatchObject({ ok: true, value: { summary: "in the rooted project" } });
    expect(lab.host.store.get("thread", (result as { value: DelegateTaskResult }).value.childThreadId)).toMatchObject({
      projectId: project.id,
    });
  });

  it("holds a linked environment's call to its grant, and audits it", async () => {
    const issued = lab.host.container.resolve(ReachGrants).issue({
      for: `peer-${revision}`,
      projects: "*",
      verbs: ["read"],
      maxRuntimeMode: "approval-required",
      ttlMs: 3_600_000,
    });
    const peer = await connect(issued.secret);
    expect(await peer.call("t3_thread_list", { projectId: lab.projectId })).toMatchObject({ ok: true });
    expect(
      await peer.call("delegate_task", { task: "@@reply no", target: { providerInstanceId: "beta" } }),
    ).toMatchObject({ ok: false, code: "capability_denied" });
    const audited = sqliteStore(lab.host.store)
      .statement("SELECT tool, outcome FROM reach_audit WHERE grant_id = ? ORDER BY id")
      .all(issued.grant.id);
    expect(audited).toEqual([
      { tool: "t3_thread_list", outcome: "ok" },
      { tool: "delegate_task", outcome: "capability_denied" },
    ]);
  });

  it("holds every call to its credential: a read-only token may not delegate, and another project's thread does not exist for it", async () => {
    const reader = await connect(
      lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token,
    );
    expect(
      await reader.call("delegate_task", { task: "@@reply no", target: { providerInstanceId: "beta" } }),
    ).toMatchObject({ ok: false, code: "capability_denied", details: { required: "orchestration:operate" } });
    const other = await lab.host.projects.add(elsewhere, "elsewhere");
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      prompt: "@@reply hidden",
      createdBy: "user",
      creationSource: "cli",
    });
    const outsider = await connect(
      lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"], projects: [other.id] })
        .token,
    );
    expect(await outsider.call("t3_thread_read", { threadId: thread.id })).toMatchObject({
      ok: false,
      code: "thread_not_found",
    });
  });
});
