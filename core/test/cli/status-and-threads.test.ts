import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { ServeProcess, writeHomeConfig, type ServeEndpoint } from "../support/serve-process.js";

/** `switchyard status` and `switchyard threads list|read|send|wait` against a real server with a scripted provider. */
describe("switchyard status and threads (real serve, scripted provider)", () => {
  let root: string;
  let home: string;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;
  let threadId: string;
  const cli = (args: string[]) => runCli([...args, "--home", home], { timeoutMs: 120_000 });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "switchyard-threads-cli-"));
    home = join(root, "home");
    const workspace = join(root, "work");
    mkdirSync(workspace);
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: { gateDir: join(root, "gates"), stateDir: join(root, "state") } },
      ],
    });
    const project = await cli(["project", "add", workspace, "--json"]);
    expect(project.code, project.stderr).toBe(0);
    const projectId = (JSON.parse(project.stdout) as { id: string }).id;
    const issued = JSON.parse((await cli(["token", "issue", "--json"])).stdout) as { token: string };
    serve = ServeProcess.start(home);
    endpoint = await serve.ready;
    const client = await connectMcp(endpoint.mcpUrl, issued.token);
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      projectId,
      threads: [{ title: "greeter", prompt: "@@reply hello from alpha", target: { providerInstanceId: "alpha" } }],
    });
    threadId = created.threads[0]!.thread.threadId;
    await mustCall(client, "t3_thread_wait", { threadId, timeoutMs: 30_000 });
    await client.close();
  }, 120_000);
  afterAll(async () => {
    await serve?.terminate();
    rmSync(root, { recursive: true, force: true });
  });

  it("status says the server runs, where, and what the home holds", async () => {
    const status = await cli(["status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`server:      running at ${endpoint.mcpUrl} (pid ${serve.pid}, up `);
    expect(status.stdout).toContain("threads:     1 (0 with a run under way)");
    const json = JSON.parse((await cli(["status", "--json"])).stdout) as {
      server: { mcpUrl: string; uptimeMs: number };
      threads: number;
    };
    expect(json.server.mcpUrl).toBe(endpoint.mcpUrl);
    expect(json.threads).toBe(1);
  });

  // Seven CLI processes in a row: under a full parallel suite each can take seconds to start.
  it("threads list and read show the thread and its reply; send starts a turn and wait prints its answer", async () => {
    const list = await cli(["threads", "list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${threadId}\\s+greeter\\s+alpha\\S*\\s+completed\\s+0\\s+root`));
    const read = await cli(["threads", "read", threadId]);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toContain("[assistant] hello from alpha");

    const sent = await cli(["threads", "send", threadId, "@@reply second answer", "--json"]);
    expect(sent.code, sent.stderr).toBe(0);
    const { runId, delivery } = JSON.parse(sent.stdout) as { runId: string; delivery: string };
    expect(delivery).toBe("started");
    const waited = await cli(["threads", "wait", threadId, "--run", runId, "--timeout", "60s"]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain(`${runId}: completed`);
    expect(waited.stdout).toContain("second answer");

    // Each command's token lived only while it ran.
    const tokens = JSON.parse((await cli(["token", "list", "--all", "--json"])).stdout) as {
      label: string | null;
      status: string;
    }[];
    const terminal = tokens.filter((t) => t.label === "switchyard threads (this terminal command)");
    expect(terminal.length).toBeGreaterThanOrEqual(4);
    expect(terminal.every((t) => t.status === "revoked")).toBe(true);
  }, 180_000);

  it("threads search finds the thread by a word of its reply, and says when nothing matches", async () => {
    const found = await cli(["threads", "search", "hello", "alph"]);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toMatch(new RegExp(`${threadId}\\s+greeter\\s+assistant message\\s+hello from alpha`));
    const json = JSON.parse((await cli(["threads", "search", "alpha", "--json"])).stdout) as {
      thread: { threadId: string };
      snippet: { text: string };
    }[];
    expect(json.map((hit) => hit.thread.threadId)).toEqual([threadId]);
    const none = await cli(["threads", "search", "nowhere-to-be-found"]);
    expect([none.code, none.stdout.trim()]).toEqual([0, "No thread matches."]);
  });

  it("ui links to the running server's own address (server.json), not the configured port", async () => {
    const ui = await cli(["ui", "--json"]);
    expect(ui.code, ui.stderr).toBe(0);
    expect((JSON.parse(ui.stdout) as { link: string }).link).toMatch(new RegExp(`^${endpoint.url}/#code=sy_uc_`));
    expect(ui.stderr).not.toContain("No server runs");
  }, 60_000);

  it("names what is wrong: an unknown thread exits 3, an empty message 2, and no server 1", async () => {
    const unknown = await cli(["threads", "read", "thread_nope"]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/not_found|thread_not_found/);
    const empty = await cli(["threads", "send", threadId, "  "]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("The message is empty");
    const badMode = await cli(["threads", "send", threadId, "hi", "--mode", "shout"]);
    expect(badMode.code).toBe(2);

    expect(await serve.terminate()).toBe(0);
    const down = await cli(["threads", "list"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("No Switchyard server runs on");
    const status = await cli(["status"]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain("server:      not running");
    const ui = await cli(["ui"]);
    expect(ui.stdout).toMatch(/^http:\/\/127\.0\.0\.1:7410\/#code=/);
    expect(ui.stderr).toContain("yet: the link works once `switchyard serve` listens at http://127.0.0.1:7410.");
  }, 180_000);
});
