import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import { isOrchestratorFailure, type OrchestratorFailure } from "../../src/engine/orchestrator-failure.js";
import { ReachLinkClient } from "../../src/services/reach/link-client.js";
import { ReachAudit } from "../../src/services/reach/reach-audit.js";
import type { GrantVerb } from "../../src/services/credentials/reach-grant.js";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { TOOL_GRANT_VERBS } from "../../src/services/reach/tool-grant-verbs.js";
import type { RuntimeMode } from "../../src/spec/index.js";
import { JumpClock } from "../support/jump-clock.js";
import { runCli } from "../support/cli.js";
import { McpLab } from "../support/mcp-lab.js";
import { sqliteStore } from "../support/sqlite-store.js";

/** The structured result of a tool call that must have succeeded. */
function ok<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`expected success, got ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** The typed failure of a tool call that must have failed. */
function failed(result: CallToolResult): { code: string; message: string; details: Record<string, unknown> } {
  expect(result.isError).toBe(true);
  return (
    JSON.parse((result.content[0] as { text: string }).text) as {
      error: { code: string; message: string; details: Record<string, unknown> };
    }
  ).error;
}

async function thrown(promise: Promise<unknown>): Promise<OrchestratorFailure> {
  try {
    await promise;
  } catch (error) {
    if (isOrchestratorFailure(error)) return error;
    throw error;
  }
  throw new Error("expected the call to throw");
}

/**
 * Calls across environments: two real Switchyard servers, each with its own home, store and
 * scripted providers, on separate loopback addresses (B on 127.0.0.2, A on 127.0.0.3). B issues
 * grants; A links to B with a grant's secret and calls B's MCP tools through its link client.
 * B authorizes every call against the grant, read afresh each time.
 */
describe("link secrets on the wire (A's link client calls B's MCP endpoint)", () => {
  let a: McpLab;
  let b: McpLab;
  const bClock = new JumpClock();
  let otherProject: string;
  let otherRoot: string;

  beforeAll(async () => {
    b = await McpLab.start({
      listen: { host: "127.0.0.2" },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: bClock }),
    });
    a = await McpLab.start({ listen: { host: "127.0.0.3" } });
    otherRoot = mkdtempSync(join(tmpdir(), "switchyard-reach-other-"));
    otherProject = (await b.host.projects.add(otherRoot, "other")).id;
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    rmSync(otherRoot, { recursive: true, force: true });
  });

  /** Issues a grant on B and links A to it under `name`. */
  function link(
    name: string,
    grant: { verbs: GrantVerb[]; projects?: string[] | "*"; maxRuntimeMode?: RuntimeMode; ttlMs?: number },
  ) {
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "linux-box",
      projects: grant.projects ?? [b.projectId],
      verbs: grant.verbs,
      maxRuntimeMode: grant.maxRuntimeMode ?? "auto-accept-edits",
      ttlMs: grant.ttlMs ?? 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name, url: b.server.url, secret: issued.secret });
    return issued.grant;
  }

  const client = () => a.host.container.resolve(ReachLinkClient);
  const threadCount = () => b.host.store.select("thread", "1 = 1").length;

  it("serves each server on its own loopback address", () => {
    expect(b.server.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    expect(a.server.url).toMatch(/^http:\/\/127\.0\.0\.3:\d+$/);
  });

  it("allows the granted verbs in the granted project: capabilities, create, read, send; the ceiling is the grant's", async () => {
    const grant = link("mac-full", { verbs: ["read", "create", "send"] });
    const connection = await client().connect("mac-full", { callerThreadId: "thr_on_a" });
    try {
      const caps = ok<{ callerKind: string; projects: { projectId: string }[] }>(
        await connection.callTool("orchestrator_capabilities", {}, { callerThreadId: "thr_on_a" }),
      );
      expect(caps.callerKind).toBe("environment");
      expect(caps.projects.map((p) => p.projectId)).toEqual([b.projectId]);
      const created = ok<{ threads: { thread: { threadId: string } }[] }>(
        await connection.callTool(
          "create_threads",
          {
            projectId: b.projectId,
            threads: [{ title: "from A", prompt: "@@reply hello from B", target: { providerInstanceId: "alpha" } }],
          },
          { callerThreadId: "thr_on_a" },
        ),
      );
      const threadId = created.threads[0]!.thread.threadId;
      const thread = b.host.store.get("thread", threadId)!;
      expect(thread.projectId).toBe(b.projectId);
      // Work started without a mode gets the grant's ceiling, never broader.
      expect(thread.runtimeMode).toBe("auto-accept-edits");
      const waited = ok<{ status: string }>(
        await connection.callTool(
          "t3_thread_wait",
          { threadId, timeoutMs: 30_000 },
          { callerThreadId: "thr_on_a", request: { timeout: 60_000 } },
        ),
      );
      expect(waited.status).toBe("completed");
      const read = ok<{ items: { text?: string }[] }>(
        await connection.callTool("t3_thread_read", { threadId }, { callerThreadId: "thr_on_a" }),
      );
      expect(JSON.stringify(read)).toContain("hello from B");
      ok(
        await connection.callTool(
          "t3_thread_send",
          { threadId, message: "@@reply again" },
          { callerThreadId: "thr_on_a" },
        ),
      );

      // Both sides recorded every call: B with the grant and A's caller, A with the link.
      const inRows = (await b.host.container.resolve(ReachAudit).list({ direction: "in" })).filter(
        (row) => row.grantId === grant.id,
      );
      expect(inRows.map((row) => [row.tool, row.verb, row.outcome])).toEqual([
        ["t3_thread_send", "send", "ok"],
        ["t3_thread_read", "read", "ok"],
        ["t3_thread_wait", "read", "ok"],
        ["create_threads", "create", "ok"],
        ["orchestrator_capabilities", "read", "ok"],
      ]);
      expect(inRows[3]).toMatchObject({
        environment: "linux-box",
        callerThreadId: "thr_on_a",
        remoteEnvironmentId: a.registry.environmentId,
        target: { projectIds: [b.projectId], threadIds: [threadId] },
      });
      const outRows = (await a.host.container.resolve(ReachAudit).list({ direction: "out" })).filter(
        (row) => row.environment === "mac-full",
      );
      expect(outRows.map((row) => [row.tool, row.verb, row.outcome])).toEqual(
        inRows.map((row) => [row.tool, row.verb, row.outcome]),
      );
      expect(outRows[3]).toMatchObject({
        callerThreadId: "thr_on_a",
        target: { projectIds: [b.projectId], threadIds: [threadId] },
      });
    } finally {
      await connection.close();
    }
  });

  it("refuses a verb the grant lacks (create, delegate), typed and naming it, with nothing created", async () => {
    const grant = link("mac-read", { verbs: ["read"] });
    const before = threadCount();
    const create = failed(
      await client().callTool("mac-read", "create_threads", {
        projectId: b.projectId,
        threads: [{ prompt: "@@reply no", target: { providerInstanceId: "alpha" } }],
      }),
    );
    expect(create).toMatchObject({
      code: "capability_denied",
      details: { grantId: grant.id, verb: "create", allowedVerbs: ["read"] },
    });
    expect(create.message).toContain('does not allow "create"');
    const launch = failed(
      await client().callTool("mac-read", "t3_thread_launch", {
        projectId: b.projectId,
        message: "@@reply no",
        target: { providerInstanceId: "alpha" },
      }),
    );
    expect(launch).toMatchObject({ code: "capability_denied", details: { verb: "create" } });
    const delegate = failed(
      await client().callTool("mac-read", "delegate_task", {
        task: "@@reply no",
        projectId: b.projectId,
        mode: "wait",
      }),
    );
    expect(delegate).toMatchObject({ code: "capability_denied", details: { grantId: grant.id, verb: "delegate" } });
    // A tool not offered across environments at all.
    const schedule = failed(await client().callTool("mac-read", "list_scheduled_tasks", {}));
    expect(schedule).toMatchObject({
      code: "capability_denied",
      details: { tool: "list_scheduled_tasks", reason: "tool" },
    });
    expect(threadCount()).toBe(before);
    const rows = (await b.host.container.resolve(ReachAudit).list({ direction: "in" })).filter(
      (row) => row.grantId === grant.id,
    );
    expect(rows.map((row) => [row.tool, row.outcome, row.reason])).toEqual([
      ["list_scheduled_tasks", "capability_denied", "tool"],
      ["delegate_task", "capability_denied", "verb"],
      ["t3_thread_launch", "capability_denied", "verb"],
      ["create_threads", "capability_denied", "verb"],
    ]);
  });

  it("refuses a project outside the grant, and answers for its threads as if they did not exist", async () => {
    const grant = link("mac-one-project", { verbs: ["read", "create"] });
    const elsewhere = (
      await b.host.threads.createThread({
        projectId: otherProject,
        providerInstanceId: "alpha",
        runtimeMode: "approval-required",
        interactionMode: "default",
        title: null,
        prompt: "@@reply private",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
    const before = threadCount();
    const create = failed(
      await client().callTool("mac-one-project", "create_threads", {
        projectId: otherProject,
        threads: [{ prompt: "@@reply no", target: { providerInstanceId: "alpha" } }],
      }),
    );
    expect(create).toMatchObject({
      code: "capability_denied",
      details: { grantId: grant.id, projectId: otherProject, allowedProjects: [b.projectId] },
    });
    expect(create.message).toContain(`Grant ${grant.id}`);
    const list = failed(await client().callTool("mac-one-project", "t3_thread_list", { projectId: otherProject }));
    expect(list).toMatchObject({ code: "capability_denied", details: { projectId: otherProject } });
    const read = failed(await client().callTool("mac-one-project", "t3_thread_read", { threadId: elsewhere.id }));
    expect(read.code).toBe("thread_not_found");
    expect(threadCount()).toBe(before);
  });

  it("refuses a runtime mode above the grant's ceiling, with nothing created", async () => {
    const grant = link("mac-ceiling", { verbs: ["create"], maxRuntimeMode: "approval-required" });
    const before = threadCount();
    const create = failed(
      await client().callTool("mac-ceiling", "create_threads", {
        projectId: b.projectId,
        threads: [{ prompt: "@@reply no", target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
      }),
    );
    expect(create).toMatchObject({
      code: "runtime_mode_escalation_denied",
      details: { grantId: grant.id, runtimeMode: "full-access", maxRuntimeMode: "approval-required" },
    });
    const launch = failed(
      await client().callTool("mac-ceiling", "t3_thread_launch", {
        projectId: b.projectId,
        message: "@@reply no",
        target: { providerInstanceId: "alpha" },
        runtimeMode: "auto-accept-edits",
      }),
    );
    expect(launch.code).toBe("runtime_mode_escalation_denied");
    expect(threadCount()).toBe(before);
  });

  it("stops the next call once the grant is revoked, on an open connection too", async () => {
    const grant = link("mac-revoked", { verbs: ["read"] });
    const connection = await client().connect("mac-revoked");
    try {
      ok(await connection.callTool("t3_thread_list", { projectId: b.projectId }));
      await b.host.container.resolve(ReachGrants).revoke(grant.id);
      const failure = await thrown(
        connection.callTool("t3_thread_list", { projectId: b.projectId }, { callerThreadId: "thr_on_a" }),
      );
      expect(failure).toMatchObject({
        code: "capability_denied",
        details: { environmentId: "mac-revoked", reason: "grant_revoked" },
      });
      // A new connection is refused as well.
      const again = await thrown(client().connect("mac-revoked"));
      expect(again.details.reason).toBe("grant_revoked");
    } finally {
      await connection.close();
    }
    const bRow = (await b.host.container.resolve(ReachAudit).list({ direction: "in" })).find(
      (row) => row.grantId === grant.id,
    )!;
    expect(bRow).toMatchObject({ tool: null, outcome: "capability_denied", reason: "revoked" });
    const aRows = (await a.host.container.resolve(ReachAudit).list({ direction: "out" })).filter(
      (row) => row.environment === "mac-revoked",
    );
    expect(aRows.map((row) => [row.tool, row.outcome, row.reason])).toEqual([
      [null, "capability_denied", "grant_revoked"],
      ["t3_thread_list", "capability_denied", "grant_revoked"],
      ["t3_thread_list", "ok", null],
    ]);
  });

  it("stops the next call once the grant expires", async () => {
    link("mac-expiring", { verbs: ["read"], ttlMs: 60_000 });
    const connection = await client().connect("mac-expiring");
    try {
      ok(await connection.callTool("t3_thread_list", { projectId: b.projectId }));
      bClock.advance(60_001);
      const failure = await thrown(connection.callTool("t3_thread_list", { projectId: b.projectId }));
      expect(failure).toMatchObject({ code: "capability_denied", details: { reason: "grant_expired" } });
    } finally {
      await connection.close();
    }
  });

  it("fails typed for an unknown link and for an unreachable peer", async () => {
    const unknown = await thrown(client().connect("nowhere"));
    expect(unknown).toMatchObject({
      code: "invalid_request",
      details: { environmentId: "nowhere", reason: "unknown_link" },
    });
    // A grant's secret for a server that is not listening (127.0.0.4: nothing there).
    const issued = b.host.container
      .resolve(ReachGrants)
      .issue({ for: "linux-box", projects: "*", verbs: ["read"], maxRuntimeMode: "approval-required", ttlMs: 60_000 });
    a.host.container.resolve(ReachLinks).add({ name: "mac-gone", url: "http://127.0.0.4:9", secret: issued.secret });
    const unreachable = await thrown(client().callTool("mac-gone", "t3_thread_list", { projectId: b.projectId }));
    expect(unreachable).toMatchObject({
      code: "provider_unavailable",
      details: { environmentId: "mac-gone", reason: "unreachable" },
    });
    const row = (await a.host.container.resolve(ReachAudit).list({ direction: "out" })).find(
      (entry) => entry.environment === "mac-gone",
    )!;
    expect(row).toMatchObject({
      tool: "t3_thread_list",
      verb: "read",
      outcome: "provider_unavailable",
      reason: "unreachable",
    });
  });

  it("classifies every tool for linked environments, and offers none that issues, widens or revokes a grant or a link", async () => {
    const names = b.server.mcp.toolNames();
    for (const name of names) expect(Object.hasOwn(TOOL_GRANT_VERBS, name), name).toBe(true);
    expect(names.filter((name) => /grant|environment|^link_(add|remove)|reach/.test(name))).toEqual([]);
    // Nor does the HTTP API: its only reach route reads the audit.
    const reachRoutes = b.server.api
      .routes()
      .filter((route) => /grant|link|reach|audit|environment/i.test(`${route.path} ${route.operationId}`));
    expect(reachRoutes.map((route) => [route.method, route.path])).toEqual([["GET", "/audit"]]);
    // A linked environment lists the same tools, but may call only the classified ones.
    const connection = await client().connect("mac-full");
    try {
      const listed = (await connection.client.listTools()).tools.map((tool) => tool.name);
      expect(listed).toEqual(names);
    } finally {
      await connection.close();
    }
  });

  it("reads the audit with switchyard audit and GET /api/v1/audit (a token for every project only)", async () => {
    const cliRows = await runCli(["audit", "--json", "--home", b.t.home, "--direction", "in", "--since", "1h"]);
    expect(cliRows.code, cliRows.stderr).toBe(0);
    const entries = JSON.parse(cliRows.stdout) as {
      direction: string;
      grantId: string;
      tool: string | null;
      outcome: string;
    }[];
    expect(entries.length).toBeGreaterThan(10);
    expect(entries.every((entry) => entry.direction === "in" && entry.grantId.startsWith("grant_"))).toBe(true);
    expect(entries).toEqual(
      JSON.parse(JSON.stringify(await b.host.container.resolve(ReachAudit).list({ direction: "in" }))),
    );
    const two = JSON.parse((await runCli(["audit", "--json", "--home", a.t.home, "--limit", "2"])).stdout) as {
      direction: string;
      environment: string;
    }[];
    expect(two).toHaveLength(2);
    expect(two.every((entry) => entry.direction === "out")).toBe(true);
    expect(
      JSON.parse((await runCli(["audit", "--json", "--home", a.t.home, "--since", "2999-01-01T00:00:00Z"])).stdout),
    ).toEqual([]);
    const table = await runCli(["audit", "--home", b.t.home, "--limit", "3"]);
    expect(table.stdout).toMatch(/AT\s+DIR\s+ENVIRONMENT/);
    const badLimit = await runCli(["audit", "--home", b.t.home, "--limit", "0"]);
    expect(badLimit.code).not.toBe(0);
    expect(badLimit.stderr).toContain("--limit takes a whole number");

    const { token } = b.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] });
    const api = await fetch(`${b.server.apiUrl}/audit?limit=5&direction=in`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(api.status).toBe(200);
    const body = (await api.json()) as { entries: { id: number }[] };
    expect(body.entries.map((entry) => entry.id)).toEqual(
      (await b.host.container.resolve(ReachAudit).list({ direction: "in", limit: 5 })).map((entry) => entry.id),
    );
    const scoped = b.registry.issueClientToken({
      ttlMs: 60_000,
      capabilities: ["orchestration:read"],
      projects: [b.projectId],
    });
    const refused = await fetch(`${b.server.apiUrl}/audit`, { headers: { authorization: `Bearer ${scoped.token}` } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("capability_denied");
    expect((await fetch(`${b.server.apiUrl}/audit`)).status).toBe(401);
  }, 60_000);

  it("never stores a secret in an audit row, and accepts link secrets on /mcp only", async () => {
    const issued = b.host.container
      .resolve(ReachGrants)
      .issue({ for: "linux-box", projects: "*", verbs: ["read"], maxRuntimeMode: "approval-required", ttlMs: 60_000 });
    const api = await fetch(`${b.server.apiUrl}/threads?projectId=${b.projectId}`, {
      headers: { authorization: `Bearer ${issued.secret}` },
    });
    expect(api.status).toBe(401);
    const rows = [
      ...sqliteStore(a.host.store).statement("SELECT * FROM reach_audit").all(),
      ...sqliteStore(b.host.store).statement("SELECT * FROM reach_audit").all(),
    ];
    expect(rows.length).toBeGreaterThan(10);
    expect(JSON.stringify(rows)).not.toMatch(/sy_link_/);
  });
});
