import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { ReachEnvironment } from "../support/reach-environment.js";
import { readRows, waitForRow } from "../support/serve-process.js";

/**
 * A grant is for the environment that holds it, never for whoever that environment lets in.
 * Three real `switchyard serve` processes on 127.0.0.2 (A), 127.0.0.3 (B) and 127.0.0.4 (C),
 * each with its own home and scripted provider: B granted A, C granted B (and B linked C), C
 * granted nothing to A. Work that A started on B (a delegated child, its own sub-agent there, a
 * thread A created there, a message A sent to one of B's threads) may not call C through B's
 * link: `capability_denied` (`reason: "transitive"`) and a row in B's audit. B's own work calls C.
 */
describe("reach is never transitive", () => {
  let root: string;
  let a: ReachEnvironment;
  let b: ReachEnvironment;
  let c: ReachEnvironment;
  let onA: Client;
  let onB: Client;
  let grantForA: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "switchyard-transitive-"));
    [a, b, c] = await Promise.all([
      ReachEnvironment.create(root, "a", { host: "127.0.0.2" }),
      ReachEnvironment.create(root, "b", { host: "127.0.0.3" }),
      ReachEnvironment.create(root, "c", { host: "127.0.0.4" }),
    ]);
    const verbs = "read,create,send,delegate,cancel";
    const [forA, forB] = await Promise.all([b.issueGrant("a", verbs), c.issueGrant("b", verbs)]);
    grantForA = forA.id;
    await a.link("b", b.url, forA.secret);
    await b.link("c", c.url, forB.secret);
    await Promise.all([a.start(), b.start(), c.start()]);
    onA = await connectMcp(a.endpoint!.mcpUrl, await a.clientToken());
    onB = await connectMcp(b.endpoint!.mcpUrl, await b.clientToken());
  }, 120_000);

  afterAll(async () => {
    await onA?.close().catch(() => undefined);
    await onB?.close().catch(() => undefined);
    await Promise.all([a, b, c].map((environment) => environment?.kill9()));
    rmSync(root, { recursive: true, force: true });
  });

  /** A scripted turn that delegates to C through B's link; its reply starts with `key` and ends with the tool's answer. */
  const delegateToC = (key: string) =>
    `${key} @@tool delegate_task ${JSON.stringify({ environmentId: "c", target: { providerInstanceId: "alpha" }, task: `@@reply REACHED-C-${key}`, clientRequestId: key })}`;
  /** A scripted turn that delegates `task` to a child on this environment or the one named. */
  const delegate = (task: string, environmentId?: string) =>
    `@@tool delegate_task ${JSON.stringify({ ...(environmentId !== undefined ? { environmentId } : {}), target: { providerInstanceId: "alpha" }, task, mode: "wait", timeoutMs: 60_000 })}`;

  /** The summary of B's finished run whose reply starts with `key`. */
  const finishedOnB = async (key: string) =>
    (
      await waitForRow<{ summary: string }>(
        b.home,
        "SELECT json_extract(data, '$.summary') AS summary FROM runs WHERE status = 'completed' AND json_extract(data, '$.summary') LIKE ?",
        [`${key}:%`],
        60_000,
      )
    ).summary;
  const tasksOnC = () => readRows(c.home, "SELECT task_id FROM reach_foreign_tasks").length;
  const refusalsOnB = () =>
    readRows<{
      grant_id: string | null;
      link_name: string;
      verb: string;
      tool: string;
      outcome: string;
      reason: string;
      caller: string | null;
    }>(
      b.home,
      "SELECT grant_id, link_name, verb, tool, outcome, json_extract(data, '$.reason') AS reason, json_extract(data, '$.callerThreadId') AS caller FROM reach_audit WHERE direction = 'out' AND outcome != 'ok' ORDER BY id",
    );

  /** Asserts the run replied with a transitive refusal, C got nothing, and B audited it for A's grant. */
  function refusedOnB(summary: string, tasksBefore: number, refusalsBefore: number) {
    expect(summary).toContain('"code":"capability_denied"');
    expect(summary).toContain('"reason":"transitive"');
    expect(summary).toContain(`"grantId":"${grantForA}"`);
    expect(tasksOnC()).toBe(tasksBefore);
    const refusals = refusalsOnB();
    expect(refusals).toHaveLength(refusalsBefore + 1);
    expect(refusals.at(-1)).toMatchObject({
      grant_id: grantForA,
      link_name: "c",
      verb: "delegate",
      tool: "delegate_task",
      outcome: "capability_denied",
      reason: "transitive",
    });
  }

  it("B's own thread delegates to C through B's link", async () => {
    await mustCall(onB, "create_threads", {
      projectId: b.projectId,
      threads: [{ prompt: delegateToC("own-b"), target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
    });
    const summary = await finishedOnB("own-b");
    expect(summary).toContain('"taskId"');
    expect(tasksOnC()).toBe(1);
  });

  it("a child A delegated to B cannot delegate on to C", async () => {
    const [tasks, refusals] = [tasksOnC(), refusalsOnB().length];
    await mustCall(onA, "create_threads", {
      projectId: a.projectId,
      threads: [
        {
          prompt: delegate(delegateToC("a-child"), "b"),
          target: { providerInstanceId: "alpha" },
          runtimeMode: "full-access",
        },
      ],
    });
    refusedOnB(await finishedOnB("a-child"), tasks, refusals);
    // The refused caller is the child on B, whose foreign parent is A's thread.
    const child = readRows<{ parent_environment: string }>(
      b.home,
      "SELECT json_extract(data, '$.lineage.foreignParent.environmentId') AS parent_environment FROM threads WHERE id = ?",
      [refusalsOnB().at(-1)!.caller],
    );
    expect(child).toEqual([{ parent_environment: expect.any(String) }]);
  });

  it("nor can that child's own sub-agent on B", async () => {
    const [tasks, refusals] = [tasksOnC(), refusalsOnB().length];
    await mustCall(onA, "create_threads", {
      projectId: a.projectId,
      threads: [
        {
          prompt: delegate(delegate(delegateToC("a-grandchild")), "b"),
          target: { providerInstanceId: "alpha" },
          runtimeMode: "full-access",
        },
      ],
    });
    refusedOnB(await finishedOnB("a-grandchild"), tasks, refusals);
    const caller = refusalsOnB().at(-1)!.caller!;
    expect(
      readRows(b.home, "SELECT id FROM threads WHERE id = ? AND relationship = 'subagent'", [caller]),
    ).toHaveLength(1);
  });

  it("nor a thread that child launches on B, and it is shown no linked environments", async () => {
    const [tasks, refusals] = [tasksOnC(), refusalsOnB().length];
    const launch = `@@tool t3_thread_launch ${JSON.stringify({ message: delegateToC("a-launched"), target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" })}`;
    await mustCall(onA, "create_threads", {
      projectId: a.projectId,
      threads: [{ prompt: delegate(launch, "b"), target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
    });
    refusedOnB(await finishedOnB("a-launched"), tasks, refusals);
    // orchestrator_capabilities lists C to B's own agents only.
    await mustCall(onA, "create_threads", {
      projectId: a.projectId,
      threads: [
        {
          prompt: delegate("a-caps @@tool orchestrator_capabilities {}", "b"),
          target: { providerInstanceId: "alpha" },
          runtimeMode: "full-access",
        },
      ],
    });
    expect(await finishedOnB("a-caps")).not.toContain('"environments"');
    await mustCall(onB, "create_threads", {
      projectId: b.projectId,
      threads: [
        {
          prompt: "b-caps @@tool orchestrator_capabilities {}",
          target: { providerInstanceId: "alpha" },
          runtimeMode: "full-access",
        },
      ],
    });
    expect(await finishedOnB("b-caps")).toContain('"environmentId":"c"');
  });

  it("nor a thread A created on B", async () => {
    const [tasks, refusals] = [tasksOnC(), refusalsOnB().length];
    const created = await callTool(onA, "create_threads", {
      environmentId: "b",
      projectId: b.projectId,
      threads: [
        { prompt: delegateToC("a-created"), target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" },
      ],
    });
    expect(created.ok).toBe(true);
    refusedOnB(await finishedOnB("a-created"), tasks, refusals);
  });

  it("nor the run A's message starts in B's own thread; B's next message there reaches C again", async () => {
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(onB, "create_threads", {
      projectId: b.projectId,
      threads: [{ title: "b's idle thread", target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
    });
    const threadId = created.threads[0]!.thread.threadId;
    const [tasks, refusals] = [tasksOnC(), refusalsOnB().length];
    await mustCall(onA, "t3_thread_send", { environmentId: "b", threadId, message: delegateToC("a-sent") });
    refusedOnB(await finishedOnB("a-sent"), tasks, refusals);
    // The mark is on the run A's message started, not on B's thread.
    await mustCall(onB, "t3_thread_send", { threadId, message: delegateToC("b-sent") });
    expect(await finishedOnB("b-sent")).toContain('"taskId"');
    expect(tasksOnC()).toBe(tasks + 1);
  });
});
