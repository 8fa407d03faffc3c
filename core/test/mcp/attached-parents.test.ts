import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { untilGatesReached } from "../support/gates.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import type { ModeCeiling, ProjectScope } from "../../src/services/credentials/mcp-session-registry.js";
import { DelegatedTaskService } from "../../src/services/delegation/delegated-task-service.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";

/**
 * The user's own agent as a parent (issue 29, item 1): an outside MCP client with a client
 * token calls delegate_task, and its session gets an attached thread of its own, through the
 * real endpoint, engine and SQLite, with the SDK's own client (stateful: it keeps the session id
 * the endpoint gives it, and answers roots/list when it declares roots).
 */
describe("an outside agent session as a delegating parent (attached threads)", () => {
  let lab: McpLab;
  let other: { id: string; root: string };
  let scratch: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    lab = await McpLab.start();
    scratch = mkdtempSync(join(tmpdir(), "switchyard-attached-"));
    const root = join(scratch, "other-project");
    mkdirSync(join(root, "src"), { recursive: true });
    other = { id: (await lab.host.projects.add(root, "other")).id, root };
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await lab.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  function token(
    options: {
      projects?: ProjectScope;
      ceiling?: ModeCeiling;
      connection?: { harness: string; projectDir: string | null };
    } = {},
  ): string {
    return lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"], ...options })
      .token;
  }

  /** A client as a harness is one: it names itself and, given roots, declares and answers them. */
  async function session(
    bearer: string,
    options: { name?: string; version?: string; roots?: string[] } = {},
  ): Promise<Client> {
    const client = new Client(
      { name: options.name ?? "codex-mcp-client", version: options.version ?? "0.171.0" },
      { capabilities: options.roots !== undefined ? { roots: { listChanged: true } } : {} },
    );
    if (options.roots !== undefined)
      client.setRequestHandler(ListRootsRequestSchema, () => ({
        roots: options.roots!.map((folder) => ({ uri: pathToFileURL(folder).href, name: folder })),
      }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(lab.server.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  const store = () => lab.host.store;

  it("gives the session an attached thread; the child has full lineage, the answer comes back in the same call, with usage", async () => {
    const client = await session(token(), { roots: [join(lab.t.workspace)] });
    const result = await mustCall<DelegateTaskResult>(client, "delegate_task", {
      task: "@@reply the child's answer",
      target: { providerInstanceId: "beta" },
      mode: "wait",
      clientRequestId: "first",
    });
    expect(result).toMatchObject({
      status: "completed",
      workState: "result_available",
      summary: "the child's answer",
      providerInstanceId: "beta",
    });
    expect(result.usage?.own.turns.ended).toBe(1);

    const task = store().get("delegatedTask", result.taskId)!;
    const parent = store().get("thread", task.parentThreadId)!;
    expect(parent).toMatchObject({
      projectId: lab.projectId,
      providerInstanceId: "attached:codex-mcp-client",
      createdBy: "agent",
      creationSource: "attached",
      runtimeMode: "full-access",
      lineage: {
        relationship: "attached",
        parentThreadId: null,
        depth: 0,
        rootThreadId: parent.id,
        attached: { client: { name: "codex-mcp-client", version: "0.171.0" } },
      },
    });
    expect(store().get("thread", result.childThreadId)).toMatchObject({
      lineage: {
        relationship: "subagent",
        parentThreadId: parent.id,
        delegatedTaskId: task.id,
        depth: 1,
        rootThreadId: parent.id,
      },
    });
    // No turn ran (or is queued) in the attached thread: Switchyard never starts its agent.
    expect(store().select("run", "thread_id = ?", [parent.id])).toEqual([]);
    // The parent's timeline shows the child.
    expect(store().select("item", "thread_id = ? AND kind = 'subagent'", [parent.id])[0]).toMatchObject({
      status: "completed",
      data: expect.objectContaining({ taskId: task.id }),
    });

    // t3_thread_list shows the attached thread and, with sub-agents, its child.
    const listed = await mustCall<{
      threads: {
        threadId: string;
        relationship: string;
        parentThreadId: string | null;
        creationSource: string;
        attached?: unknown;
      }[];
    }>(client, "t3_thread_list", { projectId: lab.projectId, includeSubagents: true });
    expect(listed.threads.find((thread) => thread.threadId === parent.id)).toMatchObject({
      relationship: "attached",
      creationSource: "attached",
      attached: { client: { name: "codex-mcp-client", version: "0.171.0" } },
    });
    expect(listed.threads.find((thread) => thread.threadId === result.childThreadId)).toMatchObject({
      relationship: "subagent",
      parentThreadId: parent.id,
    });

    // The same session delegates again: the same attached thread. Another session: its own.
    const again = await mustCall<DelegateTaskResult>(client, "delegate_task", {
      task: "@@reply second",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    });
    expect(store().get("delegatedTask", again.taskId)!.parentThreadId).toBe(parent.id);
    const second = await session(token(), { roots: [lab.t.workspace] });
    const elsewhere = await mustCall<DelegateTaskResult>(second, "delegate_task", {
      task: "@@reply third",
      target: { providerInstanceId: "alpha" },
    });
    expect(store().get("delegatedTask", elsewhere.taskId)!.parentThreadId).not.toBe(parent.id);
  });

  it("keeps a result the session never waited for: no turn is started for it, and task_status from a later session reads it", async () => {
    const bearer = token();
    const first = await session(bearer, { roots: [lab.t.workspace] });
    const started = await mustCall<DelegateTaskResult>(first, "delegate_task", {
      task: "@@gate attached-later @@reply finished while nobody waited",
      target: { providerInstanceId: "alpha" },
      mode: "async",
    });
    await untilGatesReached(lab.t.gateDir, ["attached-later"]);
    await first.close();
    releaseGate(lab.t.gateDir, "attached-later");
    const parentId = store().get("delegatedTask", started.taskId)!.parentThreadId;
    const done = await lab.host.waiter.waitFor(
      () => (store().get("delegatedTask", started.taskId)?.finalizedAt ? true : null),
      { timeoutMs: 15_000 },
    );
    expect(done).toBe(true);
    // Nothing tried to wake the parent: no run in the attached thread, the result still pending for it.
    expect(store().select("run", "thread_id = ?", [parentId])).toEqual([]);
    expect(store().get("delegatedTask", started.taskId)).toMatchObject({ delivery: "pending", status: "completed" });
    // A new session of the same token (the harness restarted) reads it.
    const later = await session(bearer);
    expect(await mustCall<DelegateTaskResult>(later, "task_status", { taskId: started.taskId })).toMatchObject({
      status: "completed",
      summary: "finished while nobody waited",
    });
  });

  it("infers the project: the client's roots, else the connection's folder, else the token's only project, else a typed error listing them", async () => {
    // Roots inside the other project (a subfolder): the child works there.
    const byRoots = await session(token(), { roots: [join(other.root, "src")] });
    const inOther = await mustCall<DelegateTaskResult>(byRoots, "delegate_task", {
      task: "@@reply in other",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    });
    expect(store().get("thread", inOther.childThreadId)).toMatchObject({
      projectId: other.id,
      cwd: join(other.root, "src"),
    });
    const created = await mustCall<{ threads: { thread: { projectId: string } }[] }>(byRoots, "create_threads", {
      threads: [{ title: "idle one", target: { providerInstanceId: "alpha" } }],
    });
    expect(created.threads[0]!.thread.projectId).toBe(other.id);

    // No roots: the connection's project folder.
    const byConnection = await session(token({ connection: { harness: "codex", projectDir: other.root } }));
    const viaConnection = await mustCall<DelegateTaskResult>(byConnection, "delegate_task", {
      task: "@@reply via connection",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    });
    expect(store().get("thread", viaConnection.childThreadId)!.projectId).toBe(other.id);

    // Neither: the only project the token may use.
    const scoped = await session(token({ projects: [other.id] }));
    const viaScope = await mustCall<DelegateTaskResult>(scoped, "delegate_task", {
      task: "@@reply via scope",
      target: { providerInstanceId: "alpha" },
    });
    expect(store().get("thread", viaScope.childThreadId)!.projectId).toBe(other.id);

    // Nothing says which of several: a typed error naming them, and nothing was created.
    const lost = await session(token(), { roots: [scratch] });
    const threadsBefore = store().count("thread", "1 = 1", []);
    const refused = await callTool(lost, "delegate_task", {
      task: "@@reply never",
      target: { providerInstanceId: "alpha" },
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { field: "projectId", lookedIn: [scratch] },
    });
    if (refused.ok) throw new Error("unreachable");
    expect(
      (refused.details.allowedProjects as { projectId: string }[]).map((project) => project.projectId).sort(),
    ).toEqual([lab.projectId, other.id].sort());
    expect(refused.message).toContain(other.root);
    expect(
      await callTool(lost, "t3_thread_launch", { message: "never", target: { providerInstanceId: "alpha" } }),
    ).toMatchObject({ ok: false, code: "invalid_request", details: { field: "projectId" } });
    expect(store().count("thread", "1 = 1", [])).toBe(threadsBefore);
  });

  it("holds the token's ceiling, refuses to send into the attached thread, and task_cancel stops the child's tree", async () => {
    const client = await session(token({ ceiling: { runtimeMode: "approval-required", interactionMode: "default" } }), {
      roots: [lab.t.workspace],
    });
    expect(
      await callTool(client, "delegate_task", {
        task: "@@reply no",
        target: { providerInstanceId: "alpha" },
        runtimeMode: "full-access",
      }),
    ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
    const task = await mustCall<DelegateTaskResult>(client, "delegate_task", {
      task: `@@tool delegate_task ${JSON.stringify({ task: "@@gate attached-grandchild @@reply deep", target: { providerInstanceId: "alpha" } })} @@then @@gate attached-child @@reply never`,
      target: { providerInstanceId: "alpha" },
    });
    expect(store().get("thread", task.childThreadId)!.runtimeMode).toBe("approval-required");
    await untilGatesReached(lab.t.gateDir, ["attached-grandchild", "attached-child"]);
    const parentId = store().get("delegatedTask", task.taskId)!.parentThreadId;
    expect(await callTool(client, "t3_thread_send", { threadId: parentId, message: "hello" })).toMatchObject({
      ok: false,
      code: "thread_not_sendable",
      details: { relationship: "attached" },
    });

    const nested = store().select("delegatedTask", "parent_thread_id = ?", [task.childThreadId])[0]!;
    expect(store().get("thread", nested.childThreadId)!.lineage.rootThreadId).toBe(parentId);
    const cancelled = await mustCall<{ cancelled: boolean }>(client, "task_cancel", { taskId: task.taskId });
    expect(cancelled.cancelled).toBe(true);
    expect(store().get("thread", nested.childThreadId)!.stopped).toBe(true);
    expect(store().get("thread", task.childThreadId)!.stopped).toBe(true);
    releaseGate(lab.t.gateDir, "attached-grandchild");
    releaseGate(lab.t.gateDir, "attached-child");
  });

  it("a client over the HTTP API (no MCP session) still gets parent_not_active from delegation; an agent's delegation is unchanged", async () => {
    const parent = await lab.liveAgent({ title: "an agent" });
    const child = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@reply agent child",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    });
    expect(
      store().get("thread", store().get("delegatedTask", child.taskId)!.parentThreadId)!.lineage.relationship,
    ).toBe("root");
    parent.release();
    const tasks = lab.host.container.resolve(DelegatedTaskService);
    const apiCaller = {
      kind: "client" as const,
      threadId: null,
      projectId: null,
      providerInstanceId: null,
      providerSessionId: null,
      requestScope: "credential:x",
      capabilities: new Set(["orchestration:operate" as const]),
      transport: "api" as const,
    };
    await expect(tasks.delegate(apiCaller, { task: "x" })).rejects.toMatchObject({ code: "parent_not_active" });
  });
});
