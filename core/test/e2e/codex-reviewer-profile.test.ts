import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClaudeHome,
  createCodexHome,
  ScriptedModelServer,
  startTestHost,
  type ClaudeHome,
  type CodexHome,
  type TestHost,
} from "@switchyard/testkit";

// The end to end: a real Codex (app-server) parent delegates to the "reviewer" profile,
// which runs the real Claude Code with its own CLAUDE_CONFIG_DIR and a deny rule on Bash; one
// scripted model server answers both, offline, in temporary homes.
const CLAUDE_PLUGIN = fileURLToPath(new URL("../../../plugins/claude", import.meta.url));
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const REVIEWER_INSTRUCTIONS = "You are the reviewer: report findings, most severe first.";

describe("a Codex parent delegates to a Claude reviewer profile (real Codex and Claude Code, scripted model)", () => {
  let server: ScriptedModelServer;
  let claudeHome: ClaudeHome;
  let reviewerHome: ClaudeHome;
  let codexHome: CodexHome;
  let lab: TestHost;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    claudeHome = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake" });
    reviewerHome = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake" });
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    lab = await startTestHost({
      plugins: [CLAUDE_PLUGIN, CODEX_PLUGIN],
      providers: [
        { id: "claude", driver: "claude", homePath: claudeHome.home, environment: claudeHome.env },
        { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
      ],
      profiles: [
        {
          name: "reviewer",
          description: "Reviews a change; runs no shell commands",
          target: { providerInstanceId: "claude" },
          instructions: REVIEWER_INSTRUCTIONS,
          tools: { deny: ["Bash"] },
          harnessHome: reviewerHome.env["CLAUDE_CONFIG_DIR"],
        },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await lab?.stop();
    for (const home of [claudeHome, reviewerHome, codexHome]) await home?.cleanup();
    await server?.close();
  }, 60_000);

  it("the reviewer sees its instructions, runs under its own CLAUDE_CONFIG_DIR, and Claude refuses Bash", async () => {
    const marker = join(lab.workspace, "bash-ran");
    const task = {
      task: `review-this-change @@tool !Bash {"command":"touch ${marker}"} @@then @@reply reviewed: no findings`,
      profile: "reviewer",
      mode: "wait",
      clientRequestId: "codex-to-reviewer",
    };
    const threadId = await lab.createThread(
      "codex",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Codex relays: {{output.summary}}`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("reviewed: no findings");
    const [delegated] = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(delegated).toMatchObject({ providerInstanceId: "claude", status: "completed" });
    const child = lab.host.store.get("thread", delegated!.childThreadId)!;
    expect(child.profile).toMatchObject({ name: "reviewer", source: "config" });

    const first = server.requests.find(
      (r) => r.api === "anthropic-messages" && (r.userText ?? "").includes("review-this-change") && r.stepIndex === 0,
    )!;
    expect(first, "Claude called the model for the reviewer").toBeDefined();
    expect(JSON.stringify(first.body).includes(REVIEWER_INSTRUCTIONS), "the profile's instructions").toBe(true);
    expect(first.toolNames).not.toContain("Bash");
    const bash = lab.host.store
      .select("item", "thread_id = ? AND kind = 'tool_call'", [child.id])
      .find((item) => item.data["name"] === "Bash");
    expect(bash?.status).toBe("failed");
    expect(existsSync(marker)).toBe(false);

    const cursor = lab.host.store.select("providerSession", "thread_id = ?", [child.id])[0]!.resumeCursor!;
    const transcripts = (configDir: string) =>
      existsSync(join(configDir, "projects"))
        ? readdirSync(join(configDir, "projects"), { recursive: true, encoding: "utf8" }).filter((f) =>
            f.includes(cursor),
          )
        : [];
    expect(transcripts(reviewerHome.env["CLAUDE_CONFIG_DIR"]!)).toHaveLength(1);
    expect(transcripts(claudeHome.env["CLAUDE_CONFIG_DIR"]!)).toEqual([]);
  }, 180_000);
});
