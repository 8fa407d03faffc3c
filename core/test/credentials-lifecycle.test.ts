import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { releaseGate, SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { TOKENS } from "../src/host/tokens.js";
import type { Clock } from "../src/util/clock.js";
import { runCli } from "./support/cli.js";
import { EngineChild } from "./support/engine-child.js";
import { untilGatesReached } from "./support/gates.js";
import { mustCall, connectMcp } from "./support/mcp-client.js";
import { McpLab } from "./support/mcp-lab.js";
import { readRows, ServeProcess, waitForRow, writeHomeConfig } from "./support/serve-process.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Real time plus an offset the test moves forward: credentials age without waiting. */
class ShiftedClock implements Clock {
  private offsetMs = 0;
  nowMs(): number {
    return Date.now() + this.offsetMs;
  }
  nowIso(): string {
    return new Date(this.nowMs()).toISOString();
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** A raw `tools/list` POST with a bearer token: the HTTP status says whether the token is accepted. */
function probe(mcpUrl: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      mcpUrl,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  });
}

describe("MCP credentials across a restart", () => {
  const dirs: string[] = [];
  let child: EngineChild | null = null;
  let serve: ServeProcess | null = null;
  afterEach(async () => {
    await child?.stop();
    child = null;
    await serve?.kill9();
    serve = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("gives a session reopened for a continued run its credential before it opens, and refuses the killed host's token", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-creds-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-creds-ws-"));
    dirs.push(workspace);

    child = EngineChild.startScripted(home, gateDir, join(root, "state"));
    await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    const threadId = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      prompt: "work @@gate reopened @@tool orchestrator_capabilities {}",
    });
    await child.call("waitFor", {
      sql: "SELECT 1 FROM attempts WHERE thread_id = ? AND status = 'running'",
      params: [threadId],
      timeoutMs: 15_000,
    });
    await untilGatesReached(gateDir, ["reopened"]);
    const [before] = await child.call<{ threadId: string; providerSessionId: string; token: string }[]>("grants");
    const firstUrl = (await child.ready).mcpUrl;
    expect((await probe(firstUrl, before!.token)).status).toBe(200);

    await child.kill9();
    child = EngineChild.startScripted(home, gateDir, join(root, "state"));
    const ready = await child.ready;
    expect(ready.report.continuedRuns).toHaveLength(1);
    expect((ready.report as unknown as { revokedCredentials: number }).revokedCredentials).toBeGreaterThanOrEqual(1);

    // The dead host's token no longer reads anything, even though nothing revoked it before the kill.
    const refused = await probe(ready.mcpUrl, before!.token);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("revoked");

    // The reopened session got its own credential, and its agent's tool call goes through.
    releaseGate(gateDir, "reopened");
    const waited = await child.call<{ run: { status: string; summary: string | null } }>("wait", {
      threadId,
      timeoutMs: 20_000,
    });
    expect(waited.run.status).toBe("completed");
    expect(waited.run.summary).toContain("tool orchestrator_capabilities -> ");
    expect(waited.run.summary).toContain('"callerKind":"agent"');
    const after = (await child.call<{ threadId: string; providerSessionId: string; token: string }[]>("grants")).filter(
      (g) => g.threadId === threadId,
    );
    expect(after).toHaveLength(1);
    expect(after[0]!.providerSessionId).not.toBe(before!.providerSessionId);
  }, 60_000);

  it("revokes every session's credential when serve shuts down on SIGTERM", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-sigterm-"));
    dirs.push(root);
    const home = join(root, "home");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-sigterm-ws-"));
    dirs.push(workspace);
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: { gateDir: join(root, "gates"), stateDir: join(root, "state") } },
      ],
    });
    const project = await runCli(["project", "add", workspace, "--json", "--home", home]);
    expect(project.code, project.stderr).toBe(0);
    const projectId = (JSON.parse(project.stdout) as { id: string }).id;
    const issued = await runCli(["token", "issue", "--json", "--home", home]);
    const { token } = JSON.parse(issued.stdout) as { token: string };

    serve = ServeProcess.start(home);
    const { mcpUrl } = await serve.ready;
    const client = await connectMcp(mcpUrl, token);
    await mustCall(client, "create_threads", {
      projectId,
      threads: [
        { prompt: "@@gate never-one @@reply one", target: { providerInstanceId: "alpha" } },
        { prompt: "@@gate never-two @@reply two", target: { providerInstanceId: "alpha" } },
      ],
    });
    await waitForRow(home, "SELECT COUNT(*) AS n FROM attempts WHERE status = 'running' HAVING n = 2");
    await client.close();
    expect(
      readRows(home, "SELECT id FROM mcp_credentials WHERE kind = 'provider_session' AND revoked_at IS NULL"),
    ).toHaveLength(2);

    expect(await serve.terminate()).toBe(0);
    const credentials = readRows<{ revoked_at: number | null }>(
      home,
      "SELECT revoked_at FROM mcp_credentials WHERE kind = 'provider_session'",
    );
    expect(credentials).toHaveLength(2);
    for (const credential of credentials) expect(credential.revoked_at).not.toBeNull();
    const sessions = readRows<{ status: string; reason: string }>(
      home,
      "SELECT status, json_extract(data, '$.closeReason') AS reason FROM provider_sessions",
    );
    expect(sessions).toEqual([
      { status: "closed", reason: "server_shutdown" },
      { status: "closed", reason: "server_shutdown" },
    ]);
    // The client token is not a session's: it stays.
    expect(readRows(home, "SELECT id FROM mcp_credentials WHERE kind = 'client' AND revoked_at IS NULL")).toHaveLength(
      1,
    );
  }, 60_000);
});

