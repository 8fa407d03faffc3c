import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  hasErrorCode,
  type McpEndpointGrant,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type TurnInput,
} from "@switchyard/sdk";
import {
  XAI_VENDOR_EXTENSIONS,
  createAcpTestContext,
  createEventRecorder,
  environmentVariablesOf,
  scriptedAgentCommand,
  startTestMcpServer,
  type AcpTestContext,
  type AdapterEventRecorder,
  type ScriptedAcpAgentOptions,
  type TestMcpServer,
} from "@switchyard/testkit";
import plugin, { PLAN_RECORDED_FEEDBACK, type GrokOptions } from "../src/index.js";

// Grok's CLI cannot be installed here: these tests run the Grok driver against the sdk's
// scripted ACP agent, which speaks stable ACP plus xAI's extension requests over real stdio.

const INSTANCE: ProviderInstanceDescriptor = {
  id: "grok-main",
  driver: "grok",
  displayName: "Grok",
  homePath: null,
  environment: {},
  customModels: [],
};

let ctx: AcpTestContext;
let cwd: string;
let mcpServer: TestMcpServer | null = null;
const sessions: ProviderSession[] = [];
let counter = 0;

beforeEach(async () => {
  ctx = await createAcpTestContext();
  cwd = await realpath(await mkdtemp(path.join(os.tmpdir(), "grok-cwd-")));
});

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await ctx.dispose();
  await mcpServer?.close();
  mcpServer = null;
  await rm(cwd, { recursive: true, force: true });
});

function grokAgent(extra: ScriptedAcpAgentOptions = {}): ScriptedAcpAgentOptions {
  return {
    name: "grok",
    loadSession: true,
    mcp: { http: true },
    vendorExtensions: XAI_VENDOR_EXTENSIONS,
    stateDir: path.join(ctx.context.paths.home, "grok-sessions"),
    ...extra,
  };
}

async function grokAdapter(agent: ScriptedAcpAgentOptions): Promise<OrchestrationAdapter> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === "grok");
  if (!driver?.optionsSchema) throw new Error("the grok driver is missing");
  const { command, args } = scriptedAgentCommand(agent);
  const validated = await driver.optionsSchema["~standard"].validate({ command, args });
  if (validated.issues) throw new Error(JSON.stringify(validated.issues));
  return driver.create({ instance: INSTANCE, options: validated.value as GrokOptions, context: ctx.context });
}

function grant(): McpEndpointGrant {
  const url = mcpServer?.url ?? "http://127.0.0.1:9/mcp";
  const token = mcpServer?.token ?? "grok-test-token";
  return {
    serverName: "switchyard",
    url,
    token,
    toolTimeoutMs: 600_000,
    blockingToolNames: ["delegate_task"],
    instructions: "Delegate with switchyard.",
    stdioBridge: {
      command: "switchyard",
      args: ["mcp-bridge"],
      env: { SWITCHYARD_MCP_URL: url, SWITCHYARD_MCP_TOKEN: token },
    },
  };
}

async function openGrok(
  adapter: OrchestrationAdapter,
  recorder: AdapterEventRecorder,
  resumeCursor: string | null = null,
  profile: Pick<OpenSessionInput, "environment" | "harnessHome"> = {},
) {
  const session = await adapter.openSession({
    ...profile,
    threadId: "thread-grok",
    providerSessionId: `ps-${++counter}`,
    cwd,
    model: null,
    runtimeMode: "approval-required",
    interactionMode: "default",
    resumeCursor,
    mcp: grant(),
    emit: recorder.emit,
  });
  sessions.push(session);
  return session;
}

