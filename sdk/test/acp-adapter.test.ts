import { mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  hasErrorCode,
  type AdapterEvent,
  type McpEndpointGrant,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type TurnInput,
} from "@switchyard/spec";
import { createAcpDriver, type AcpFlavor } from "../src/acp/index.js";
import {
  createAcpTestContext,
  createEventRecorder,
  scriptedAgentCommand,
  startTestMcpServer,
  type AcpTestContext,
  type AdapterEventRecorder,
  type ScriptedAcpAgentOptions,
  type TestMcpServer,
} from "../../testkit/src/acp-agent/index.js";

interface TestOptions {
  readonly agent: ScriptedAcpAgentOptions;
  readonly authMethodId?: string;
}

const INSTANCE: ProviderInstanceDescriptor = {
  id: "acp-test-main",
  driver: "acp-test",
  displayName: "ACP test agent",
  homePath: null,
  environment: {},
  customModels: [],
};

function testFlavor(extra: Partial<AcpFlavor<TestOptions>> = {}): AcpFlavor<TestOptions> {
  return {
    driverKind: "acp-test",
    displayName: "ACP test agent",
    capabilities: { tools: { shell: true } },
    resolveLaunch: ({ options }) => scriptedAgentCommand(options.agent),
    authMethodId: ({ options }) => options.authMethodId,
    cancelTimeoutMs: 5_000,
    ...extra,
  };
}

let ctx: AcpTestContext;
let cwd: string;
let mcpServer: TestMcpServer | null;
const open: ProviderSession[] = [];
let turnCounter = 0;

beforeEach(async () => {
  ctx = await createAcpTestContext();
  cwd = await realpath(await mkdtemp(path.join(os.tmpdir(), "acp-cwd-")));
  mcpServer = null;
});

afterEach(async () => {
  for (const session of open.splice(0)) await session.close();
  await ctx.dispose();
  await mcpServer?.close();
  await rm(cwd, { recursive: true, force: true });
});

async function adapterFor(
  agent: ScriptedAcpAgentOptions,
  extra: Partial<AcpFlavor<TestOptions>> = {},
  authMethodId?: string,
): Promise<OrchestrationAdapter> {
  const driver = createAcpDriver(testFlavor(extra));
  return driver.create({
    instance: INSTANCE,
    options: { agent, ...(authMethodId ? { authMethodId } : {}) },
    context: ctx.context,
  });
}

function grantFor(server: TestMcpServer | null): McpEndpointGrant {
  const url = server?.url ?? "http://127.0.0.1:9/mcp";
  const token = server?.token ?? "secret-token-for-tests";
  return {
    serverName: "switchyard",
    url,
    token,
    toolTimeoutMs: 600_000,
    blockingToolNames: ["delegate_task", "t3_thread_wait"],
    instructions: "Use the switchyard tools to delegate work.",
    stdioBridge: {
      command: "switchyard",
      args: ["mcp-bridge"],
      env: { SWITCHYARD_MCP_URL: url, SWITCHYARD_MCP_TOKEN: token },
    },
  };
}

async function openSession(
  adapter: OrchestrationAdapter,
  recorder: AdapterEventRecorder,
  extra: Partial<OpenSessionInput> = {},
): Promise<ProviderSession> {
  const session = await adapter.openSession({
    threadId: "thread-1",
    providerSessionId: `ps-${++turnCounter}`,
    cwd,
    model: null,
    runtimeMode: "approval-required",
    interactionMode: "default",
    resumeCursor: null,
    mcp: grantFor(mcpServer),
    emit: recorder.emit,
    ...extra,
  });
  open.push(session);
  return session;
}

function turnInput(text: string, extra: Partial<TurnInput> = {}): TurnInput {
  const turnId = `turn-${++turnCounter}`;
  return {
    turnId,
    runId: `run-${turnId}`,
    text,
    instructions: null,
    model: null,
    runtimeMode: "approval-required",
    interactionMode: "default",
    restartOfTurnId: null,
    ...extra,
  };
}

async function runTurn(
  session: ProviderSession,
  recorder: AdapterEventRecorder,
  text: string,
  extra: Partial<TurnInput> = {},
) {
  const input = turnInput(text, extra);
  await session.startTurn(input);
  const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
  return { turnId: input.turnId, terminal, text: recorder.textOf(input.turnId) };
}

