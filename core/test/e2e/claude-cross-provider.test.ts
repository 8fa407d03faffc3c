import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClaudeHome,
  createCodexHome,
  createPiHome,
  ScriptedModelServer,
  startTestHost,
  type ClaudeHome,
  type CodexHome,
  type PiHome,
  type TestHost,
} from "@switchyard/testkit";

// The real Claude Agent SDK (its bundled claude), real Codex (app-server) and real Pi, all driven
// by one scripted model server, delegating through the real Switchyard MCP endpoint with their
// own session credentials. Claude runs with its tool search on (the SDK's default).
const CLAUDE_PLUGIN = fileURLToPath(new URL("../../../plugins/claude", import.meta.url));
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));

describe("cross-provider delegation end to end with Claude (real Claude Agent SDK, Codex and Pi, scripted model)", () => {
  let server: ScriptedModelServer;
  let claudeHome: ClaudeHome;
  let codexHome: CodexHome;
  let piHome: PiHome;
  let lab: TestHost;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    claudeHome = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake", toolSearch: true });
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    piHome = await createPiHome({ modelServerUrl: server.url });
    lab = await startTestHost({
      plugins: [CLAUDE_PLUGIN, CODEX_PLUGIN, PI_PLUGIN],
      providers: [
        { id: "claude", driver: "claude", homePath: claudeHome.home, environment: claudeHome.env },
        { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
        { id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await lab?.stop();
    await claudeHome?.cleanup();
    await codexHome?.cleanup();
    await piHome?.cleanup();
    await server?.close();
  }, 60_000);

  it("a Codex thread delegates to Claude and waits; Claude's answer reaches Codex's next model request", async () => {
    const task = {
      task: "review the plan @@reply Claude approves the plan",
      target: { providerInstanceId: "claude" },
      mode: "wait",
      clientRequestId: "codex-to-claude",
    };
    const threadId = await lab.createThread(
      "codex",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Codex relays: {{output.summary}}`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("Claude approves the plan");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      providerInstanceId: "claude",
      status: "completed",
      summary: "Claude approves the plan",
    });
    const child = lab.host.store.get("thread", tasks[0]!.childThreadId)!;
    expect(child).toMatchObject({
      providerInstanceId: "claude",
      lineage: { relationship: "subagent", parentThreadId: threadId },
    });
    // Claude got only the task: its first request's user text is the task prompt.
    expect(server.requests.some((r) => r.api === "anthropic-messages" && r.userText === task.task)).toBe(true);
    const followUp = server.requests.find(
      (r) => r.api === "openai-responses" && r.toolResult?.output.includes("Claude approves the plan"),
    );
    expect(followUp, "no Codex request carried the child's result").toBeDefined();
  }, 180_000);

  it("a Claude thread delegates to Pi in wait mode; Pi's result is in Claude's next model request", async () => {
    const task = {
      task: "count the files @@reply Pi counted 42 files",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      clientRequestId: "claude-to-pi",
    };
    const threadId = await lab.createThread(
      "claude",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Claude relays: {{output.summary}}`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toBe("Claude relays: Pi counted 42 files");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ providerInstanceId: "pi", status: "completed", summary: "Pi counted 42 files" });
    // The delegate_task call ran as a direct tool call (no ToolSearch step, tool search on) and
    // its result came back in Claude's next request.
    const claudeRequests = server.requests.filter(
      (r) => r.api === "anthropic-messages" && (r.userText ?? "").startsWith("delegate it"),
    );
    expect(claudeRequests[0]!.toolNames).toContain("mcp__switchyard__delegate_task");
    expect(claudeRequests[0]!.decision).toMatchObject({
      kind: "tool_call",
      tool: { name: "mcp__switchyard__delegate_task" },
    });
    const followUp = claudeRequests.find((r) => r.toolResult?.output.includes("Pi counted 42 files"));
    expect(followUp, "no Claude request carried the child's result").toBeDefined();
  }, 180_000);

  it("an approval-required Claude child asks before running a shell command and goes on once the approval is answered", async () => {
    const marker = join(lab.workspace, "claude-child-ran");
    const task = {
      // (No {{output}} here: the parent's scripted call would fill it in with its own.)
      task: `make the marker @@shell touch ${marker} && echo marker-made @@then @@reply child made it`,
      target: { providerInstanceId: "claude" },
      mode: "async",
      runtimeMode: "approval-required",
      clientRequestId: "approval-child",
    };
    const parent = await lab.createThread(
      "claude",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply started {{output.taskId}}`,
      { runtimeMode: "full-access" },
    );
    expect((await lab.waitForRun(parent, { timeoutMs: 120_000 })).status).toBe("completed");
    const [delegated] = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent]);
    expect(delegated).toBeDefined();
    const childId = delegated!.childThreadId;
    expect(lab.host.store.get("thread", childId)).toMatchObject({ runtimeMode: "approval-required" });
    const request = await lab.host.waiter.waitFor(
      async () => (await lab.host.threads.pendingRequests(childId)).find((r) => r.kind === "approval") ?? null,
      { timeoutMs: 60_000 },
    );
    expect(request, "the Claude child raised no approval").not.toBeNull();
    expect(request!.approvalKind).toBe("command");
    // Asked first: nothing ran yet, and the child's run waits.
    expect(existsSync(marker)).toBe(false);
    expect((await lab.host.threads.runs(childId, 1))[0]?.status).toBe("waiting");
    await lab.host.threads.respondToRequest(request!.id, { kind: "approval", decision: "accept" });
    const childRun = await lab.waitForRun(childId, { timeoutMs: 120_000 });
    expect(childRun.status, JSON.stringify(childRun.error)).toBe("completed");
    expect(childRun.summary).toBe("child made it");
    const command = lab.host.store.select("item", "thread_id = ? AND kind = 'tool_call'", [childId])[0];
    expect(command).toMatchObject({
      status: "completed",
      data: expect.objectContaining({ toolKind: "command", output: "marker-made" }),
    });
    expect(existsSync(marker)).toBe(true);
    expect(lab.host.store.get("runtimeRequest", request!.id)?.status).toBe("answered");
  }, 180_000);
});