function turn(text: string, extra: Partial<TurnInput> = {}): TurnInput {
  const turnId = `grok-turn-${++counter}`;
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

async function run(
  session: ProviderSession,
  recorder: AdapterEventRecorder,
  text: string,
  extra: Partial<TurnInput> = {},
) {
  const input = turn(text, extra);
  await session.startTurn(input);
  const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
  return { turnId: input.turnId, terminal, text: recorder.textOf(input.turnId) };
}

describe("grok plugin", () => {
  it("declares the Grok driver with honest capabilities", async () => {
    expect(plugin.specificationVersion).toBe("v1");
    const adapter = await grokAdapter(grokAgent({ fork: true }));
    expect(adapter.driverKind).toBe("grok");
    const before = adapter.capabilities();
    expect(before.turns).toMatchObject({ activeSteering: false, steeringByInterruptRestart: true, interrupt: true });
    expect(before.runtimeRequests.userInputQuestions).toBe(true);
    await adapter.probe();
    // The agent advertises session/fork; Grok still forks through portable context.
    const after = adapter.capabilities();
    expect(after.threads).toEqual({ readSnapshot: true, fork: false, forkFromTurn: false });
    expect(after.sessions.resume).toBe(true);
    const recorder = createEventRecorder();
    const session = await openGrok(adapter, recorder);
    // Undeclared methods are absent (the host's guard refuses them with unsupported_capability).
    expect("forkThread" in session).toBe(false);
    expect("steerTurn" in session).toBe(false);
    expect(typeof session.readSnapshot).toBe("function");
  });

  it("rejects malformed options before any process starts", async () => {
    const driver = plugin.drivers[0];
    const result = await driver?.optionsSchema?.["~standard"].validate({ command: 3, extra: true });
    expect(result?.issues?.map((issue) => issue.path?.[0] ?? issue.message)).toEqual([
      "command",
      'Unrecognized key: "extra"',
    ]);
    const defaults = await driver?.optionsSchema?.["~standard"].validate({});
    expect(defaults).toEqual({ value: { command: "grok", args: ["agent", "stdio"] } });
  });

  it("runs a turn that calls the Switchyard MCP endpoint over http with the bearer header", async () => {
    mcpServer = await startTestMcpServer();
    const adapter = await grokAdapter(grokAgent());
    const recorder = createEventRecorder();
    const session = await openGrok(adapter, recorder);
    const result = await run(session, recorder, '@say delegating\n@mcp echo {"text":"from grok"}');
    expect(result.terminal.status).toBe("completed");
    expect(result.text).toBe("delegating\nmcp: echo: from grok");
    expect(mcpServer.calls).toEqual([{ tool: "echo", args: { text: "from grok" } }]);
    expect(mcpServer.rejectedRequests).toBe(0);
  });

  it("turns _x.ai/ask_user_question into a user_input request and returns the answers", async () => {
    const adapter = await grokAdapter(grokAgent());
    const recorder = createEventRecorder();
    const session = await openGrok(adapter, recorder);
    const input = turn(
      '@ask {"questions":[{"question":"Which database?","header":"DB","options":[{"label":"sqlite","description":"embedded"},{"label":"postgres"}],"multiSelect":false},{"question":"Which checks?","options":[{"label":"lint"},{"label":"test"}],"multiSelect":true}]}',
      // Questions go to the user even in full-access.
      { runtimeMode: "full-access" },
    );
    await session.startTurn(input);
    const opened = await recorder.waitFor("runtime_request.opened", (event) => event.turnId === input.turnId);
    expect(opened.request).toEqual({
      kind: "user_input",
      blocking: true,
      questions: [
        {
          id: "q1",
          header: "DB",
          question: "Which database?",
          options: [{ label: "sqlite", description: "embedded" }, { label: "postgres" }],
        },
        { id: "q2", question: "Which checks?", options: [{ label: "lint" }, { label: "test" }], multiSelect: true },
      ],
    });
    await session.respondToRuntimeRequest?.(opened.requestId, {
      kind: "user_input",
      answers: { q1: "sqlite", q2: ["lint", "test"] },
    });
    const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === input.turnId);
    expect(terminal.status).toBe("completed");
    expect(recorder.textOf(input.turnId)).toBe('answers: {"Which database?":"sqlite","Which checks?":"lint, test"}');

    // A question takes answers; a decision is the wrong kind of answer, and a dismissal cancels it.
    const dismissed = turn("@ask Proceed? | yes, no");
    await session.startTurn(dismissed);
    const second = await recorder.waitFor("runtime_request.opened", (event) => event.turnId === dismissed.turnId);
    await expect(
      session.respondToRuntimeRequest!(second.requestId, { kind: "approval", decision: "decline" }),
    ).rejects.toSatisfy((error: unknown) => hasErrorCode(error, "invalid_input"));
    await session.respondToRuntimeRequest!(second.requestId, { kind: "dismiss" });
    await recorder.waitFor("turn.terminal", (event) => event.turnId === dismissed.turnId);
    expect(recorder.textOf(dismissed.turnId)).toBe("question: cancelled");
    expect(recorder.events).toContainEqual({
      type: "runtime_request.resolved",
      turnId: dismissed.turnId,
      requestId: second.requestId,
      resolution: "cancelled",
    });
  });

  it("turns _x.ai/exit_plan_mode into plan.proposed; a plan-only turn stops there", async () => {
    const adapter = await grokAdapter(
      grokAgent({
        modes: [
          { id: "default", name: "Default" },
          { id: "plan", name: "Plan" },
        ],
      }),
    );
    const recorder = createEventRecorder();
    const session = await openGrok(adapter, recorder);
    expect(adapter.capabilities().interactionModes).toEqual(["plan", "default"]);

    const planned = await run(session, recorder, "@exit-plan # Plan\\n1. add a test\n@say implementing", {
      interactionMode: "plan",
    });
    expect(recorder.ofTurn(planned.turnId).find((event) => event.type === "plan.proposed")).toMatchObject({
      text: "# Plan\n1. add a test",
    });
    expect(planned.text).toBe(`plan: rejected (${PLAN_RECORDED_FEEDBACK})`);
    expect(planned.terminal.status).toBe("completed");

    const acting = await run(session, recorder, "@exit-plan do it\n@say implementing");
    expect(recorder.ofTurn(acting.turnId).some((event) => event.type === "plan.proposed")).toBe(true);
    expect(acting.text).toBe("plan: approved\nimplementing");
  });

  it("a hard interrupt kills the process group, respawns and reloads the session", async () => {
    const adapter = await grokAdapter(grokAgent());
    const recorder = createEventRecorder();
    const session = await openGrok(adapter, recorder);
    const before = await run(session, recorder, "@pid");
    const firstPid = Number(before.text.replace("pid: ", ""));
    const cursor = session.resumeCursor;

    const held = turn("@say on it\n@hold");
    await session.startTurn(held);
    await recorder.waitFor("message.delta", (event) => event.turnId === held.turnId);
    await session.interruptTurn?.({ turnId: held.turnId, hard: true, reason: "user pressed Stop" });
    const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === held.turnId);
    expect(terminal.status).toBe("interrupted");

    const [first, second] = ctx.processes.spawned;
    expect(first?.pid).toBe(firstPid);
    expect(await first?.exited).toBeDefined();
    expect(() => process.kill(-firstPid, 0)).toThrow();
    expect(second).toBeDefined();

    const after = await run(session, recorder, "@pid\n@history");
    expect(after.text).toMatch(/^pid: \d+\nhistory: 1 turns;/);
    expect(Number(after.text.split("\n")[0]?.replace("pid: ", ""))).toBe(second?.pid);
    expect(session.resumeCursor).toBe(cursor);
    expect(recorder.events.some((event) => event.type === "session.exited")).toBe(false);
  });

  it("runs a session's agent with its profile's home as GROK_HOME and its environment; declares no tool rules", async () => {
    const adapter = await grokAdapter(grokAgent());
    const capabilities = adapter.capabilities();
    expect(capabilities.sessions).toMatchObject({ harnessHome: true, environment: true });
    expect(capabilities.tools.rules).toEqual({ allow: false, deny: false, ask: false, allowOnly: false });
    const home = path.join(cwd, "reviewer-grok-home");
    const recorder = createEventRecorder();
    const session = await openGrok(adapter, recorder, null, {
      harnessHome: home,
      environment: { REVIEW_STRICT: "1", GROK_HOME: "/not/the/profile/home" },
    });
    const profiled = await run(session, recorder, "@pid");
    const env = environmentVariablesOf(Number(profiled.text.replace("pid: ", "")));
    expect(env["GROK_HOME"]).toBe(home);
    expect(env["REVIEW_STRICT"]).toBe("1");
    // A session without a profile keeps the instance's (here: no home, no extra variable).
    const plainRecorder = createEventRecorder();
    const plain = await openGrok(adapter, plainRecorder);
    const plainEnv = environmentVariablesOf(
      Number((await run(plain, plainRecorder, "@pid")).text.replace("pid: ", "")),
    );
    expect(plainEnv["GROK_HOME"]).toBeUndefined();
    expect(plainEnv["REVIEW_STRICT"]).toBeUndefined();
  });

  it("a soft interrupt cancels without a respawn", async () => {
    const adapter = await grokAdapter(grokAgent());
    const recorder = createEventRecorder();
    const session = await openGrok(adapter, recorder);
    const held = turn("@hold");
    await session.startTurn(held);
    await recorder.waitFor("turn.started", (event) => event.turnId === held.turnId);
    await session.interruptTurn?.({ turnId: held.turnId });
    expect((await recorder.waitFor("turn.terminal", (event) => event.turnId === held.turnId)).status).toBe(
      "interrupted",
    );
    expect(ctx.processes.spawned).toHaveLength(1);
  });
});
