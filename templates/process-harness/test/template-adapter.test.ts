import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type {
  McpEndpointGrant,
  OrchestrationAdapter,
  ProviderInstanceDescriptor,
  ProviderSession,
  RuntimeMode,
  SpawnOptions,
} from "@switchyard/sdk";
import {
  createAcpTestContext,
  createEventRecorder,
  startTestHost,
  startTestMcpServer,
  type AcpTestContext,
  type AdapterEventRecorder,
  type TestHost,
  type TestMcpServer,
} from "@switchyard/testkit";
import { createTemplateAdapter, templateOptionsSchema } from "../src/index.js";

const pluginDir = fileURLToPath(new URL("..", import.meta.url));

describe("template sessions", () => {
  let ctx: AcpTestContext;
  let home: string;
  let mcp: TestMcpServer;
  const spawned: { command: string; args: readonly string[]; env: Readonly<Record<string, string | undefined>> }[] = [];
  const sessions: ProviderSession[] = [];
  let turns = 0;

  beforeEach(async () => {
    ctx = await createAcpTestContext();
    home = mkdtempSync(join(tmpdir(), "template-home-"));
    mcp = await startTestMcpServer();
    // Record every launch, to see where the token went.
    const spawn = ctx.context.process.spawn.bind(ctx.context.process);
    ctx.context.process.spawn = (command: string, args: readonly string[], options: SpawnOptions) => {
      spawned.push({ command, args, env: options.env ?? {} });
      return spawn(command, args, options);
    };
  });

  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.close();
    spawned.splice(0);
    await ctx.dispose();
    await mcp.close();
    rmSync(home, { recursive: true, force: true });
  });

  async function adapter(driverOptions: Record<string, unknown> = {}): Promise<OrchestrationAdapter> {
    const instance: ProviderInstanceDescriptor = {
      id: "template-main",
      driver: "template",
      displayName: "Template",
      homePath: home,
      environment: {},
      customModels: [],
    };
    const options = await templateOptionsSchema.parseAsync(driverOptions);
    return createTemplateAdapter(instance, options, ctx.context);
  }

  function grant(): McpEndpointGrant {
    return {
      serverName: "switchyard",
      url: mcp.url,
      token: mcp.token,
      toolTimeoutMs: 30_000,
      blockingToolNames: [],
      instructions: "",
      stdioBridge: { command: "unused", args: [], env: {} },
    };
  }

  async function open(
    events: AdapterEventRecorder,
    options: {
      resumeCursor?: string | null;
      mcp?: McpEndpointGrant | null;
      driverOptions?: Record<string, unknown>;
    } = {},
  ): Promise<ProviderSession> {
    const session = await (
      await adapter(options.driverOptions)
    ).openSession({
      threadId: "thread-1",
      providerSessionId: `session-${sessions.length + 1}`,
      cwd: home,
      model: null,
      runtimeMode: "approval-required",
      interactionMode: "default",
      resumeCursor: options.resumeCursor ?? null,
      mcp: options.mcp ?? null,
      emit: events.emit,
    });
    sessions.push(session);
    return session;
  }

  async function turn(
    session: ProviderSession,
    events: AdapterEventRecorder,
    text: string,
    runtimeMode: RuntimeMode = "full-access",
  ) {
    const turnId = `turn-${++turns}`;
    await session.startTurn({
      turnId,
      runId: `run-${turns}`,
      text,
      instructions: null,
      model: null,
      runtimeMode,
      interactionMode: "default",
      restartOfTurnId: null,
    });
    return { turnId, terminal: events.waitFor("turn.terminal", (event) => event.turnId === turnId, 30_000) };
  }

  it("hands the harness the MCP endpoint and token in its environment, never on its command line", async () => {
    const events = createEventRecorder();
    const session = await open(events, { mcp: grant() });
    const { turnId, terminal } = await turn(session, events, '@mcp echo {"text":"through the grant"}');
    expect((await terminal).status).toBe("completed");
    // The test server refuses a request without the bearer token: the call went through with it.
    expect(mcp.calls).toEqual([{ tool: "echo", args: { text: "through the grant" } }]);
    expect(mcp.rejectedRequests).toBe(0);
    expect(events.textOf(turnId)).toContain("mcp: echo: through the grant");
    expect(events.ofTurn(turnId)).toContainEqual(
      expect.objectContaining({ type: "tool_call.started", kind: "mcp", server: "switchyard", name: "echo" }),
    );
    const [launch] = spawned;
    expect(launch!.env.TEMPLATE_MCP_TOKEN).toBe(mcp.token);
    expect(launch!.env.TEMPLATE_MCP_URL).toBe(mcp.url);
    expect(JSON.stringify([launch!.command, ...launch!.args])).not.toContain(mcp.token);
    expect(JSON.stringify(ctx.logs)).not.toContain(mcp.token);
  });

  it("gives a session without a grant no token at all, not even one left in the host's environment", async () => {
    process.env.TEMPLATE_MCP_TOKEN = "stale-token";
    try {
      const events = createEventRecorder();
      const session = await open(events);
      const { turnId, terminal } = await turn(session, events, "@mcp echo {}");
      expect((await terminal).status).toBe("completed");
      expect(events.textOf(turnId)).toContain("mcp error: no Switchyard MCP endpoint was injected");
      expect("TEMPLATE_MCP_TOKEN" in spawned[0]!.env && spawned[0]!.env.TEMPLATE_MCP_TOKEN !== undefined).toBe(false);
    } finally {
      delete process.env.TEMPLATE_MCP_TOKEN;
    }
  });

  it("raises an approval through the request book: a decline skips the command and the turn goes on", async () => {
    const events = createEventRecorder();
    const session = await open(events);
    const { turnId, terminal } = await turn(
      session,
      events,
      "@shell echo never-run\n@say after the decline",
      "approval-required",
    );
    const opened = await events.waitFor("runtime_request.opened", (event) => event.turnId === turnId);
    expect(opened.request).toMatchObject({ kind: "approval", approvalKind: "command", title: "echo never-run" });
    await session.respondToRuntimeRequest!(opened.requestId, { kind: "approval", decision: "decline" });
    expect((await terminal).status).toBe("completed");
    expect(events.ofTurn(turnId)).toContainEqual({
      type: "runtime_request.resolved",
      turnId,
      requestId: opened.requestId,
      resolution: "answered",
    });
    expect(events.ofTurn(turnId)).toContainEqual(
      expect.objectContaining({ type: "tool_call.completed", status: "declined" }),
    );
    expect(events.textOf(turnId)).toContain("after the decline");
    // An answer to a request that is gone is a typed error, not a second resolution.
    await expect(
      session.respondToRuntimeRequest!(opened.requestId, { kind: "approval", decision: "accept" }),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  it("tells the harness to cancel when the host dismisses an approval: the turn ends cancelled", async () => {
    const events = createEventRecorder();
    const session = await open(events);
    const { turnId, terminal } = await turn(
      session,
      events,
      "@shell echo never-run\n@say never said",
      "approval-required",
    );
    const opened = await events.waitFor("runtime_request.opened", (event) => event.turnId === turnId);
    await session.respondToRuntimeRequest!(opened.requestId, { kind: "dismiss" });
    expect((await terminal).status).toBe("cancelled");
    expect(events.ofTurn(turnId).filter((event) => event.type === "runtime_request.resolved")).toEqual([
      { type: "runtime_request.resolved", turnId, requestId: opened.requestId, resolution: "cancelled" },
    ]);
    expect(events.textOf(turnId)).not.toContain("never said");
  });

  it("resumes the conversation in a new harness process from its cursor", async () => {
    const first = createEventRecorder();
    const session = await open(first);
    const cursor = (await first.waitFor("session.resume_cursor")).cursor;
    expect(session.resumeCursor).toBe(cursor);
    await (
      await turn(session, first, "@say the first answer")
    ).terminal;
    await session.close();

    const second = createEventRecorder();
    const resumed = await open(second, { resumeCursor: cursor });
    expect(resumed.resumeCursor).toBe(cursor);
    const { turnId, terminal } = await turn(resumed, second, "@recall");
    expect((await terminal).status).toBe("completed");
    expect(second.textOf(turnId)).toContain('earlier messages: ["@say the first answer"]');
    expect(new Set(ctx.processes.spawned.map((process) => process.pid)).size).toBe(2);
  });

  it("passes on a harness's refusal of a turn as provider_error with its words, and keeps the session usable", async () => {
    // A harness that opens conversations but refuses every turn, as a real one does when its
    // model is unavailable: JSON-RPC error answers to turn/start.
    const refusing = [
      'require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {',
      "  const { id, method } = JSON.parse(line);",
      '  const answer = method === "initialize" ? { result: { conversationId: "c-1", resumed: false, version: "0" } } : { error: { code: -32000, message: "no model capacity" } };',
      '  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, ...answer }) + "\\n");',
      "});",
    ].join("\n");
    const session = await open(createEventRecorder(), {
      driverOptions: { command: process.execPath, args: ["-e", refusing] },
    });
    const refusal = {
      code: "provider_error",
      message: "The harness refused the turn: no model capacity",
      details: { rpcCode: -32000 },
    };
    await expect(turn(session, createEventRecorder(), "@say hello")).rejects.toMatchObject(refusal);
    // The refused turn is not left running: the next one reaches the harness (and is refused again), not a conflict.
    await expect(turn(session, createEventRecorder(), "@say again")).rejects.toMatchObject(refusal);
  });

  it("refuses a cursor the harness does not have, with not_found and the id", async () => {
    await expect(open(createEventRecorder(), { resumeCursor: "no-such-conversation" })).rejects.toMatchObject({
      code: "not_found",
      message: expect.stringContaining("no longer has conversation no-such-conversation"),
    });
  });
});

describe("template driver in a host", () => {
  let lab: TestHost;
  let home: string;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "template-host-home-"));
    lab = await startTestHost({
      plugins: [pluginDir],
      providers: [
        { id: "stand-in", driver: "template", homePath: home },
        { id: "missing", driver: "template", options: { command: "no-such-harness-binary" } },
      ],
    });
  });
  afterAll(async () => {
    await lab.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("fails a run whose harness crashed with the end of its stderr", async () => {
    const threadId = await lab.createThread("stand-in", "@crash the model is down", { runtimeMode: "full-access" });
    const run = await lab.waitForRun(threadId);
    expect(run.status).toBe("failed");
    expect(run.error?.message).toContain("exited (code 3");
    expect(run.error?.message).toContain("Its stderr ended with:\nthe model is down");
  });

  it("reports a harness that is not installed as unavailable, with why", async () => {
    const availability = await lab.host.providers.availability("missing", { refresh: true });
    expect(availability?.available).toBe(false);
    expect(availability?.reason).toContain("no-such-harness-binary was not found on PATH");
  });

  it("refuses bad driver options as a config error naming the field", async () => {
    await expect(
      startTestHost({ plugins: [pluginDir], providers: [{ id: "bad", driver: "template", options: { command: 42 } }] }),
    ).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining("providers[0].options.command"),
    });
  });
});
