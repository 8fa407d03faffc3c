import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCodexHome,
  createPiHome,
  ScriptedModelServer,
  startTestHost,
  type CodexHome,
  type PiHome,
  type TestHost,
} from "@switchyard/testkit";

// Real Codex (app-server) and real Pi, both driven by one scripted model server, delegating to
// each other through the real Switchyard MCP endpoint with their own session credentials.
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));

describe("cross-provider delegation end to end (real Codex and Pi, scripted model)", () => {
  let server: ScriptedModelServer;
  let codexHome: CodexHome;
  let piHome: PiHome;
  let lab: TestHost;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    piHome = await createPiHome({ modelServerUrl: server.url });
    lab = await startTestHost({
      plugins: [CODEX_PLUGIN, PI_PLUGIN],
      providers: [
        { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
        { id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await lab?.stop();
    await codexHome?.cleanup();
    await piHome?.cleanup();
    await server?.close();
  }, 60_000);

  it("a Codex thread delegates to Pi and waits; Pi's answer reaches Codex's next model request", async () => {
    const task = {
      task: "greet the team @@reply Hello from Pi, the child",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      clientRequestId: "codex-to-pi",
    };
    const threadId = await lab.createThread(
      "codex",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Codex relays: {{output.summary}}`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("Hello from Pi, the child");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      providerInstanceId: "pi",
      status: "completed",
      summary: "Hello from Pi, the child",
    });
    // The child was Pi: its only user message is the task.
    const child = lab.host.store.get("thread", tasks[0]!.childThreadId)!;
    expect(child).toMatchObject({
      providerInstanceId: "pi",
      lineage: { relationship: "subagent", parentThreadId: threadId },
    });
    // Codex's follow-up model request carried Pi's result as the delegate_task output.
    const followUp = server.requests.find(
      (r) => r.toolResult?.output.includes("Hello from Pi, the child") && r.headers["originator"] !== undefined,
    );
    expect(followUp, "no Codex request carried the child's result").toBeDefined();
  }, 180_000);

  it("a Pi thread delegates to Codex and waits", async () => {
    const task = {
      task: "check the build @@reply Codex says the build is green",
      target: { providerInstanceId: "codex" },
      mode: "wait",
    };
    const threadId = await lab.createThread(
      "pi",
      `go ahead @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Pi relays: {{output.summary}}`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("Codex says the build is green");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks[0]).toMatchObject({ providerInstanceId: "codex", status: "completed" });
  }, 180_000);

  it("Codex delegates async, then reads the result with task_status", async () => {
    const task = {
      task: "summarise @@reply async summary from Pi",
      target: { providerInstanceId: "pi" },
      mode: "async",
      clientRequestId: "async-e2e",
    };
    // Step 1 delegates and returns at once; step 2 waits for the result (the taskId comes from
    // step 1's output); step 3 reads it with task_status.
    const prompt = [
      `start it @@tool delegate_task ${JSON.stringify(task)}`,
      `@@then @@tool delegate_task ${JSON.stringify({ ...task, mode: "wait" })}`,
      '@@then @@tool task_status {"taskId":"{{output.taskId}}"}',
      "@@then @@reply status: {{output.workState}} {{output.summary}}",
    ].join(" ");
    const threadId = await lab.createThread("codex", prompt, { runtimeMode: "full-access" });
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("result_available");
    expect(run.summary).toContain("async summary from Pi");
    expect(lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId])).toHaveLength(1);
  }, 180_000);
});