describe("initialize and capability negotiation", () => {
  it("an agent advertising loadSession and http gets an http MCP entry with the bearer header", async () => {
    mcpServer = await startTestMcpServer();
    const adapter = await adapterFor({ loadSession: true, mcp: { http: true } });
    const status = await adapter.probe();
    expect(status).toMatchObject({ installed: true, executable: true, authenticated: true });
    const caps = adapter.capabilities();
    expect(caps.sessions.resume).toBe(true);
    expect(caps.threads.readSnapshot).toBe(true);
    expect(caps.threads.fork).toBe(false);
    expect(caps.tools.mcp).toEqual({ http: true, sse: false, stdio: true });
    expect(caps.turns).toMatchObject({ activeSteering: false, steeringByInterruptRestart: true, interrupt: true });

    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const { text } = await runTurn(session, recorder, "@report-mcp");
    const servers = JSON.parse(text) as unknown[];
    expect(servers).toEqual([
      {
        type: "http",
        name: "switchyard",
        url: mcpServer.url,
        headers: [{ name: "Authorization", value: `Bearer ${mcpServer.token}` }],
      },
    ]);
  });

  it("an agent without loadSession or http gets the stdio bridge, token only in env", async () => {
    const adapter = await adapterFor({ loadSession: false, mcp: { http: false } });
    await adapter.probe();
    const caps = adapter.capabilities();
    expect(caps.sessions.resume).toBe(false);
    expect(caps.threads.readSnapshot).toBe(false);
    expect(caps.tools.mcp.http).toBe(false);
    expect(caps.identity.nativeThreadIds).toBe("weak");

    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const { text } = await runTurn(session, recorder, "@report-mcp");
    const [entry] = JSON.parse(text) as {
      name: string;
      command: string;
      args: string[];
      env: { name: string; value: string }[];
    }[];
    expect(entry).toMatchObject({ name: "switchyard", command: "switchyard", args: ["mcp-bridge"] });
    expect(entry?.args.join(" ")).not.toContain("secret-token-for-tests");
    expect(entry?.env).toContainEqual({ name: "SWITCHYARD_MCP_TOKEN", value: "secret-token-for-tests" });
    expect("type" in (entry as object)).toBe(false);

    // Not negotiated, so absent: the host's guard refuses it with unsupported_capability.
    expect("readSnapshot" in session).toBe(false);
    expect("forkThread" in session).toBe(false);
    await expect(
      adapter.openSession({ ...(await sessionInput(recorder)), resumeCursor: "sess-anything" }),
    ).rejects.toSatisfy((error: unknown) => hasErrorCode(error, "unsupported_capability"));
  });

  it("the stdio-bridge preference wins over an advertised http transport", async () => {
    const adapter = await adapterFor({ mcp: { http: true } }, { mcpTransport: "stdio-bridge" });
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const { text } = await runTurn(session, recorder, "@report-mcp");
    expect((JSON.parse(text) as { command?: string }[])[0]?.command).toBe("switchyard");
  });

  it("models and modes become switchable; plan mode is offered when the agent has one", async () => {
    const adapter = await adapterFor({
      models: ["model-a", "model-b"],
      modes: [
        { id: "default", name: "Default" },
        { id: "plan", name: "Plan" },
      ],
    });
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder, { model: "model-b" });
    const caps = adapter.capabilities();
    expect(caps.sessions.modelSwitchInSession).toBe(true);
    expect(caps.sessions.runtimeModeSwitchInSession).toBe(true);
    expect(caps.interactionModes).toEqual(["plan", "default"]);
    expect((await runTurn(session, recorder, "@state")).text).toBe("mode: default; model: model-b");
    const planned = await runTurn(session, recorder, "@state\n@plan read the code; change it", {
      interactionMode: "plan",
      model: "model-a",
    });
    expect(planned.text).toBe("mode: plan; model: model-a");
    expect(recorder.ofTurn(planned.turnId).find((event) => event.type === "plan.proposed")).toMatchObject({
      text: "- [ ] read the code\n- [ ] change it",
    });
    expect((await runTurn(session, recorder, "@state")).text).toBe("mode: default; model: model-a");
    await expect(session.startTurn(turnInput("@state", { model: "model-z" }))).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "invalid_input"),
    );
    // A refused model is not kept: the next turn that names none runs on the model before it.
    expect((await runTurn(session, recorder, "@state")).text).toBe("mode: default; model: model-a");
  });

  it("a model setting the agent cannot take is reported as a warning", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    await openSession(adapter, recorder, { model: "some-model" });
    expect(recorder.events.find((event) => event.type === "warning")).toMatchObject({
      message: expect.stringContaining("some-model"),
    });
  });

  it("authenticates with the configured method when the agent requires it", async () => {
    const agent = { requireAuth: true, authMethods: [{ id: "api-key", name: "API key" }] };
    const refused = await adapterFor(agent);
    expect((await refused.probe()).authenticated).toBe("unknown");
    await expect(openSession(refused, createEventRecorder())).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "provider_unavailable"),
    );
    const adapter = await adapterFor(agent, {}, "api-key");
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    expect((await runTurn(session, recorder, "hello")).text).toBe("echo: hello");
  });

  it("an inspect probe finds the agent without starting it", async () => {
    const adapter = await adapterFor({});
    expect(await adapter.probe({ depth: "inspect" })).toMatchObject({
      installed: true,
      executable: true,
      authenticated: "unknown",
    });
    expect(ctx.processes.spawned).toHaveLength(0);
  });

  it("an agent that dies before answering fails the session open with what it said on stderr", async () => {
    const driver = createAcpDriver(
      testFlavor({
        resolveLaunch: () => ({
          command: process.execPath,
          args: ["-e", "console.error('agent: cannot read /etc/agent.toml'); process.exit(3)"],
        }),
      }),
    );
    const adapter = await driver.create({ instance: INSTANCE, options: { agent: {} }, context: ctx.context });
    const failure = await adapter.openSession(await sessionInput(createEventRecorder())).then(
      () => null,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(failure?.code).toBe("provider_unavailable");
    expect(failure?.message).toContain("Its stderr ended with:\nagent: cannot read /etc/agent.toml");
  });

  it("a missing command is reported by probe, not thrown", async () => {
    const driver = createAcpDriver(
      testFlavor({ resolveLaunch: () => ({ command: "definitely-not-an-acp-agent-xyz", args: [] }) }),
    );
    const adapter = await driver.create({ instance: INSTANCE, options: { agent: {} }, context: ctx.context });
    expect(await adapter.probe()).toMatchObject({ installed: false, executable: false });
  });
});

