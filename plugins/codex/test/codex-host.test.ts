import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ScriptedModelServer, startTestHost, type TestHost } from "@switchyard/testkit";
import { MCP_TOKEN_ENV_VAR } from "../src/index.js";
import { PLUGIN_DIR, codexHome, eventually, processInfo, processesMentioning, type CodexHome } from "./codex-lab.js";

// The `codex` driver inside a real Switchyard host (startTestHost): real engine and store, the
// real MCP endpoint on 127.0.0.1 issuing each session its own credential, the plugin loaded from
// its built dist/ through the plugin host, and the real codex 0.171 app-server.

const INSTANCE = "codex-main";

let server: ScriptedModelServer;
let home: CodexHome;
let lab: TestHost;

beforeAll(async () => {
  server = await ScriptedModelServer.start();
  home = await codexHome(server.url);
  lab = await startTestHost({
    plugins: [PLUGIN_DIR],
    providers: [{ id: INSTANCE, driver: "codex", options: {}, homePath: home.home, environment: home.env }],
  });
});

afterAll(async () => {
  await lab?.stop();
  await server.close();
  await eventually(() => processesMentioning(home.home).length === 0, 10_000, "no Codex process outlives the host");
  await home.cleanup();
});

beforeEach(() => server.reset());

afterEach(async () => {
  // Each test's sessions close with the test, so the next one starts from a clean slate: its
  // app-servers gone too, so a test that looks for the app-server finds its own (a loaded CI
  // machine once listed the previous test's, still exiting, first).
  await lab.host.sessions.closeAll("test_done");
  await eventually(() => appServerPids().length === 0, 10_000, "the test's Codex app-servers exited");
});

type Item = { kind: string; status: string; text: string; data: Record<string, unknown> };

function items(threadId: string): Item[] {
  return lab.host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position") as unknown as Item[];
}

/** The app-server serving the thread right now (found through its CODEX_HOME and argv). */
function appServerPids(): number[] {
  return processesMentioning(home.home)
    .filter((proc) => proc.cmdline.trim().endsWith(" app-server"))
    .map((proc) => proc.pid);
}