describe("MCP credentials of live sessions (injectable clock)", () => {
  const clock = new ShiftedClock();
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ overrides: (container) => container.register(TOKENS.Clock, { useValue: clock }) });
  });
  afterAll(async () => lab.stop());

  const run = async (threadId: string, runId?: string) => {
    const waited = await lab.host.threads.waitForRun({ threadId, timeoutMs: 20_000, ...(runId ? { runId } : {}) });
    return waited.run!;
  };
  const sessionGrants = (threadId: string) => lab.registry.grants.filter((g) => g.threadId === threadId);

  it("keeps a quiet running turn's credential, and runs the idle clock from the session's last activity", async () => {
    const agent = await lab.liveAgent();
    const token = await lab.tokenFor(agent.threadId);
    // 45 minutes of work that reaches no tool (idle expiry is 30): the turn still runs.
    clock.advance(45 * MINUTE);
    expect((await probe(lab.server.mcpUrl, token)).status).toBe(200);

    // The turn ends 20 minutes later; its last events are provider activity.
    clock.advance(20 * MINUTE);
    agent.release();
    expect((await run(agent.threadId)).status).toBe("completed");
    clock.advance(20 * MINUTE);
    expect((await probe(lab.server.mcpUrl, token)).status).toBe(200);

    // No turn, no activity: idle expiry applies again.
    clock.advance(31 * MINUTE);
    const idle = await probe(lab.server.mcpUrl, token);
    expect(idle.status).toBe(401);
    expect(idle.body).toContain("idle");
  });

  it("hands a live session that declares tools.mcpGrantUpdate a new credential before the old one's lifetime ends", async () => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      prompt:
        "rotate @@gate rotate-a @@tool orchestrator_capabilities {} @@gate rotate-b @@tool orchestrator_capabilities {}",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.waitForLiveTurn(thread.id);
    const [first] = sessionGrants(thread.id);
    expect(first).toBeDefined();

    // Past the renewal point (three quarters of the 8 h lifetime); the next provider event renews.
    clock.advance(6 * HOUR + MINUTE);
    lab.release("rotate-a");
    const renewed = await lab.host.waiter.waitFor(
      () => (sessionGrants(thread.id).length === 2 ? sessionGrants(thread.id)[1]! : null),
      { timeoutMs: 10_000 },
    );
    expect(renewed, "the session was not handed a new credential").not.toBeNull();
    expect(renewed!.providerSessionId).toBe(first!.providerSessionId);
    expect(renewed!.grant.token).not.toBe(first!.grant.token);

    // The old token overlaps briefly (calls on their way), then expires well before its own 8 h.
    const rows = (await lab.registry.list({ includeProviderSessions: true })).filter(
      (c) => c.providerSessionId === first!.providerSessionId,
    );
    expect(rows).toHaveLength(2);
    const oldRow = rows[1]!; // newest first
    expect(Date.parse(oldRow.expiresAt)).toBeLessThanOrEqual(clock.nowMs() + MINUTE);
    clock.advance(2 * HOUR);
    const expired = await probe(lab.server.mcpUrl, first!.grant.token);
    expect(expired.status).toBe(401);
    expect(expired.body).toContain("expired");
    expect((await probe(lab.server.mcpUrl, renewed!.grant.token)).status).toBe(200);

    // Eight hours in, the session's own tool calls still go through, on the new token.
    lab.release("rotate-b");
    const finished = await run(thread.id);
    expect(finished.status).toBe("completed");
    expect(finished.summary).toContain("tool orchestrator_capabilities -> ");
    expect(finished.summary).not.toContain("failed");
    expect(lab.host.store.select("providerSession", "thread_id = ?", [thread.id])).toHaveLength(1);
  });

  it("reopens a resumable session without tools.mcpGrantUpdate at its next turn, with a new credential and the same request scope", async () => {
    // beta resumes sessions but cannot take a new grant live.
    const rename = '@@tool t3_thread_update {"action":"rename","title":"kept","clientRequestId":"rename-1"}';
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "beta",
      prompt: rename,
      createdBy: "user",
      creationSource: "cli",
    });
    const firstRun = await run(thread.id);
    expect(firstRun.status).toBe("completed");
    const firstCommand = /"commandId":"([^"]+)"/.exec(firstRun.summary ?? "")?.[1];
    expect(firstCommand, firstRun.summary ?? "").toBeDefined();
    const [first] = sessionGrants(thread.id);

    // Past the first credential's whole lifetime: an unrenewed session would have lost its tools.
    clock.advance(8 * HOUR + MINUTE);
    const sent = await lab.host.threads.send({
      threadId: thread.id,
      text: rename,
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    const secondRun = await run(thread.id, sent.runId);
    expect(secondRun.status).toBe("completed");
    expect(secondRun.summary).not.toContain("failed");
    // The retried rename replays the first one: the reopened session kept the conversation's scope.
    expect(/"commandId":"([^"]+)"/.exec(secondRun.summary ?? "")?.[1]).toBe(firstCommand);
    expect(secondRun.summary).toContain('"replayed":true');

    const sessions = lab.host.store.select("providerSession", "thread_id = ?", [thread.id]);
    expect(sessions).toHaveLength(2);
    expect(sessions.find((s) => s.id === first!.providerSessionId)).toMatchObject({
      status: "closed",
      closeReason: "credential_renewal",
    });
    const revoked = await probe(lab.server.mcpUrl, first!.grant.token);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toContain("revoked");
    expect((await probe(lab.server.mcpUrl, await lab.tokenFor(thread.id))).status).toBe(200);
  });
});