async function sessionInput(recorder: AdapterEventRecorder): Promise<OpenSessionInput> {
  return {
    threadId: "thread-1",
    providerSessionId: `ps-${++turnCounter}`,
    cwd,
    model: null,
    runtimeMode: "approval-required",
    interactionMode: "default",
    resumeCursor: null,
    mcp: grantFor(mcpServer),
    emit: recorder.emit,
  };
}

describe("turns", () => {
  it("streams deltas and completes with the whole message, in order", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const { turnId, terminal, text } = await runTurn(
      session,
      recorder,
      "@think let me see\n@say Hello there, general Kenobi",
    );
    expect(terminal.status).toBe("completed");
    expect(text).toBe("Hello there, general Kenobi");
    const events = recorder.ofTurn(turnId);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe("turn.started");
    expect(types.at(-1)).toBe("turn.terminal");
    expect(types.filter((type) => type === "message.delta").length).toBeGreaterThan(1);
    const completed = events.find((event) => event.type === "message.completed");
    expect(completed).toMatchObject({ text: "Hello there, general Kenobi" });
    expect(types.indexOf("reasoning.completed")).toBeLessThan(types.indexOf("message.delta"));
    expect(types.indexOf("message.completed")).toBeGreaterThan(types.lastIndexOf("message.delta"));
    expect(session.resumeCursor).toMatch(/^sess-/);
    expect(recorder.events.find((event) => event.type === "session.resume_cursor")).toMatchObject({
      cursor: session.resumeCursor,
    });
  });

  it("sends the prompt as the host composed it: the adapter never adds the grant's instructions", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    expect((await runTurn(session, recorder, "@echo-prompt")).text).toBe("@echo-prompt");
  });

  it("maps tool calls and their kinds", async () => {
    mcpServer = await startTestMcpServer();
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const { turnId, text } = await runTurn(session, recorder, '@tool execute npm test\n@mcp echo {"text":"ping"}');
    expect(text).toContain("mcp: echo: ping");
    expect(mcpServer.calls).toEqual([{ tool: "echo", args: { text: "ping" } }]);
    const started = recorder.ofTurn(turnId).filter((event) => event.type === "tool_call.started");
    expect(started).toMatchObject([
      { kind: "command", title: "npm test" },
      { kind: "mcp", server: "switchyard", name: "mcp__switchyard__echo", input: { text: "ping" } },
    ]);
    const completed = recorder.ofTurn(turnId).filter((event) => event.type === "tool_call.completed");
    expect(completed).toMatchObject([
      { status: "completed", output: "npm test: ok" },
      { status: "completed", output: "echo: ping" },
    ]);
  });

  it("the MCP server's bearer check is real: a wrong token gets nowhere", async () => {
    mcpServer = await startTestMcpServer();
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const wrong = { ...grantFor(mcpServer), token: "not-the-token" };
    const session = await openSession(adapter, recorder, { mcp: wrong });
    const { turnId, text } = await runTurn(session, recorder, '@mcp echo {"text":"ping"}');
    expect(text).toMatch(/^mcp error: /);
    expect(mcpServer.calls).toEqual([]);
    expect(mcpServer.rejectedRequests).toBeGreaterThan(0);
    expect(recorder.ofTurn(turnId).find((event) => event.type === "tool_call.completed")).toMatchObject({
      status: "failed",
    });
  });

  it("maps stop reasons: refusal and agent errors fail the turn", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    expect((await runTurn(session, recorder, "@refuse")).terminal).toMatchObject({
      status: "failed",
      error: { code: "refusal" },
    });
    expect((await runTurn(session, recorder, "@fail the model is down")).terminal).toMatchObject({
      status: "failed",
      error: { message: expect.stringContaining("the model is down") },
    });
    const early = await runTurn(session, recorder, "@say partial\n@stop max_tokens");
    expect(early.terminal.status).toBe("completed");
    expect(recorder.ofTurn(early.turnId).some((event) => event.type === "warning")).toBe(true);
  });

  it("refuses a second prompt while one runs, and has no steering at all", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const input = turnInput("@hold");
    await session.startTurn(input);
    await expect(session.startTurn(turnInput("again"))).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "conflict"),
    );
    // ACP has no active steering: the method does not exist (the host interrupts and restarts).
    expect("steerTurn" in session).toBe(false);
    await session.interruptTurn!({ turnId: input.turnId });
    await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
  });
});