describe("codex driver in a Switchyard host", () => {
  it("runs a thread's first message to a completed run with the assistant's reply", async () => {
    const threadId = await lab.createThread(INSTANCE, "@@reply hello through the host", { runtimeMode: "full-access" });
    const run = await lab.waitForRun(threadId);
    expect(run.status).toBe("completed");
    expect(
      items(threadId)
        .filter((item) => item.kind === "assistant_message")
        .map((item) => item.text),
    ).toEqual(["hello through the host"]);
  });

  it("calls back into the live MCP endpoint with the session's own credential", async () => {
    const threadId = await lab.createThread(INSTANCE, "@@tool orchestrator_capabilities {}", {
      runtimeMode: "full-access",
    });
    const run = await lab.waitForRun(threadId);
    expect(run.status).toBe("completed");
    const tool = items(threadId).find((item) => item.kind === "tool_call");
    expect(tool).toMatchObject({ status: "completed", text: "switchyard/orchestrator_capabilities" });
    expect(tool?.data).toMatchObject({
      toolKind: "mcp",
      server: "switchyard",
      name: "mcp__switchyard__orchestrator_capabilities",
    });
    // The endpoint answered as this session: an agent caller that inherits this instance.
    const output = String(tool?.data.output ?? "");
    expect(output).toContain('"callerKind":"agent"');
    expect(output).toContain(`"providerInstanceId":"${INSTANCE}"`);
    const back = await server.waitForRequest(
      (request) => request.toolResult?.toolName === "mcp__switchyard__orchestrator_capabilities",
    );
    expect(back.toolResult?.snippet).toContain(INSTANCE);

    // The credential lives only in the app-server's environment.
    const [pid] = appServerPids();
    expect(pid).toBeDefined();
    const token = processInfo(pid!).env[MCP_TOKEN_ENV_VAR];
    expect(token?.length ?? 0).toBeGreaterThan(16);
    for (const proc of processesMentioning(token!)) expect(proc.cmdline).not.toContain(token);
    expect(JSON.stringify(server.requests.map((request) => [request.headers, request.body]))).not.toContain(token);
  });

  it("keeps t3_thread_wait a direct tool when Codex defers MCP tools (a known model slug)", async () => {
    const threadId = await lab.createThread(INSTANCE, "which tools?", { runtimeMode: "full-access", model: "gpt-5.5" });
    expect((await lab.waitForRun(threadId)).status).toBe("completed");
    const request = await server.waitForRequest((r) => r.userText === "which tools?");
    const tools = (request.body as { tools: { type: string; name?: string }[] }).tools;
    // 0.171 puts MCP tools behind tool_search for known slugs; the -direct entry opts out.
    expect(tools.some((tool) => tool.type === "tool_search")).toBe(true);
    expect(request.toolNames).toContain("mcp__switchyard_direct__t3_thread_wait");
    expect(request.toolNames.filter((name) => name.startsWith("mcp__switchyard__"))).toEqual([]);
  });

  it("offers every Switchyard tool once, split across the two entries (unknown slug: nothing deferred)", async () => {
    const threadId = await lab.createThread(INSTANCE, "list tools", { runtimeMode: "full-access" });
    expect((await lab.waitForRun(threadId)).status).toBe("completed");
    const request = await server.waitForRequest((r) => r.userText === "list tools");
    const direct = request.toolNames.filter((name) => name.startsWith("mcp__switchyard_direct__"));
    const main = request.toolNames.filter((name) => name.startsWith("mcp__switchyard__"));
    expect(direct).toEqual(["mcp__switchyard_direct__t3_thread_wait"]);
    expect(main).toContain("mcp__switchyard__delegate_task");
    expect(main).not.toContain("mcp__switchyard__t3_thread_wait");
  });

  it("steers a running turn natively through the host (delivery steered)", async () => {
    const threadId = await lab.createThread(INSTANCE, "working @@hold host-steer @@reply held reply", {
      runtimeMode: "full-access",
    });
    await server.waitForHold("host-steer");
    await eventually(
      async () => (await lab.host.threads.runs(threadId))[0]?.status === "running",
      10_000,
      "the run is running",
    );
    const sent = await lab.host.threads.send({
      threadId,
      text: "HOST-STEER: change course",
      mode: "steer",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(sent.delivery).toBe("steered");
    await server.waitForRequest((request) => request.userText === "HOST-STEER: change course");
    server.release("host-steer");
    const run = await lab.waitForRun(threadId);
    expect(run.status).toBe("completed");
    expect(await lab.host.threads.runs(threadId)).toHaveLength(1);
  });

  it("interrupts a running turn through the host", async () => {
    const threadId = await lab.createThread(INSTANCE, "slow @@hold host-interrupt", { runtimeMode: "full-access" });
    await server.waitForHold("host-interrupt");
    await eventually(
      async () => (await lab.host.threads.runs(threadId))[0]?.status === "running",
      10_000,
      "the run is running",
    );
    expect((await lab.host.threads.interrupt({ threadId })).status).toBe("interrupt_requested");
    const run = await lab.waitForRun(threadId);
    expect(run.status).toBe("interrupted");
    server.release("host-interrupt");
  });

  it("resumes the Codex thread when the host reopens a closed session", async () => {
    const threadId = await lab.createThread(INSTANCE, "remember the word quokka", { runtimeMode: "full-access" });
    expect((await lab.waitForRun(threadId)).status).toBe("completed");
    await lab.host.sessions.close(threadId, "test_restart");
    const sent = await lab.host.threads.send({
      threadId,
      text: "what was the word?",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(sent.delivery).toBe("started");
    expect((await lab.waitForRun(threadId, { runId: sent.runId })).status).toBe("completed");
    const request = await server.waitForRequest((r) => r.userText === "what was the word?");
    expect(JSON.stringify((request.body as { input: unknown[] }).input)).toContain("remember the word quokka");
  });

  it("answers an approval through the host's runtime-request path", async () => {
    const threadId = await lab.createThread(INSTANCE, "@@shell touch host-approved.txt", {
      runtimeMode: "approval-required",
    });
    const request = await lab.host.waiter.waitFor(
      async () => (await lab.host.threads.pendingRequests(threadId))[0] ?? null,
      {
        timeoutMs: 20_000,
      },
    );
    expect(request).toMatchObject({ kind: "approval", approvalKind: "command" });
    expect((await lab.host.threads.runs(threadId))[0]?.status).toBe("waiting");
    await lab.host.threads.respondToRequest(request!.id, { kind: "approval", decision: "accept" });
    expect((await lab.waitForRun(threadId)).status).toBe("completed");
    expect(lab.host.store.get("runtimeRequest", request!.id)?.status).toBe("answered");
    const tool = items(threadId).find((item) => item.kind === "tool_call");
    expect(tool).toMatchObject({ status: "completed", text: "touch host-approved.txt" });
  });

  it("forks natively after a given run (thread/fork with lastTurnId) through the host's fork policy", async () => {
    const source = await lab.createThread(INSTANCE, "host-fork-alpha", { runtimeMode: "full-access" });
    const first = await lab.waitForRun(source);
    const sent = await lab.host.threads.send({
      threadId: source,
      text: "host-fork-beta",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    expect((await lab.waitForRun(source, { runId: sent.runId })).status).toBe("completed");

    const fork = await lab.host.forks.fork({
      sourceThreadId: source,
      afterRunId: first.id,
      createdBy: "user",
      creationSource: "cli",
    });
    expect(fork.strategy).toBe("native");
    const next = await lab.host.threads.send({
      threadId: fork.thread.id,
      text: "host-fork-gamma",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    expect((await lab.waitForRun(fork.thread.id, { runId: next.runId })).status).toBe("completed");
    const request = await server.waitForRequest((r) => r.userText === "host-fork-gamma");
    const history = JSON.stringify((request.body as { input: unknown[] }).input);
    expect(history).toContain("host-fork-alpha");
    expect(history).not.toContain("host-fork-beta");
  });
});
