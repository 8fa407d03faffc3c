import { createServer, type Socket } from "node:net";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { RemoteTasks } from "../../src/services/reach/remote-tasks.js";
import { ApiClient, ok, type FailureBody } from "../support/api-client.js";
import { untilGatesReached } from "../support/gates.js";
import { mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";

/**
 * GET /threads/{threadId}/remote-tasks on A, with two real servers on 127.0.0.2 and 127.0.0.3:
 * A's agent delegates to B (async) a scripted child held at a gate; A's route lists it as
 * running there, with B's name, ids and link; once the gate opens and the result arrives, as
 * finished with its summary; with B gone, an unfinished child is listed as unreachable and the
 * finished one still is.
 */
describe("a thread's children in linked environments (API)", () => {
  let a: McpLab;
  let b: McpLab;
  let api: ApiClient;
  let bStopped = false;
  beforeAll(async () => {
    [a, b] = await Promise.all([
      McpLab.start({ listen: { host: "127.0.0.2" } }),
      McpLab.start({ listen: { host: "127.0.0.3" } }),
    ]);
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "a",
      projects: "*",
      verbs: ["read", "create", "send", "delegate", "cancel"],
      maxRuntimeMode: "auto-accept-edits",
      ttlMs: 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name: "mac", url: b.server.url, secret: issued.secret });
    api = new ApiClient(
      a.server.apiUrl,
      a.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token,
    );
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), bStopped ? undefined : b?.stop()]);
  });

  const receivedOnA = async (taskId: string) => {
    const task = await a.host.waiter.waitFor(
      async () => {
        const row = await a.host.container.resolve(RemoteTasks).get("mac", taskId);
        return row?.receivedAt != null ? row : null;
      },
      { timeoutMs: 30_000 },
    );
    if (task === null) throw new Error(`the result of ${taskId} did not arrive on A`);
    return task;
  };

  it("lists a child whose environment accepts the connection and never answers as unreachable, within the bound", async () => {
    const links = a.host.container.resolve(ReachLinks);
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "a-slow",
      projects: "*",
      verbs: ["read", "delegate"],
      maxRuntimeMode: "auto-accept-edits",
      ttlMs: 3_600_000,
    });
    links.add({ name: "slow", url: b.server.url, secret: issued.secret });
    const parent = await a.liveAgent({ title: "parent of a slow child" });
    const started = await mustCall<{ taskId: string }>(parent.client, "delegate_task", {
      task: "@@gate slow-child @@reply SLOW-DONE",
      target: { providerInstanceId: "alpha" },
      environmentId: "slow",
      mode: "async",
    });
    await untilGatesReached(b.t.gateDir, ["slow-child"]);
    // The link now leads to a listener that takes connections and says nothing.
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket.on("error", () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.2", resolve));
    await links.remove("slow");
    links.add({
      name: "slow",
      url: `http://127.0.0.2:${(silent.address() as { port: number }).port}`,
      secret: issued.secret,
    });
    try {
      const listed = await ok(api.get(`/threads/${parent.threadId}/remote-tasks`));
      expect(listed.remoteTasks).toEqual([
        expect.objectContaining({
          environment: "slow",
          taskId: started.taskId,
          status: "unreachable",
          statusFrom: "none",
          problem: expect.objectContaining({ code: "provider_unavailable", reason: "timeout" }),
        }),
      ]);
      expect(held.size).toBeGreaterThan(0);
    } finally {
      // Back to B, so the result is taken and nothing is left waiting on the silent listener.
      await links.remove("slow");
      links.add({ name: "slow", url: b.server.url, secret: issued.secret });
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
    releaseGate(b.t.gateDir, "slow-child");
    parent.release();
    const task = await a.host.waiter.waitFor(
      async () => {
        const row = await a.host.container.resolve(RemoteTasks).get("slow", started.taskId);
        return row?.receivedAt != null ? row : null;
      },
      { timeoutMs: 30_000 },
    );
    expect(task?.summary).toBe("SLOW-DONE");
  });

  it("lists the remote child as running on B, then finished with its summary, then unreachable with B gone", async () => {
    const parent = await a.liveAgent({ title: "parent on a" });
    const started = await mustCall<{
      taskId: string;
      childThreadId: string;
      childThreadLink: string;
      childThreadWebUrl?: string;
    }>(parent.client, "delegate_task", {
      task: "@@gate remote-child @@reply REMOTE-SUMMARY",
      title: "set up the mac",
      target: { providerInstanceId: "alpha", model: "alpha-small" },
      environmentId: "mac",
      mode: "async",
    });
    await untilGatesReached(b.t.gateDir, ["remote-child"]);
    // B built the child's web URL on its own address; A passes it through and makes none up.
    const childPage = `${b.server.url}/threads/${started.childThreadId}`;
    expect(started.childThreadWebUrl).toBe(childPage);

    const running = await ok(api.get(`/threads/${parent.threadId}/remote-tasks`));
    expect(running.remoteTasks).toEqual([
      expect.objectContaining({
        environment: "mac",
        environmentId: b.registry.environmentId,
        taskId: started.taskId,
        childThreadId: started.childThreadId,
        childThreadLink: `switchyard-thread://v2/${b.registry.environmentId}/${started.childThreadId}`,
        childThreadWebUrl: childPage,
        title: "set up the mac",
        status: "running",
        statusFrom: "environment",
        workState: "working",
        providerInstanceId: "alpha",
        model: "alpha-small",
        summary: null,
        finishedAt: null,
        problem: null,
      }),
    ]);
    // The child is B's thread, not A's.
    expect(a.host.store.get("thread", started.childThreadId)).toBeNull();

    releaseGate(b.t.gateDir, "remote-child");
    parent.release();
    await receivedOnA(started.taskId);
    const finished = await ok(api.get(`/threads/${parent.threadId}/remote-tasks`));
    expect(finished.remoteTasks).toEqual([
      expect.objectContaining({
        environment: "mac",
        taskId: started.taskId,
        status: "completed",
        statusFrom: "receipt",
        workState: "result_available",
        summary: "REMOTE-SUMMARY",
        providerInstanceId: "alpha",
        model: "alpha-small",
        problem: null,
      }),
    ]);
    expect(Date.parse(finished.remoteTasks[0].finishedAt)).toBeGreaterThanOrEqual(
      Date.parse(finished.remoteTasks[0].createdAt),
    );

    // A second child held at its gate, then B goes away: its row says unreachable, with why; the finished one is read from its receipt.
    const again = await a.liveAgentOn(parent.threadId);
    const second = await mustCall<{ taskId: string }>(again.client, "delegate_task", {
      task: "@@gate never-released @@reply NO",
      target: { providerInstanceId: "alpha" },
      environmentId: "mac",
      mode: "async",
    });
    await untilGatesReached(b.t.gateDir, ["never-released"]);
    await b.stop();
    bStopped = true;
    const partly = await ok(api.get(`/threads/${parent.threadId}/remote-tasks`));
    expect(partly.remoteTasks).toEqual([
      expect.objectContaining({ taskId: started.taskId, status: "completed", summary: "REMOTE-SUMMARY" }),
      expect.objectContaining({
        taskId: second.taskId,
        environment: "mac",
        status: "unreachable",
        statusFrom: "none",
        summary: null,
        problem: expect.objectContaining({ code: "provider_unavailable", reason: "unreachable" }),
      }),
    ]);
    // A token held to some projects may not call links: the finished row is A's, the unfinished one says why it has no status.
    const scoped = new ApiClient(
      a.server.apiUrl,
      a.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"], projects: [a.projectId] })
        .token,
    );
    const scopedRead = await ok(scoped.get(`/threads/${parent.threadId}/remote-tasks`));
    expect(
      scopedRead.remoteTasks.map((task: { status: string; problem: { reason: string } | null }) => [
        task.status,
        task.problem?.reason ?? null,
      ]),
    ).toEqual([
      ["completed", null],
      ["unreachable", "scoped_caller"],
    ]);
    again.release();
  });

  it("answers thread_not_found for a thread that does not exist", async () => {
    const missing = await api.get<FailureBody>("/threads/thread:nowhere/remote-tasks");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("thread_not_found");
  });
});