describe("cancel and permissions", () => {
  it("cancel mid-turn ends interrupted", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const input = turnInput("@say working\n@hold\n@say never");
    await session.startTurn(input);
    await recorder.waitFor("message.delta", (event) => event.turnId === input.turnId);
    await session.interruptTurn?.({ turnId: input.turnId, reason: "user asked" });
    const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
    expect(terminal.status).toBe("interrupted");
    expect(recorder.textOf(input.turnId)).not.toContain("never");
    await expect(session.interruptTurn?.({ turnId: input.turnId })).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "turn_not_active"),
    );
    expect((await runTurn(session, recorder, "still here")).text).toBe("echo: still here");
  });

  it("interrupt-and-restart: the replacement turn may start right after interruptTurn", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const first = turnInput("@sleep 300\n@hold");
    await session.startTurn(first);
    await recorder.waitFor("turn.started", (event) => event.turnId === first.turnId);
    await session.interruptTurn?.({ turnId: first.turnId, reason: "steer" });
    const restart = turnInput("steered", { restartOfTurnId: first.turnId });
    await session.startTurn(restart);
    await recorder.waitFor("turn.terminal", (event) => event.turnId === restart.turnId);
    const types = recorder.events.map((event) => ("turnId" in event ? `${event.type}:${event.turnId}` : event.type));
    expect(types.indexOf(`turn.terminal:${first.turnId}`)).toBeLessThan(
      types.indexOf(`turn.started:${restart.turnId}`),
    );
    expect(recorder.textOf(restart.turnId)).toBe("echo: steered");
  });

  it("an agent that ignores session/cancel is given up on after the cancel timeout", async () => {
    const adapter = await adapterFor({ ignoreCancel: true }, { cancelTimeoutMs: 300 });
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const input = turnInput("@hold");
    await session.startTurn(input);
    await recorder.waitFor("turn.started", (event) => event.turnId === input.turnId);
    await session.interruptTurn?.({ turnId: input.turnId });
    const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
    expect(terminal.status).toBe("interrupted");
    expect(recorder.ofTurn(input.turnId).find((event) => event.type === "warning")).toMatchObject({
      message: expect.stringContaining("session/cancel"),
    });
  });

  it("closing the session lets a restart that waits for an ignored cancel go, with session_closed", async () => {
    const adapter = await adapterFor({ ignoreCancel: true });
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const input = turnInput("@hold");
    await session.startTurn(input);
    await recorder.waitFor("turn.started", (event) => event.turnId === input.turnId);
    await session.interruptTurn!({ turnId: input.turnId });
    // The replacement waits for the interrupted turn to end; the agent never ends it.
    const restart = session.startTurn(turnInput("steered", { restartOfTurnId: input.turnId })).then(
      () => null,
      (error: unknown) => error,
    );
    await session.close();
    expect(hasErrorCode(await restart, "session_closed")).toBe(true);
    expect(recorder.events.some((event) => event.type === "turn.terminal")).toBe(false);
  });

  it("cancel answers a pending permission request cancelled", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const input = turnInput("@permission execute rm -rf build");
    await session.startTurn(input);
    const opened = await recorder.waitFor("runtime_request.opened", (event) => event.turnId === input.turnId);
    expect(opened.request).toMatchObject({ kind: "approval", approvalKind: "command", title: "rm -rf build" });
    await session.interruptTurn?.({ turnId: input.turnId });
    const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
    expect(terminal.status).toBe("interrupted");
    expect(recorder.textOf(input.turnId)).toBe("permission: cancelled");
    expect(recorder.events).toContainEqual({
      type: "runtime_request.resolved",
      turnId: input.turnId,
      requestId: opened.requestId,
      resolution: "cancelled",
    });
    await expect(
      session.respondToRuntimeRequest?.(opened.requestId, { kind: "approval", decision: "accept" }),
    ).rejects.toSatisfy((error: unknown) => hasErrorCode(error, "not_found"));
  });

  it("round-trips a permission through respondToRuntimeRequest", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);

    const allow = turnInput("@permission edit src/index.ts");
    await session.startTurn(allow);
    const opened = await recorder.waitFor("runtime_request.opened", (event) => event.turnId === allow.turnId);
    expect(opened.request).toMatchObject({
      approvalKind: "file-change",
      options: [
        { id: "allow-once", decision: "accept" },
        { id: "allow-always", decision: "accept_for_session" },
        { id: "reject-once", decision: "decline" },
        { id: "reject-always", decision: "decline" },
      ],
    });
    await expect(
      session.respondToRuntimeRequest?.(opened.requestId, { kind: "user_input", answers: {} }),
    ).rejects.toSatisfy((error: unknown) => hasErrorCode(error, "invalid_input"));
    await session.respondToRuntimeRequest?.(opened.requestId, { kind: "approval", decision: "accept_for_session" });
    await recorder.waitFor("turn.terminal", (event) => event.turnId === allow.turnId);
    expect(recorder.textOf(allow.turnId)).toBe("permission: selected allow-always");
    expect(recorder.events).toContainEqual({
      type: "runtime_request.resolved",
      turnId: allow.turnId,
      requestId: opened.requestId,
      resolution: "answered",
    });

    const decline = turnInput("@permission execute curl example.com");
    await session.startTurn(decline);
    const second = await recorder.waitFor("runtime_request.opened", (event) => event.turnId === decline.turnId);
    await session.respondToRuntimeRequest?.(second.requestId, { kind: "approval", decision: "decline" });
    await recorder.waitFor("turn.terminal", (event) => event.turnId === decline.turnId);
    expect(recorder.textOf(decline.turnId)).toBe("permission: selected reject-once");
    expect(recorder.ofTurn(decline.turnId).find((event) => event.type === "tool_call.completed")).toMatchObject({
      status: "declined",
    });
  });

  it("full-access answers permissions itself; auto-accept-edits only edits", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const full = await runTurn(session, recorder, "@permission execute make", { runtimeMode: "full-access" });
    expect(full.text).toBe("permission: selected allow-once");
    const edit = await runTurn(session, recorder, "@permission edit a.ts", { runtimeMode: "auto-accept-edits" });
    expect(edit.text).toBe("permission: selected allow-once");
    expect(recorder.events.some((event) => event.type === "runtime_request.opened")).toBe(false);
    const command = turnInput("@permission execute make", { runtimeMode: "auto-accept-edits" });
    await session.startTurn(command);
    const opened = await recorder.waitFor("runtime_request.opened", (event) => event.turnId === command.turnId);
    await session.respondToRuntimeRequest?.(opened.requestId, { kind: "approval", decision: "cancel" });
    await recorder.waitFor("turn.terminal", (event) => event.turnId === command.turnId);
    expect(recorder.textOf(command.turnId)).toBe("permission: cancelled");
  });

  it("turns a form elicitation into a user-input request", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const input = turnInput(
      '@elicit {"type":"object","properties":{"color":{"type":"string","title":"Color","enum":["red","blue"]},"count":{"type":"integer","description":"How many?"}}}',
    );
    await session.startTurn(input);
    const opened = await recorder.waitFor("runtime_request.opened", (event) => event.turnId === input.turnId);
    expect(opened.request).toMatchObject({
      kind: "user_input",
      questions: [
        { id: "color", header: "Color", options: [{ label: "red" }, { label: "blue" }] },
        { id: "count", question: "How many?" },
      ],
    });
    await session.respondToRuntimeRequest?.(opened.requestId, {
      kind: "user_input",
      answers: { color: "blue", count: "3" },
    });
    await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
    expect(recorder.textOf(input.turnId)).toBe('elicitation: {"action":"accept","content":{"color":"blue","count":3}}');
  });
});

