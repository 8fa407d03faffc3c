import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClaudeHome,
  createCodexHome,
  createOpenCodeHome,
  createPiHome,
  ScriptedModelServer,
  type ClaudeHome,
  type CodexHome,
  type OpenCodeHome,
  type PiHome,
  type RecordedRequest,
} from "@switchyard/testkit";
import { sqliteStore } from "../support/sqlite-store.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { DelegatedTaskRecord } from "../../src/store/records.js";
import { ApiClient } from "../support/api-client.js";
import { mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { scriptedInstance } from "../support/test-host.js";
import { until } from "../support/until.js";

// "Stop means stop", against real harnesses: a scripted hub delegates to real Codex, Claude
// (Agent SDK), OpenCode and Pi children; each child starts, through its harness's own shell
// tool, a background loop that calls the model every 50 ms, detached (setsid nohup) from its
// harness's process group, then waits on a held model answer. Each harness reaches
// the scripted model server through a base URL of its own (`routeUrl`), so every request says
// whose it was. task_cancel on the hub's task stops the tree; from the stop's commit on, no
// request of the tree may reach the model server, and no process of it may remain.
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const CLAUDE_PLUGIN = fileURLToPath(new URL("../../../plugins/claude", import.meta.url));
const OPENCODE_PLUGIN = fileURLToPath(new URL("../../../plugins/opencode", import.meta.url));
const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));

/**
 * The loop a child starts: a model request every 50 ms, each stamped with when it was sent. Once
 * running (so already in a session of its own), it creates the file named by its second argument.
 */
const LOOP_SCRIPT = `
import { writeFileSync } from "node:fs";
const url = process.argv[2];
writeFileSync(process.argv[3], String(process.pid));
const body = JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "background loop" }] });
setInterval(() => {
  fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-sent-at": String(Date.now()) }, body }).catch(() => undefined);
}, 50);
`;

