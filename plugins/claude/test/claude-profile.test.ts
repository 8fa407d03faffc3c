/**
 * A profile applied to the real Claude Code (the Agent SDK's bundled `claude`, offline against
 * the scripted model server, isolated temporary homes): a Claude parent delegates over the MCP
 * endpoint to the "reviewer" profile, whose child runs with its own CLAUDE_CONFIG_DIR, its own MCP server and a deny
 * rule on Bash. Needs the built plugin (`npx tsc -b plugins/claude`): the host loads `dist`.
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ScriptedModelServer,
  createClaudeHome,
  startTestHost,
  startTestMcpServer,
  type TestMcpServer,
  type ClaudeHome,
  type TestHost,
} from "@switchyard/testkit";
import { FAKE_MODEL, PLUGIN_DIR } from "./claude-lab.js";

const REVIEWER_INSTRUCTIONS = "You are the reviewer: report findings, most severe first.";

let server: ScriptedModelServer;
let instanceHome: ClaudeHome;
let reviewerHome: ClaudeHome;
let lab: TestHost;
/** The reviewer's own MCP server (a profile's `mcpServers`), with a bearer token in its header. */
let reviewerMcp: TestMcpServer;

beforeAll(async () => {
  if (!existsSync(path.join(PLUGIN_DIR, "dist", "index.js")))
    throw new Error("Build the plugin first: npx tsc -b plugins/claude");
  server = await ScriptedModelServer.start();
  instanceHome = await createClaudeHome({ modelServerUrl: server.url, model: FAKE_MODEL });
  reviewerHome = await createClaudeHome({ modelServerUrl: server.url, model: FAKE_MODEL });
  reviewerMcp = await startTestMcpServer();
  lab = await startTestHost({
    plugins: [PLUGIN_DIR],
    providers: [
      { id: "claude", driver: "claude", options: {}, homePath: instanceHome.home, environment: instanceHome.env },
    ],
    profiles: [
      {
        name: "reviewer",
        description: "Reviews a change; runs no shell commands",
        target: { providerInstanceId: "claude" },
        instructions: REVIEWER_INSTRUCTIONS,
        tools: { deny: ["Bash"] },
        harnessHome: reviewerHome.env["CLAUDE_CONFIG_DIR"],
        mcpServers: {
          probe: { type: "http", url: reviewerMcp.url, headers: { Authorization: `Bearer ${reviewerMcp.token}` } },
        },
      },
    ],
    serverConfig: { maxWaitMs: 120_000 },
  });
}, 60_000);

afterAll(async () => {
  await lab?.stop();
  await server?.close();
  await reviewerMcp?.close();
  for (const home of [instanceHome, reviewerHome]) await home?.cleanup();
}, 60_000);

type Item = { kind: string; text: string; status: string; data: Record<string, unknown> };
const items = (threadId: string): Item[] =>
  lab.host.store.select("item", "thread_id = ? AND kind = ?", [threadId, "tool_call"]) as unknown as Item[];

/** The transcript files Claude wrote under a config folder (`projects/<cwd>/<session>.jsonl`). */
function transcripts(configDir: string): string[] {
  const projects = path.join(configDir, "projects");
  if (!existsSync(projects)) return [];
  return readdirSync(projects, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".jsonl"));
}

describe("a profile on the real Claude Code", () => {
  it("the reviewer runs under its own CLAUDE_CONFIG_DIR, sees its instructions, and Claude refuses Bash", async () => {
    const marker = path.join(lab.workspace, "bash-ran");
    const childTask = `review-this-change @@tool !Bash {"command":"touch ${marker}"} @@then @@tool echo {"text":"from-reviewer"} @@then @@reply child saw: {{output}}`;
    const delegate = JSON.stringify({ task: childTask, profile: "reviewer", mode: "wait" });
    const parent = await lab.createThread(
      "claude",
      `delegate it @@tool delegate_task ${delegate} @@then @@reply parent got: {{output}}`,
      { runtimeMode: "full-access" },
    );
    const parentRun = await lab.waitForRun(parent, { timeoutMs: 180_000 });
    expect(parentRun.status, JSON.stringify(parentRun.error)).toBe("completed");

    const task = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent])[0]!;
    expect(task, "the parent delegated").toBeDefined();
    const child = lab.host.store.get("thread", task.childThreadId)!;
    expect(child.profile).toMatchObject({ name: "reviewer", source: "config" });
    expect(child.harness).toMatchObject({ harnessHome: reviewerHome.env["CLAUDE_CONFIG_DIR"] });
    expect(task.status).toBe("completed");

    // The model's first request for the child carries the profile's instructions and no Bash.
    const childRequests = server.requests.filter(
      (request) =>
        request.userText?.includes("review-this-change") === true && !request.userText.includes("delegate it"),
    );
    const first = childRequests.find((request) => request.stepIndex === 0)!;
    expect(first, "the child called the model").toBeDefined();
    expect(JSON.stringify(first.body).includes(REVIEWER_INSTRUCTIONS), "the profile's instructions").toBe(true);
    expect(first.toolNames).not.toContain("Bash");
    expect(first.toolNames).toContain("Read");
    // The model asked for Bash anyway; Claude refused it and the command never ran.
    const bash = items(child.id).find((item) => item.data["name"] === "Bash");
    expect(bash?.status).toBe("failed");
    expect(existsSync(marker)).toBe(false);
    expect(task.summary ?? "").toContain("child saw:");
    // The profile's own MCP server reached the child (and only the child), with its header.
    expect(first.toolNames).toContain("mcp__probe__echo");
    expect(reviewerMcp.calls).toEqual([{ tool: "echo", args: { text: "from-reviewer" } }]);
    expect(reviewerMcp.rejectedRequests).toBe(0);
    // The parent's own requests: no reviewer instructions, and Bash offered (the rule is the child's).
    const parentFirst = server.requests.find(
      (request) => request.userText?.includes("delegate it") === true && request.stepIndex === 0,
    )!;
    expect(JSON.stringify(parentFirst.body).includes(REVIEWER_INSTRUCTIONS)).toBe(false);
    expect(parentFirst.toolNames).toContain("Bash");
    expect(parentFirst.toolNames).not.toContain("mcp__probe__echo");

    // The child's conversation lives under the reviewer's CLAUDE_CONFIG_DIR, not the instance's.
    const childCursor = lab.host.store.select("providerSession", "thread_id = ?", [child.id])[0]!.resumeCursor!;
    const parentCursor = lab.host.store.select("providerSession", "thread_id = ?", [parent])[0]!.resumeCursor!;
    const reviewerFiles = transcripts(reviewerHome.env["CLAUDE_CONFIG_DIR"]!);
    const instanceFiles = transcripts(instanceHome.env["CLAUDE_CONFIG_DIR"]!);
    expect(reviewerFiles.some((file) => file.includes(childCursor))).toBe(true);
    expect(instanceFiles.some((file) => file.includes(childCursor))).toBe(false);
    expect(instanceFiles.some((file) => file.includes(parentCursor))).toBe(true);
  }, 240_000);
});
