/**
 * Claude through a real Switchyard host: the plugin loaded by the plugin host, the MCP endpoint
 * on 127.0.0.1, and Claude calling back into it with the session's own credential, with Claude
 * Code's tool search on (the SDK's default) and off. Needs the built plugin
 * (`npx tsc -b plugins/claude`): the host loads `dist`.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ScriptedModelServer,
  createClaudeHome,
  descendantCommandLines,
  startTestHost,
  type ClaudeHome,
  type TestHost,
} from "@switchyard/testkit";
import { FAKE_MODEL, PLUGIN_DIR } from "./claude-lab.js";

let server: ScriptedModelServer;
const homes: ClaudeHome[] = [];
let lab: TestHost;

/** One instance with Claude's tool search on, one with it off. */
const INSTANCES = { toolSearchOn: "claude-tool-search", toolSearchOff: "claude-no-tool-search" } as const;

/** The orchestration tools an agent must reach without a search step. */
const DIRECT_TOOLS = ["delegate_task", "task_status", "orchestrator_capabilities", "t3_thread_wait"];

beforeAll(async () => {
  if (!existsSync(path.join(PLUGIN_DIR, "dist", "index.js")))
    throw new Error("Build the plugin first: npx tsc -b plugins/claude");
  server = await ScriptedModelServer.start();
  const on = await createClaudeHome({ modelServerUrl: server.url, model: FAKE_MODEL, toolSearch: true });
  const off = await createClaudeHome({ modelServerUrl: server.url, model: FAKE_MODEL, toolSearch: false });
  homes.push(on, off);
  lab = await startTestHost({
    plugins: [PLUGIN_DIR],
    providers: [
      { id: INSTANCES.toolSearchOn, driver: "claude", options: {}, homePath: on.home, environment: on.env },
      { id: INSTANCES.toolSearchOff, driver: "claude", options: {}, homePath: off.home, environment: off.env },
    ],
    serverConfig: { maxWaitMs: 3_000 },
  });
}, 60_000);

afterAll(async () => {
  await lab?.stop();
  await server?.close();
  for (const home of homes) await home.cleanup();
}, 60_000);

type Item = { kind: string; text: string; status: string; data: Record<string, unknown> };
const items = (threadId: string): Item[] =>
  lab.host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position") as unknown as Item[];

describe("Claude through a Switchyard host", () => {
  for (const [setting, instance] of Object.entries(INSTANCES)) {
    it(`reaches the orchestration tools without a search step (${setting}), with the session's own credential`, async () => {
      const prompt = `check ${setting} @@tool orchestrator_capabilities {} @@then @@reply caps: {{output}}`;
      const threadId = await lab.createThread(instance, prompt, { runtimeMode: "full-access" });
      const run = await lab.waitForRun(threadId, { timeoutMs: 60_000 });
      expect(run.status, JSON.stringify(run.error)).toBe("completed");
      const first = server.requests.find((r) => r.userText === prompt && r.stepIndex === 0)!;
      // Offered directly in the first request, whatever tool search does to other MCP tools.
      for (const tool of DIRECT_TOOLS)
        expect(first.toolNames, `${tool} (${setting})`).toContain(`mcp__switchyard__${tool}`);
      if (setting === "toolSearchOn") expect(first.toolNames).toContain("ToolSearch");
      else expect(first.toolNames).not.toContain("ToolSearch");
      const call = items(threadId).find((item) => item.kind === "tool_call" && item.data["toolKind"] === "mcp");
      expect(call?.status).toBe("completed");
      expect(call!.data["name"]).toBe("mcp__switchyard__orchestrator_capabilities");
      // Only this session's credential makes the endpoint answer as this instance's agent.
      expect(String(call!.data["output"])).toContain(`"providerInstanceId":"${instance}"`);
      expect(String(call!.data["output"])).toContain('"callerKind":"agent"');
      // The shared instructions reached the model once: folded into the first prompt by the
      // host, never added again by the adapter.
      expect(JSON.stringify(first.body).split("You can coordinate other coding agents").length - 1).toBe(1);
      expect(first.parsed?.systemText).not.toContain("You can coordinate other coding agents");
    });
  }

  it("a blocking t3_thread_wait blocks Claude until the server's resumable pending result, and no process shows a token", async () => {
    const stuck = await lab.createThread(INSTANCES.toolSearchOn, "never ends @@hold claude-stuck", {
      runtimeMode: "full-access",
    });
    await server.waitForHold("claude-stuck", 60_000);
    const waiter = await lab.createThread(
      INSTANCES.toolSearchOn,
      `go @@tool t3_thread_wait {"threadId":"${stuck}"} @@then @@reply waited: {{output}}`,
      { runtimeMode: "full-access" },
    );
    // Two Claude sessions with Switchyard credentials are live now: none of our processes' command lines holds one.
    expect(descendantCommandLines().some((line) => line.includes("claude-agent-sdk-linux-x64/claude"))).toBe(true);
    await lab.host.waiter.waitFor(
      () =>
        lab.host.store.select("attempt", "thread_id = ? AND status = 'running'", [waiter]).length > 0 ? true : null,
      { timeoutMs: 60_000 },
    );
    expect(descendantCommandLines().filter((line) => /\bsy_[A-Za-z0-9_-]{16,}/.test(line))).toEqual([]);
    const run = await lab.waitForRun(waiter, { timeoutMs: 60_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const call = items(waiter).find(
      (item) => item.kind === "tool_call" && item.data["name"] === "mcp__switchyard__t3_thread_wait",
    );
    expect(call?.status).toBe("completed");
    const output = JSON.parse(String(call!.data["output"])) as {
      waitTimedOut: boolean;
      status: string;
      threadId: string;
    };
    expect(output).toMatchObject({ threadId: stuck, waitTimedOut: true, status: "running" });

    await lab.host.threads.interrupt({ threadId: stuck });
    expect(["interrupted", "cancelled"]).toContain((await lab.waitForRun(stuck, { timeoutMs: 60_000 })).status);
    server.release("claude-stuck");
  });
});
