import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FakeCursorBackend,
  ScriptedModelServer,
  createCodexHome,
  createCursorHome,
  startTestHost,
  type CodexHome,
  type CursorHome,
  type TestHost,
} from "@switchyard/testkit";

// Real Codex (app-server, driven by the scripted model server) and the real Cursor SDK (in its
// sidecar, on the host's Node, pointed at the fake Cursor backend), delegating to each other through the
// real Switchyard MCP endpoint with their own session credentials.
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const CURSOR_PLUGIN = fileURLToPath(new URL("../../../plugins/cursor", import.meta.url));

describe("delegation end to end with Cursor (real Codex, the real Cursor SDK, the fake Cursor backend)", () => {
  let server: ScriptedModelServer;
  let backend: FakeCursorBackend;
  let codexHome: CodexHome;
  let cursorHome: CursorHome;
  let lab: TestHost;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    backend = await FakeCursorBackend.start();
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    cursorHome = await createCursorHome({ backendUrl: backend.url });
    lab = await startTestHost({
      plugins: [CODEX_PLUGIN, CURSOR_PLUGIN],
      providers: [
        { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
        { id: "cursor", driver: "cursor", homePath: cursorHome.home, environment: cursorHome.env },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await lab?.stop();
    await backend?.close();
    await server?.close();
    await codexHome?.cleanup();
    await cursorHome?.cleanup();
  }, 60_000);

  it("a Codex thread delegates to Cursor and waits; Cursor runs a command and its answer reaches Codex's next model request", async () => {
    // (No {{output}} in the task: the parent's scripted call would fill it in with its own.)
    const task = {
      task: "check the tree @@shell echo cursor-child-was-here @@then @@reply Cursor ran its command",
      target: { providerInstanceId: "cursor" },
      mode: "wait",
      clientRequestId: "codex-to-cursor",
    };
    const threadId = await lab.createThread(
      "codex",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Codex relays: {{output.summary}}`,
      {
        runtimeMode: "full-access",
      },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toBe("Codex relays: Cursor ran its command");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      providerInstanceId: "cursor",
      status: "completed",
      summary: "Cursor ran its command",
    });
    const child = lab.host.store.get("thread", tasks[0]!.childThreadId)!;
    expect(child).toMatchObject({
      providerInstanceId: "cursor",
      lineage: { relationship: "subagent", parentThreadId: threadId },
    });
    // Cursor got the task (with the host's instructions folded in) and ran the command itself.
    const cursorRun = backend.runs.find((r) => r.userText === task.task)!;
    expect(cursorRun.toolCalls).toEqual([
      expect.objectContaining({ kind: "shell", output: "cursor-child-was-here\n" }),
    ]);
    const command = lab.host.store.select("item", "thread_id = ? AND kind = 'tool_call'", [child.id])[0];
    expect(command).toMatchObject({
      status: "completed",
      data: expect.objectContaining({ toolKind: "command", output: "cursor-child-was-here\n" }),
    });
    const followUp = server.requests.find((r) => r.toolResult?.output.includes("Cursor ran its command"));
    expect(followUp, "no Codex request carried the child's result").toBeDefined();
  }, 180_000);

  it("a Cursor thread delegates to Codex through its own MCP credential and waits for the answer", async () => {
    const task = {
      task: "count the files @@reply Codex counted 7 files",
      target: { providerInstanceId: "codex" },
      mode: "wait",
      clientRequestId: "cursor-to-codex",
    };
    const threadId = await lab.createThread(
      "cursor",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Cursor relays: {{output.summary}}`,
      {
        runtimeMode: "full-access",
      },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toBe("Cursor relays: Codex counted 7 files");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks[0]).toMatchObject({
      providerInstanceId: "codex",
      status: "completed",
      summary: "Codex counted 7 files",
    });
    const cursorRun = backend.runs.find((r) => r.userText.startsWith("delegate it"))!;
    expect(cursorRun.toolCalls.map((call) => call.name)).toEqual(["switchyard-delegate_task"]);
    expect(cursorRun.mcpServers?.map((s) => [s.serverName, s.status])).toEqual([["switchyard", "connected"]]);
  }, 180_000);
});
