import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClaudeHome,
  createCodexHome,
  createOpenCodeHome,
  ScriptedModelServer,
  type ClaudeHome,
  type CodexHome,
  type OpenCodeHome,
} from "@switchyard/testkit";
import {
  createSilentLogger,
  McpSessionRegistry,
  startServer,
  SwitchyardHost,
  type RunningServer,
} from "../../src/index.js";
import { ApiClient } from "../support/api-client.js";
import { makeGitRepo, type GitRepo } from "../support/git-repo.js";

// Real harnesses in their own worktrees: a Codex parent (app-server) delegates to a Claude child
// (the Agent SDK's bundled claude) and an OpenCode child (opencode serve), each told by the
// scripted model server to write a file with its own shell tool; the parent applies the
// OpenCode child's changes with apply_changes over the real MCP endpoint, and a person (an API
// client) discards the Claude child's. Needs the built plugins.
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const CLAUDE_PLUGIN = fileURLToPath(new URL("../../../plugins/claude", import.meta.url));
const OPENCODE_PLUGIN = fileURLToPath(new URL("../../../plugins/opencode", import.meta.url));

describe("parallel work in worktrees with real Codex, Claude and OpenCode (scripted model)", () => {
  let server: ScriptedModelServer;
  let codexHome: CodexHome;
  let claudeHome: ClaudeHome;
  let openCodeHome: OpenCodeHome;
  let host: SwitchyardHost;
  let http: RunningServer;
  let repo: GitRepo;
  let home: string;
  let projectId: string;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    claudeHome = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake" });
    openCodeHome = await createOpenCodeHome({
      modelServerUrl: server.url,
      config: {
        provider: {
          fake: {
            npm: "@ai-sdk/openai-compatible",
            name: "Fake",
            options: { baseURL: `${server.url}/v1`, apiKey: "sk-switchyard-testkit-dummy" },
            models: { "fake-model": { name: "Fake Model", tool_call: true } },
          },
        },
      },
    });
    home = mkdtempSync(join(tmpdir(), "switchyard-parallel-"));
    host = await SwitchyardHost.create({
      home,
      builtinPluginsDir: null,
      logger: createSilentLogger(),
      config: {
        plugins: [CODEX_PLUGIN, CLAUDE_PLUGIN, OPENCODE_PLUGIN],
        providers: [
          { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
          { id: "claude", driver: "claude", homePath: claudeHome.home, environment: claudeHome.env },
          {
            id: "opencode",
            driver: "opencode",
            options: { configFile: openCodeHome.configPath },
            environment: openCodeHome.env,
          },
        ],
        // The parent waits for each child inside one tool call.
        server: { maxWaitMs: 300_000 },
      },
    });
    http = await startServer(host, { port: 0 });
    repo = makeGitRepo({ "README.md": "the project\n" });
    projectId = (await host.projects.add(repo.path, "repo")).id;
  }, 180_000);
  afterAll(async () => {
    await http?.close();
    await host?.stop();
    await claudeHome?.cleanup();
    await codexHome?.cleanup();
    await openCodeHome?.cleanup();
    await server?.close();
    repo?.cleanup();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  }, 60_000);

  it("each child writes in its own worktree; the parent applies one child's change set, a person discards the other's", async () => {
    const start = repo.head();
    const child = (provider: string, file: string) => ({
      task: `write ${file} @@shell printf 'written by ${provider}\\n' > ${file} @@then @@reply ${provider} wrote ${file}`,
      target: { providerInstanceId: provider },
      workspace: "worktree",
      title: `${provider} writes ${file}`,
      mode: "wait",
      timeoutMs: 280_000,
      clientRequestId: `parallel-${provider}`,
    });
    const prompt = [
      "fan out",
      `@@tool delegate_task ${JSON.stringify(child("claude", "claude.txt"))}`,
      `@@then @@tool delegate_task ${JSON.stringify(child("opencode", "opencode.txt"))}`,
      // The OpenCode task's result names its child thread: apply that child's changes here.
      '@@then @@tool apply_changes {"threadId":"{{output.childThreadId}}","clientRequestId":"apply-opencode"}',
      "@@then @@reply parent applied: {{output}}",
    ].join(" ");
    const parent = (
      await host.threads.createThread({
        projectId,
        providerInstanceId: "codex",
        prompt,
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    const done = await host.threads.waitForRun({ threadId: parent, timeoutMs: 600_000 });
    expect(done.run?.status, JSON.stringify(done.run?.error)).toBe("completed");

    const tasks = host.store.select("delegatedTask", "parent_thread_id = ?", [parent], "ORDER BY rowid");
    expect(tasks.map((task) => [task.providerInstanceId, task.status])).toEqual([
      ["claude", "completed"],
      ["opencode", "completed"],
    ]);
    const [claude, openCode] = tasks.map((task) => host.store.get("workspace", `workspace:${task.childThreadId}`)!);
    // Each harness worked in its own worktree, never in the parent's tree.
    for (const workspace of [claude!, openCode!]) {
      expect(workspace.path.startsWith(join(home, "worktrees"))).toBe(true);
      expect(host.store.get("thread", workspace.threadId)).toMatchObject({
        cwd: workspace.path,
        workspaceStrategy: "worktree",
      });
    }
    expect(repo.gitIn(claude!.path, "show", "HEAD:claude.txt")).toBe("written by claude");
    expect(readFileSync(join(claude!.path, "claude.txt"), "utf8")).toBe("written by claude\n");

    // The parent applied the OpenCode child's work: its file, in a commit named after the task.
    expect(openCode!.outcomes.map((entry) => `${entry.action}:${entry.outcome}`)).toEqual(["apply:applied"]);
    expect(repo.read("opencode.txt")).toBe("written by opencode\n");
    expect(existsSync(join(repo.path, "claude.txt"))).toBe(false);
    expect(repo.git("log", "--format=%s", `${start}..HEAD`)).toBe("opencode writes opencode.txt");
    expect(repo.status()).toBe("");
    expect(done.run?.summary).toContain("parent applied:");

    // A person discards the Claude child's work through the API.
    const api = new ApiClient(
      http.apiUrl,
      host.container
        .resolve(McpSessionRegistry)
        .issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:operate"], projects: [projectId] }).token,
    );
    const read = await api.get(`/threads/${encodeURIComponent(claude!.threadId)}/changes`);
    expect(read.body.files).toEqual([{ path: "claude.txt", status: "A", insertions: 1, deletions: 0 }]);
    const discarded = await api.post(`/threads/${encodeURIComponent(claude!.threadId)}/changes/discard`, {});
    expect(discarded.body).toMatchObject({ outcome: { outcome: "discarded" }, workspace: { status: "removed" } });
    expect(existsSync(claude!.path)).toBe(false);
    expect(repo.branches()).not.toContain(claude!.branch);
  }, 700_000);
});
