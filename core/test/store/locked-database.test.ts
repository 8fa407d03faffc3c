import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../support/api-client.js";
import { runCli } from "../support/cli.js";
import { untilGatesReached } from "../support/gates.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { ServeProcess, waitForRow, writeHomeConfig, type ServeEndpoint } from "../support/serve-process.js";
import { until } from "../support/until.js";

// Another connection holding Switchyard's database locked while a turn's events arrive: a real
// `serve`, the scripted provider, and a second process with a real SQLite write transaction open
// on the same file (what a CLI command, a migration or a sqlite3 shell does). The run must
// complete: a lock delays what the store writes, it never fails or loses a turn.

const LOCK_HOLDER = fileURLToPath(new URL("../fixtures/write-lock-holder.mjs", import.meta.url));
/** The server's busy timeout here: a lock held longer than this is a "persistent" one. */
const BUSY_TIMEOUT_MS = 400;

/** A process with a write transaction open on `file` until `release()`. */
async function holdWriteLock(file: string): Promise<{ release: () => Promise<void>; child: ChildProcess }> {
  const child = spawn(process.execPath, [LOCK_HOLDER, file], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  const said = (word: string) =>
    new Promise<void>((resolve, reject) => {
      lines.on("line", (line) => line === word && resolve());
      child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before saying ${word}`)));
    });
  await said("locked");
  return {
    child,
    release: async () => {
      const released = said("released");
      child.stdin!.end("release\n");
      await released;
    },
  };
}

/** Whether the scripted provider has saved a finished exchange answering `reply` (it emits the turn's end right after). */
function providerAnswered(stateDir: string, reply: string): boolean {
  if (!existsSync(stateDir)) return false;
  return readdirSync(stateDir).some((file) =>
    (JSON.parse(readFileSync(join(stateDir, file), "utf8")) as { assistant: string | null }[]).some(
      (exchange) => exchange.assistant === reply,
    ),
  );
}

describe("a database another process holds locked (real serve, scripted provider, a second SQLite connection)", () => {
  let root: string;
  let home: string;
  let gateDir: string;
  let stateDir: string;
  let projectId: string;
  let token: string;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;
  let client: Client;
  const holders: ChildProcess[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "switchyard-locked-db-"));
    home = join(root, "home");
    gateDir = join(root, "gates");
    stateDir = join(root, "state");
    const workspace = join(root, "work");
    mkdirSync(workspace);
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: { gateDir, stateDir } }],
      server: { storeBusyTimeoutMs: BUSY_TIMEOUT_MS },
    });
    const project = await runCli(["project", "add", workspace, "--json", "--home", home]);
    expect(project.code, project.stderr).toBe(0);
    projectId = (JSON.parse(project.stdout) as { id: string }).id;
    token = (JSON.parse((await runCli(["token", "issue", "--json", "--home", home])).stdout) as { token: string })
      .token;
    serve = ServeProcess.start(home);
    endpoint = await serve.ready;
    client = await connectMcp(endpoint.mcpUrl, token);
  }, 120_000);

  afterAll(async () => {
    for (const holder of holders) holder.kill("SIGKILL");
    await client?.close();
    await serve?.terminate();
    rmSync(root, { recursive: true, force: true });
  });

  async function threadAtGate(gate: string, reply: string): Promise<string> {
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      projectId,
      threads: [{ title: gate, prompt: `@@gate ${gate} @@reply ${reply}`, target: { providerInstanceId: "alpha" } }],
    });
    await untilGatesReached(gateDir, [gate], 60_000);
    return created.threads[0]!.thread.threadId;
  }

  async function finishedRun(threadId: string): Promise<{ status: string; summary: string | null }> {
    return waitForRow<{ status: string; summary: string | null }>(
      home,
      "SELECT json_extract(data, '$.status') AS status, json_extract(data, '$.summary') AS summary FROM runs WHERE thread_id = ? AND json_extract(data, '$.status') IN ('completed', 'failed', 'interrupted', 'cancelled')",
      [threadId],
      60_000,
    );
  }

  it("completes a turn whose events arrive while another process holds the write lock briefly", async () => {
    const threadId = await threadAtGate("brief-lock", "answered under a lock");
    const lock = await holdWriteLock(join(home, "switchyard.db"));
    holders.push(lock.child);
    releaseGate(gateDir, "brief-lock");
    // The provider has emitted the turn's reply and end: the server is writing them now.
    await until("the provider to answer", () => providerAnswered(stateDir, "answered under a lock"), {
      attempts: 600,
      intervalMs: 50,
    });
    await lock.release();
    expect(await finishedRun(threadId)).toEqual({ status: "completed", summary: "answered under a lock" });
  }, 120_000);

  it("keeps a turn's events through a lock held past the busy timeout, answers calls meanwhile with a typed busy error, and completes the run", async () => {
    const threadId = await threadAtGate("long-lock", "answered after a long lock");
    const lock = await holdWriteLock(join(home, "switchyard.db"));
    holders.push(lock.child);
    const logged = serve.stderr.length;
    releaseGate(gateDir, "long-lock");
    await until("the provider to answer", () => providerAnswered(stateDir, "answered after a long lock"), {
      attempts: 600,
      intervalMs: 50,
    });
    // The events' commit gave up after the busy timeout; they wait in memory for the lock.
    await until(
      "the server to say its events wait",
      () => serve.stderr.slice(logged).includes("provider events wait for it"),
      { attempts: 600, intervalMs: 50 },
    );

    const refused = await callTool(client, "create_threads", {
      projectId,
      threads: [{ title: "not now", prompt: "@@reply no", target: { providerInstanceId: "alpha" } }],
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "orchestration_error",
      details: { reason: "store_busy", retryable: true },
    });
    expect(refused.ok === false && refused.message).toContain("stayed locked by another connection");
    const api = new ApiClient(`${endpoint.url}/api/v1`, token);
    const busy = await api.post(`/threads/${threadId}/messages`, { message: "@@reply later" });
    expect(busy.status).toBe(503);
    expect(busy.headers["retry-after"]).toBe("1");
    expect(busy.body).toMatchObject({ error: { code: "server_busy", details: { reason: "store_busy" } } });

    await lock.release();
    expect(await finishedRun(threadId)).toEqual({ status: "completed", summary: "answered after a long lock" });
    // Nothing of the refused calls was written: the thread has its one run.
    const runs = await waitForRow<{ n: number }>(home, "SELECT COUNT(*) AS n FROM runs WHERE thread_id = ?", [
      threadId,
    ]);
    expect(runs.n).toBe(1);
  }, 180_000);
});