/** Processes with `argument` among their arguments: pid, process group and session. */
function processesRunning(argument: string): { pid: number; pgid: number; sid: number }[] {
  const found: { pid: number; pgid: number; sid: number }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Whole arguments: the shell command that started a loop names the same script inside one.
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(argument)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z") continue;
      found.push({ pid: Number(entry), pgid: Number(fields[2]), sid: Number(fields[3]) });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Alive and not a zombie. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

describe("a stop silences a tree of real harnesses, the detached loops they started included", () => {
  let server: ScriptedModelServer;
  let codexHome: CodexHome;
  let claudeHome: ClaudeHome;
  let openCodeHome: OpenCodeHome;
  let piHome: PiHome;
  let lab: McpLab;
  const scratch = mkdtempSync(join(tmpdir(), "switchyard-stop-loop-"));
  const loopScript = join(scratch, "model-loop.mjs");
  /**
   * The shell command a harness runs to leave a loop calling `route` behind: the loop detached
   * (setsid nohup) from the harness's process group and session, and the command returning only
   * once the loop runs (at most 60 s). Returning at once would let the harness's end of the
   * command (a closed terminal's hangup, a group kill) reach the loop before it has left the
   * group, which a loaded machine made happen: the test needs a loop that did leave.
   */
  const detachedLoop = (route: string) => {
    const started = join(scratch, `${route}.started`);
    return (
      `setsid nohup ${process.execPath} ${loopScript} ${server.routeUrl(route)}/v1/chat/completions ${started} >/dev/null 2>&1 & ` +
      `for i in $(seq 600); do [ -e ${started} ] && break; sleep 0.1; done`
    );
  };

  beforeAll(async () => {
    writeFileSync(loopScript, LOOP_SCRIPT);
    server = await ScriptedModelServer.start();
    codexHome = await createCodexHome({ modelServerUrl: server.routeUrl("codex") });
    claudeHome = await createClaudeHome({ modelServerUrl: server.routeUrl("claude"), model: "claude-fake" });
    openCodeHome = await createOpenCodeHome({ modelServerUrl: server.routeUrl("opencode") });
    piHome = await createPiHome({ modelServerUrl: server.routeUrl("pi") });
    lab = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, CODEX_PLUGIN, CLAUDE_PLUGIN, OPENCODE_PLUGIN, PI_PLUGIN],
      providers: ({ home, gateDir }) => [
        scriptedInstance("hub", { gateDir, stateDir: join(home, "scripted-state") }),
        { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
        { id: "claude", driver: "claude", homePath: claudeHome.home, environment: claudeHome.env },
        {
          id: "opencode",
          driver: "opencode",
          options: { configFile: openCodeHome.configPath },
          environment: openCodeHome.env,
        },
        { id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await lab?.stop();
    await codexHome?.cleanup();
    await claudeHome?.cleanup();
    await openCodeHome?.cleanup();
    await piHome?.cleanup();
    await server?.close();
    for (const loop of processesRunning(loopScript)) process.kill(loop.pid, "SIGKILL");
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  const INSTANCES = ["codex", "claude", "opencode", "pi"];
  const HELD = INSTANCES.map((instance) => `${instance}-held`);
  const TREE_ROUTES = [...INSTANCES, ...INSTANCES.map((instance) => `loop-${instance}`)];
  const ofTree = (request: RecordedRequest) => request.route !== undefined && TREE_ROUTES.includes(request.route);
  const tasksUnder = (threadId: string) => lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);

  it("task_cancel on the hub: from the stop's commit on, no request of any child or of the loops they left reaches the model, and none of their processes remains", async () => {
    const root = await lab.liveAgent({ instance: "hub" });
    const child = (instance: string, task: string) => ({
      task,
      title: instance,
      mode: "async",
      target: { providerInstanceId: instance },
    });
    // Every child starts a loop through its harness's own shell tool (so each harness's tool
    // processes are shown to carry the mark), then waits on its held answer.
    const children = ["codex", "claude", "opencode", "pi"].map((instance) =>
      child(
        instance,
        `${instance} child @@shell ${detachedLoop(`loop-${instance}`)} @@then @@hold ${instance}-held @@reply ${instance} after stop`,
      ),
    );
    const hubTask =
      children.map((entry) => `@@tool delegate_task ${JSON.stringify(entry)}`).join(" ") +
      " @@gate hub-held @@reply hub after stop";
    const hub = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: hubTask,
      title: "hub",
      mode: "async",
      clientRequestId: "stop-hub",
    });

    // Every child is live, parked on a held model answer; the loops call the model on their own.
    for (const gate of HELD) await server.waitForHold(gate, 180_000);
    const loopRequests = (instance: string) =>
      server.requests.filter((request) => request.route === `loop-${instance}`).length;
    await until(
      "every background loop to call the model",
      () => INSTANCES.every((instance) => loopRequests(instance) >= 3),
      // As long as the holds above may take: four harnesses' loops start late on a loaded CI.
      { attempts: 1_800, intervalMs: 100 },
    ).catch((error: Error) => {
      const counts = INSTANCES.map((instance) => `${instance}: ${loopRequests(instance)}`).join(", ");
      const alive = processesRunning(loopScript).map((loop) => loop.pid);
      const commands = tasksUnder(hub.childThreadId).map((task) => ({
        instance: task.providerInstanceId,
        items: lab.host.store
          .select("item", "thread_id = ?", [task.childThreadId])
          .map((item) => `${item.kind} ${item.status} ${JSON.stringify(item.data).slice(0, 400)}`),
      }));
      const routes: Record<string, number> = {};
      for (const request of server.requests) routes[request.route ?? "-"] = (routes[request.route ?? "-"] ?? 0) + 1;
      const harnesses = sqliteStore(lab.host.store)
        .statement("SELECT pid, label, started_at FROM harness_processes")
        .all();
      throw new Error(
        `${error.message}; loop requests ${counts}; loops alive ${JSON.stringify(alive)}; requests by route ${JSON.stringify(routes)}; harnesses ${JSON.stringify(harnesses)}; ${JSON.stringify(commands)}`,
      );
    });
    const childTasks = tasksUnder(hub.childThreadId);
    expect(childTasks.map((task) => task.providerInstanceId).sort()).toEqual(["claude", "codex", "opencode", "pi"]);
    // The loops left their harnesses' process groups and sessions: no group signal reaches them.
    const loops = processesRunning(loopScript);
    expect(loops).toHaveLength(4);
    const harnessLeaders = (
      sqliteStore(lab.host.store).statement("SELECT pid FROM harness_processes").all() as { pid: number }[]
    ).map((row) => row.pid);
    for (const loop of loops) {
      expect(harnessLeaders).not.toContain(loop.pgid);
      expect(loop.sid).toBe(loop.pid);
    }

    // The stop's commit: the first committed batch that marks the hub's task cancelled. What
    // the server had recorded then is before it; a loop request recorded later must have been
    // sent (stamped) before it.
    let committed: { seq: number; at: number } | null = null;
    const unsubscribe = lab.host.engine.onEvents((events) => {
      if (committed !== null) return;
      const marked = events.some(
        (event) =>
          event.entity === "delegatedTask" &&
          (event.record as DelegatedTaskRecord).id === hub.taskId &&
          (event.record as DelegatedTaskRecord).cancelRequestedAt !== null,
      );
      if (marked) committed = { seq: server.requests.length, at: Date.now() };
    });
    const cancelled = await mustCall<{ cancelled: boolean }>(root.client, "task_cancel", {
      taskId: hub.taskId,
      reason: "stop means stop",
    });
    unsubscribe();
    expect(cancelled.cancelled).toBe(true);
    expect(committed).not.toBeNull();
    const commit = committed as unknown as { seq: number; at: number };

    // The tree ends: every task interrupted, every harness process and the loop gone.
    for (const task of [hub.taskId, ...childTasks.map((entry) => entry.id)]) {
      await until(`task ${task} to settle`, () => lab.host.store.get("delegatedTask", task)!.finalizedAt !== null, {
        attempts: 600,
        intervalMs: 100,
      });
      expect(lab.host.store.get("delegatedTask", task)).toMatchObject({
        status: "interrupted",
        cancelReason: "stop means stop",
      });
    }
    const treeThreads = childTasks.map((task) => task.childThreadId);
    await until(
      "the children's sessions to close",
      () => treeThreads.every((threadId) => lab.host.sessions.get(threadId) === null),
      { attempts: 600, intervalMs: 100 },
    );
    // (The root and the hub are in-process scripted agents: every harness process is the tree's.)
    await until(
      "the loops and every child's harness to be gone",
      () => [...loops.map((loop) => loop.pid), ...harnessLeaders].every((pid) => !running(pid)),
      { attempts: 600, intervalMs: 100 },
    );

    // Their held answers may come now; a harness still alive would take them and go on. Then a
    // new thread's turn runs through the same server: anything the tree still sent is in by then.
    for (const gate of HELD) server.release(gate);
    lab.release("hub-held");
    const probe = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "hub",
      prompt: "@@wait 500 @@reply probe done",
      runtimeMode: "full-access",
      createdBy: "user",
      creationSource: "cli",
    });
    expect((await lab.host.threads.waitForRun({ threadId: probe.thread.id, timeoutMs: 30_000 })).run?.status).toBe(
      "completed",
    );

    const after = server.requests.slice(commit.seq).filter(ofTree);
    const sentAfter = after.filter(
      (request) => !request.route!.startsWith("loop-") || Number(request.headers["x-sent-at"]) > commit.at,
    );
    expect(sentAfter.map((request) => `${request.route} ${request.method} ${request.path}`)).toEqual([]);
    // Nothing of the tree replied after the stop.
    const texts = treeThreads.flatMap((threadId) =>
      lab.host.store
        .select("item", "thread_id = ? AND kind = 'assistant_message'", [threadId])
        .map((item) => item.text),
    );
    expect(texts.filter((text) => text.includes("after stop"))).toEqual([]);
    root.release();
  }, 400_000);

  it("a token budget's stop: the loop a Pi child of the budgeted tree started sends nothing after the stop's commit", async () => {
    const root = await lab.liveAgent({ instance: "hub" });
    const loopCommand = detachedLoop("loop-budget");
    const piChild = {
      task: `pi budget child @@shell ${loopCommand} @@then @@hold pi-budget-held @@reply pi after stop`,
      title: "pi",
      mode: "async",
      target: { providerInstanceId: "pi" },
    };
    // A scripted sibling spends past the budget once its gate opens.
    const spender = {
      task: "@@gate budget-spend @@usage in=1200 out=300 @@reply spent",
      title: "spender",
      mode: "async",
    };
    const budgeted = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: `@@tool delegate_task ${JSON.stringify(piChild)} @@tool delegate_task ${JSON.stringify(spender)} @@gate budget-never @@reply never`,
      title: "budgeted",
      mode: "async",
      budget: { tokens: 1000 },
      clientRequestId: "budget-stop",
    });
    await server.waitForHold("pi-budget-held", 180_000);
    await until(
      "the loop to call the model",
      () => server.requests.filter((request) => request.route === "loop-budget").length >= 3,
      { attempts: 600, intervalMs: 100 },
    );
    const piTask = tasksUnder(budgeted.childThreadId).find((task) => task.providerInstanceId === "pi")!;
    const loops = processesRunning(`${server.routeUrl("loop-budget")}/v1/chat/completions`);
    expect(loops).toHaveLength(1);

    let committed: { seq: number; at: number } | null = null;
    const unsubscribe = lab.host.engine.onEvents((events) => {
      if (committed !== null) return;
      if (
        events.some(
          (event) =>
            event.entity === "delegatedTask" &&
            event.record.id === piTask.id &&
            (event.record as DelegatedTaskRecord).cancelRequestedAt !== null,
        )
      )
        committed = { seq: server.requests.length, at: Date.now() };
    });
    lab.release("budget-spend");
    await until("the budget to stop the pi child", () => committed !== null, { attempts: 600, intervalMs: 100 });
    unsubscribe();
    const commit = committed as unknown as { seq: number; at: number };
    await until("the pi task to settle", () => lab.host.store.get("delegatedTask", piTask.id)!.finalizedAt !== null, {
      attempts: 600,
      intervalMs: 100,
    });
    expect(lab.host.store.get("delegatedTask", piTask.id)).toMatchObject({
      status: "interrupted",
      cancelReason: "budget_exceeded:tokens",
    });
    await until("the loop to be gone", () => !running(loops[0]!.pid), { attempts: 600, intervalMs: 100 });
    await until("the pi child's session to close", () => lab.host.sessions.get(piTask.childThreadId) === null, {
      attempts: 600,
      intervalMs: 100,
    });

    server.release("pi-budget-held");
    const probe = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "hub",
      prompt: "@@wait 500 @@reply probe done",
      runtimeMode: "full-access",
      createdBy: "user",
      creationSource: "cli",
    });
    expect((await lab.host.threads.waitForRun({ threadId: probe.thread.id, timeoutMs: 30_000 })).run?.status).toBe(
      "completed",
    );
    const sentAfter = server.requests
      .slice(commit.seq)
      .filter(
        (request) =>
          (request.route === "loop-budget" && Number(request.headers["x-sent-at"]) > commit.at) ||
          (request.route === "pi" && (request.userText ?? "").startsWith("pi budget child")),
      );
    expect(sentAfter.map((request) => `${request.route} ${request.path}`)).toEqual([]);
    root.release();
  }, 300_000);

  it("Stop on a thread between turns: the loop its harness left running ends with the stop's commit, and so does the harness", async () => {
    const loopCommand = detachedLoop("idle-loop");
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "pi",
      prompt: `idle loop @@shell ${loopCommand} @@then @@reply loop started`,
      runtimeMode: "full-access",
      createdBy: "user",
      creationSource: "cli",
    });
    expect((await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 150_000 })).run?.status).toBe(
      "completed",
    );
    // The turn is over, the session idles (15 minutes by default), the loop goes on calling.
    const session = lab.host.sessions.get(thread.id);
    expect(session).not.toBeNull();
    const sent = server.requests.filter((request) => request.route === "idle-loop").length;
    await until(
      "the idle loop to keep calling the model",
      () => server.requests.filter((request) => request.route === "idle-loop").length >= sent + 3,
      { attempts: 600, intervalMs: 100 },
    );
    const loops = processesRunning(`${server.routeUrl("idle-loop")}/v1/chat/completions`);
    expect(loops).toHaveLength(1);

    let committed: { seq: number; at: number } | null = null;
    const unsubscribe = lab.host.engine.onEvents((events) => {
      if (
        committed === null &&
        events.some(
          (event) =>
            event.entity === "thread" &&
            event.record.id === thread.id &&
            (event.record as { stopped: boolean }).stopped,
        )
      )
        committed = { seq: server.requests.length, at: Date.now() };
    });
    const { token } = lab.registry.issueClientToken({ ttlMs: 600_000, capabilities: ["orchestration:operate"] });
    const stopped = await new ApiClient(`${lab.server.url}/api/v1`, token).post(`/threads/${thread.id}/stop`, {
      reason: "stop the idle loop",
    });
    unsubscribe();
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    expect(stopped.body).toMatchObject({ interruptedRunId: null });
    const commit = committed as unknown as { seq: number; at: number };
    expect(commit).not.toBeNull();

    await until(
      "the stopped thread's session to close",
      () => lab.host.store.get("providerSession", session!.providerSessionId)?.status === "closed",
      { attempts: 600, intervalMs: 100 },
    );
    expect(lab.host.store.get("providerSession", session!.providerSessionId)?.closeReason).toBe("stopped");
    await until("the loop to be gone", () => !running(loops[0]!.pid), { attempts: 600, intervalMs: 100 });
    // A later turn through the same server: anything the loop still sent is in by then.
    const probe = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "hub",
      prompt: "@@wait 500 @@reply probe done",
      runtimeMode: "full-access",
      createdBy: "user",
      creationSource: "cli",
    });
    expect((await lab.host.threads.waitForRun({ threadId: probe.thread.id, timeoutMs: 30_000 })).run?.status).toBe(
      "completed",
    );
    const sentAfter = server.requests
      .slice(commit.seq)
      .filter((request) => request.route === "idle-loop" && Number(request.headers["x-sent-at"]) > commit.at);
    expect(sentAfter).toEqual([]);
  }, 300_000);
});
