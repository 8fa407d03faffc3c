import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isOrchestratorFailure } from "../../src/engine/orchestrator-failure.js";
import { ForeignTasks } from "../../src/services/reach/foreign-tasks.js";
import type { ReachCallMeta } from "../../src/services/reach/link-calls.js";
import { ReachForwarder } from "../../src/services/reach/reach-forwarder.js";
import { LINK_SECRET_PREFIX, ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { RemoteTasks } from "../../src/services/reach/remote-tasks.js";
import { callTool } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";

/**
 * The whole-tree budget (maxTasksPerRootThread) across environments, on each side, and naming a
 * linked environment by its own id: the queries that read reach tasks by their promoted columns
 * (migration 30) rather than by the JSON they come from.
 */
describe("tree budgets and environment ids across environments", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ budgets: { maxTasksPerRootThread: 2 } });
  });
  afterAll(async () => {
    await lab.stop();
  });

  const meta = (environmentId: string, runId: string): ReachCallMeta => ({
    environmentId,
    callerThreadId: "thread-on-a",
    ceiling: { runtimeMode: "full-access", interactionMode: "default" },
    delegation: { environmentId, threadId: "thread-on-a", runId, rootThreadId: "root-on-a", depth: 1, maxDepth: 3 },
  });
  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      if (isOrchestratorFailure(error)) return error;
      throw error;
    }
    throw new Error("expected a typed refusal");
  };

  it("counts every task a foreign tree delegated here, of any run, finished or not, per environment", async () => {
    const { grant } = lab.host.container
      .resolve(ReachGrants)
      .issue({ for: "linux", projects: "*", verbs: ["delegate"], maxRuntimeMode: "full-access", ttlMs: 3_600_000 });
    const tasks = lab.host.container.resolve(ForeignTasks);
    const delegate = (environmentId: string, runId: string, key: string) =>
      tasks.delegate(grant, meta(environmentId, runId), {
        task: `@@reply ${key}`,
        target: { providerInstanceId: "alpha" },
        clientRequestId: key,
        projectId: lab.projectId,
        mode: "wait",
      });
    expect((await delegate("env_a", "run-1", "one")).status).toBe("completed");
    await delegate("env_a", "run-2", "two");
    const threadsBefore = lab.host.store.count("thread", "1 = 1", []);
    const third = await refusal(delegate("env_a", "run-3", "three"));
    expect(third).toMatchObject({ code: "invalid_request", details: { budget: "maxTasksPerRootThread", limit: 2 } });
    expect(lab.host.store.count("thread", "1 = 1", [])).toBe(threadsBefore);
    // The same root thread id in another environment is another tree.
    expect((await delegate("env_b", "run-1", "other-environment")).taskId).toEqual(expect.any(String));
  });

  it("counts a parent's tasks in linked environments in its tree, and refuses past the budget before calling the link", async () => {
    const links = lab.host.container.resolve(ReachLinks);
    // Nothing listens there: a call that reached the link would fail as unreachable, not as a budget.
    links.add({ name: "mac", url: "http://127.0.0.1:9", secret: `${LINK_SECRET_PREFIX}${"x".repeat(43)}` });
    const remote = lab.host.container.resolve(RemoteTasks);
    const parent = await lab.liveAgent({ title: "tree root" });
    const record = (remoteTaskId: string, parentRunId: string) =>
      remote.record({
        linkName: "mac",
        remoteTaskId,
        environmentId: "env_mac",
        parentThreadId: parent.threadId,
        parentRunId,
        childThreadId: `child-${remoteTaskId}`,
        childThreadLink: `switchyard-thread://v2/env_mac/child-${remoteTaskId}`,
        title: remoteTaskId,
      });
    // Of an earlier run of the same parent: not this run's breadth, but this tree's.
    await record("task:earlier", "run-earlier");
    expect(await remote.countOfTree(parent.threadId)).toBe(1);
    expect(await remote.unreceivedCountOfRun("run-earlier")).toBe(1);
    expect(await remote.receive("mac", { taskId: "task:earlier", status: "completed", summary: "done" })).toBe(true);
    expect(await remote.unreceivedCountOfRun("run-earlier")).toBe(0);
    await record("task:earlier-2", "run-earlier");
    expect(await remote.countOfTree(parent.threadId)).toBe(2);

    const refused = await callTool(parent.client, "delegate_task", {
      task: "@@reply THREE",
      target: { providerInstanceId: "alpha" },
      environmentId: "mac",
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { budget: "maxTasksPerRootThread", limit: 2 },
    });
    parent.release();
  });

  it("routes a call naming a linked environment by its own id to the link its tasks run behind", async () => {
    const forwarder = lab.host.container.resolve(ReachForwarder);
    // No answer from env_mac was seen by this forwarder: the id is known from the tasks alone.
    expect(await forwarder.destination("t3_thread_list", { environmentId: "env_mac" })).toBe("mac");
    await expect(forwarder.destination("t3_thread_list", { environmentId: "env_unknown" })).rejects.toThrow(
      /env_unknown/,
    );
  });
});