describe("file system", () => {
  it("reads and writes inside cwd and refuses paths that leave it, symlinks included", async () => {
    const outside = await realpath(await mkdtemp(path.join(os.tmpdir(), "acp-outside-")));
    try {
      await writeFile(path.join(outside, "secret.txt"), "top secret");
      await symlink(path.join(outside, "secret.txt"), path.join(cwd, "link.txt"));
      await symlink(outside, path.join(cwd, "linkdir"));
      const adapter = await adapterFor({});
      const recorder = createEventRecorder();
      const session = await openSession(adapter, recorder);

      const inside = await runTurn(session, recorder, "@write notes/a.txt hello\\nworld\n@read notes/a.txt");
      expect(inside.text).toBe("wrote: notes/a.txt\nread: hello\nworld");
      expect(await readFile(path.join(cwd, "notes/a.txt"), "utf8")).toBe("hello\nworld");

      const escapes = await runTurn(
        session,
        recorder,
        `@read ../${path.basename(outside)}/secret.txt\n@read link.txt\n@write linkdir/new.txt x\n@write ${path.join(outside, "abs.txt")} x`,
      );
      const lines = escapes.text.split("\n");
      expect(lines).toHaveLength(4);
      expect(lines.slice(0, 2).every((line) => line.startsWith("read error:") && line.includes("outside"))).toBe(true);
      expect(lines.slice(2).every((line) => line.startsWith("write error:") && line.includes("outside"))).toBe(true);
      expect(escapes.text).not.toContain("top secret");
      await expect(readFile(path.join(outside, "new.txt"), "utf8")).rejects.toThrow();
      await expect(readFile(path.join(outside, "abs.txt"), "utf8")).rejects.toThrow();
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe("resume, snapshot and fork", () => {
  it("reopens through session/load with the history intact", async () => {
    const stateDir = path.join(ctx.context.paths.home, "agent-state");
    const adapter = await adapterFor({ stateDir });
    const recorder = createEventRecorder();
    const first = await openSession(adapter, recorder);
    await runTurn(first, recorder, "@say alpha");
    await runTurn(first, recorder, "@say beta");
    const cursor = first.resumeCursor as string;
    await first.close();
    expect(ctx.processes.spawned.filter((p) => p.pid > 0)).toHaveLength(1);
    await ctx.processes.spawned[0]?.exited;

    const again = createEventRecorder();
    const resumed = await openSession(adapter, again, { resumeCursor: cursor, mcp: grantFor(null) });
    expect(resumed.resumeCursor).toBe(cursor);
    expect(again.events.some((event) => event.type === "session.resume_cursor")).toBe(false);
    expect(await resumed.readSnapshot?.()).toEqual({
      turns: [
        { userText: expect.stringContaining("@say alpha"), assistantText: "alpha" },
        { userText: "@say beta", assistantText: "beta" },
      ],
    });
    const history = await runTurn(resumed, again, "@history");
    expect(history.text).toMatch(/^history: 2 turns;/);
    expect((await runTurn(resumed, again, "@echo-prompt")).text).toBe("@echo-prompt");
    await expect(
      adapter.openSession({ ...(await sessionInput(createEventRecorder())), resumeCursor: "sess-unknown" }),
    ).rejects.toSatisfy((error: unknown) => hasErrorCode(error, "not_found"));
  });

  it("reopens through session/resume when the agent cannot load", async () => {
    const stateDir = path.join(ctx.context.paths.home, "agent-state");
    const adapter = await adapterFor({ stateDir, loadSession: false, resume: true });
    const recorder = createEventRecorder();
    const first = await openSession(adapter, recorder);
    await runTurn(first, recorder, "@say alpha");
    const cursor = first.resumeCursor as string;
    await first.close();
    expect(adapter.capabilities().sessions.resume).toBe(true);
    expect(adapter.capabilities().threads.readSnapshot).toBe(false);
    const resumed = await openSession(adapter, recorder, { resumeCursor: cursor });
    expect((await runTurn(resumed, recorder, "@history")).text).toMatch(/^history: 1 turns;/);
  });

  it("forks only when the agent advertises session/fork, and never from a turn", async () => {
    const plain = await adapterFor({});
    const plainSession = await openSession(plain, createEventRecorder());
    expect("forkThread" in plainSession).toBe(false);

    const stateDir = path.join(ctx.context.paths.home, "agent-state");
    const adapter = await adapterFor({ fork: true, stateDir });
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    expect(adapter.capabilities().threads).toEqual({ readSnapshot: true, fork: true, forkFromTurn: false });
    const { turnId } = await runTurn(session, recorder, "@say forked history");
    await expect(session.forkThread!({ afterTurnId: turnId })).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "unsupported_capability"),
    );
    const spawnedBefore = ctx.processes.spawned.length;
    const fork = await session.forkThread!({});
    expect(fork?.resumeCursor).toMatch(/^sess-/);
    expect(fork?.resumeCursor).not.toBe(session.resumeCursor);
    // The fork was asked of an agent process of its own, which is gone once it answered: the
    // fork's thread opens it in another process (an agent may hold what a process created).
    const forker = ctx.processes.spawned[spawnedBefore];
    expect(forker).toBeDefined();
    expect(await forker!.exited).toBeDefined();

    const forkRecorder = createEventRecorder();
    const reopened = await openSession(adapter, forkRecorder, { resumeCursor: fork.resumeCursor });
    expect((await runTurn(reopened, forkRecorder, "@history")).text).toMatch(/^history: 1 turns;/);
    // The source goes on in its own process, undisturbed.
    expect((await runTurn(session, recorder, "@history")).text).toMatch(/^history: 1 turns;/);
  });
});

describe("process lifecycle", () => {
  it("an agent crash ends the turn failed and reports session.exited", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    const input = turnInput("@say bye\n@crash 7");
    await session.startTurn(input);
    const exited = await recorder.waitFor("session.exited");
    expect(exited.error?.code).toBe("7");
    const terminal = recorder.events.find(
      (event): event is Extract<AdapterEvent, { type: "turn.terminal" }> => event.type === "turn.terminal",
    );
    expect(terminal).toMatchObject({ turnId: input.turnId, status: "failed", error: { code: "agent_exited" } });
    expect(recorder.events.indexOf(terminal as AdapterEvent)).toBeLessThan(recorder.events.indexOf(exited));
    await expect(session.startTurn(turnInput("hello"))).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "session_closed"),
    );
  });

  it("close kills the agent's process group and is idempotent", async () => {
    const adapter = await adapterFor({});
    const recorder = createEventRecorder();
    const session = await openSession(adapter, recorder);
    await runTurn(session, recorder, "hi");
    await session.close();
    await session.close();
    const [agent] = ctx.processes.spawned;
    expect(await agent?.exited).toBeDefined();
    expect(() => process.kill(-(agent?.pid ?? 0), 0)).toThrow();
    expect(recorder.events.some((event) => event.type === "session.exited")).toBe(false);
  });
});
