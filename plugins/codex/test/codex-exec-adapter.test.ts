import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hasErrorCode, type OrchestrationAdapter, type ProviderSession } from "@switchyard/sdk";
import { ScriptedModelServer, startTestHost, startTestMcpServer, turnInput, type TestHost } from "@switchyard/testkit";
import { MCP_TOKEN_ENV_VAR } from "../src/index.js";
import {
  PLUGIN_DIR,
  codexHome,
  createAcpTestContext,
  createAdapter,
  eventually,
  grantFor,
  openSession,
  processesMentioning,
  processInfo,
  type AcpTestContext,
  type CodexHome,
} from "./codex-lab.js";

// The `codex-exec` driver (@openai/codex-sdk 0.163 driving the pinned codex 0.171 binary): one
// `codex exec` per turn, against the scripted model server.

let server: ScriptedModelServer;
let home: CodexHome;

beforeAll(async () => {
  server = await ScriptedModelServer.start();
  home = await codexHome(server.url);
});

afterAll(async () => {
  await server.close();
  await home.cleanup();
});

beforeEach(() => server.reset());

/** Live `codex exec` processes of our CODEX_HOME. */
function execProcesses() {
  return processesMentioning(home.home).filter((proc) => proc.cmdline.includes(" exec "));
}

describe("codex-exec driver (adapter)", () => {
  let ctx: AcpTestContext;
  let adapter: OrchestrationAdapter;
  const sessions: ProviderSession[] = [];

  beforeEach(async () => {
    ctx = await createAcpTestContext();
    adapter = await createAdapter("codex-exec", home, ctx);
  });

  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.close();
    await adapter.dispose?.();
    await ctx.dispose();
  });

  async function open(options: Parameters<typeof openSession>[2] = {}) {
    const opened = await openSession(adapter, home, options);
    sessions.push(opened.session);
    return opened;
  }

  it("declares no steering, native fork, approvals or snapshot, and has none of those methods", async () => {
    const caps = adapter.capabilities();
    expect(caps.turns).toMatchObject({ interrupt: true, steeringByInterruptRestart: true, activeSteering: false });
    expect(caps.threads).toMatchObject({ fork: false, forkFromTurn: false, readSnapshot: false });
    expect(caps.runtimeRequests).toMatchObject({ approvals: false, userInputQuestions: false });
    const { session } = await open();
    // An undeclared optional method is absent; the host's GuardedSession refuses it with unsupported_capability.
    expect(session.steerTurn).toBeUndefined();
    expect(session.forkThread).toBeUndefined();
    expect(session.respondToRuntimeRequest).toBeUndefined();
    expect(session.readSnapshot).toBeUndefined();
    expect(session.updateMcpGrant).toBeUndefined();
    expect(typeof session.interruptTurn).toBe("function");
  });

  it("runs a profile's session with its own CODEX_HOME and environment: the conversation lives under that home", async () => {
    expect(adapter.capabilities().sessions).toMatchObject({ harnessHome: true, environment: true });
    expect(adapter.capabilities().tools.rules).toEqual({ allow: false, deny: false, ask: false, allowOnly: false });
    const profileHome = await codexHome(server.url);
    try {
      const secret = "exec-profile-value-8e2a";
      const { session, events } = await open({ harnessHome: profileHome.home, environment: { PROFILE_TOKEN: secret } });
      const turn = turnInput("@@shell echo token=$PROFILE_TOKEN", { runtimeMode: "full-access" });
      await session.startTurn(turn);
      expect((await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId)).status).toBe("completed");
      expect(events.textOf(turn.turnId)).toContain(`token=${secret}`);
      const cursor = (await events.waitFor("session.resume_cursor")).cursor;
      const rollouts = (codexHome: string) =>
        existsSync(join(codexHome, "sessions"))
          ? readdirSync(join(codexHome, "sessions"), { recursive: true, encoding: "utf8" }).filter((file) =>
              file.includes(cursor),
            )
          : [];
      expect(rollouts(profileHome.home)).toHaveLength(1);
      expect(rollouts(home.home)).toEqual([]);
    } finally {
      await profileHome.cleanup();
    }
  });

  it("runs a text turn and resumes the thread in a new session", async () => {
    const first = await open();
    expect(first.session.resumeCursor).toBeNull();
    const one = turnInput("@@reply exec says hello");
    await first.session.startTurn(one);
    const terminal = await first.events.waitFor("turn.terminal", (event) => event.turnId === one.turnId);
    expect(terminal.status).toBe("completed");
    expect(terminal.usage?.inputTokens).toBeGreaterThan(0);
    expect(first.events.ofTurn(one.turnId)[0]).toMatchObject({ type: "turn.started" });
    expect(first.events.textOf(one.turnId)).toBe("exec says hello");
    expect(first.events.ofTurn(one.turnId)).toContainEqual(
      expect.objectContaining({ type: "message.completed", text: "exec says hello" }),
    );
    const cursor = (await first.events.waitFor("session.resume_cursor")).cursor;
    expect(first.session.resumeCursor).toBe(cursor);

    const two = turnInput("second turn, same process-less session");
    await first.session.startTurn(two);
    expect((await first.events.waitFor("turn.terminal", (event) => event.turnId === two.turnId)).status).toBe(
      "completed",
    );
    await first.session.close();

    const second = await open({ resumeCursor: cursor });
    const three = turnInput("after resume");
    await second.session.startTurn(three);
    expect((await second.events.waitFor("turn.terminal", (event) => event.turnId === three.turnId)).status).toBe(
      "completed",
    );
    const request = await server.waitForRequest((r) => r.userText === "after resume");
    const history = JSON.stringify((request.body as { input: unknown[] }).input);
    expect(history).toContain("@@reply exec says hello");
    expect(history).toContain("second turn, same process-less session");
  });

  it("surfaces shell commands as command tool calls, and runs read-only in approval-required mode", async () => {
    const { session, events } = await open();
    const free = turnInput("@@shell touch exec-free.txt && echo made", { runtimeMode: "full-access" });
    await session.startTurn(free);
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === free.turnId)).status).toBe("completed");
    expect(events.ofTurn(free.turnId)).toContainEqual(
      expect.objectContaining({
        type: "tool_call.started",
        kind: "command",
        title: "touch exec-free.txt && echo made",
      }),
    );
    expect(events.ofTurn(free.turnId)).toContainEqual(
      expect.objectContaining({
        type: "tool_call.completed",
        status: "completed",
        output: expect.stringContaining("made"),
      }),
    );
    expect(existsSync(join(home.cwd, "exec-free.txt"))).toBe(true);

    // codex exec cannot ask, so approval-required means a read-only sandbox.
    const guarded = turnInput("@@shell touch exec-guarded.txt", { runtimeMode: "approval-required" });
    await session.startTurn(guarded);
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === guarded.turnId)).status).toBe(
      "completed",
    );
    expect(existsSync(join(home.cwd, "exec-guarded.txt"))).toBe(false);

    const edits = turnInput("plain", { runtimeMode: "auto-accept-edits" });
    await session.startTurn(edits);
    await events.waitFor("turn.terminal", (event) => event.turnId === edits.turnId);
    expect(events.ofTurn(edits.turnId)).toContainEqual(
      expect.objectContaining({ type: "warning", message: expect.stringContaining('runs as "approval-required"') }),
    );
  });

  it("injects MCP through config with the token only in the process environment", async () => {
    const mcp = await startTestMcpServer();
    try {
      const { session, events } = await open({ mcp: grantFor(mcp.url, mcp.token) });
      const turn = turnInput('@@hold exec-mcp @@tool echo {"text":"via-exec"}');
      await session.startTurn(turn);
      await server.waitForHold("exec-mcp");
      const [proc] = execProcesses();
      expect(proc).toBeDefined();
      const { argv, env } = processInfo(proc!.pid);
      expect(argv).toContain(`mcp_servers.switchyard.bearer_token_env_var="${MCP_TOKEN_ENV_VAR}"`);
      expect(argv).toContain('mcp_servers.switchyard-direct.omit_tools_from=["code_mode", "deferred"]');
      expect(argv.join(" ")).not.toContain(mcp.token);
      expect(env[MCP_TOKEN_ENV_VAR]).toBe(mcp.token);
      server.release("exec-mcp");

      expect((await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId)).status).toBe("completed");
      expect(mcp.calls).toEqual([{ tool: "echo", args: { text: "via-exec" } }]);
      expect(events.ofTurn(turn.turnId)).toContainEqual(
        expect.objectContaining({
          type: "tool_call.started",
          kind: "mcp",
          server: "switchyard",
          name: "mcp__switchyard__echo",
        }),
      );
      expect(events.ofTurn(turn.turnId)).toContainEqual(
        expect.objectContaining({ type: "tool_call.completed", status: "completed", output: "echo: via-exec" }),
      );
      // The host folds instructions for a driver without an instruction channel; the adapter
      // sends the prompt as given and never adds the grant's instructions itself.
      const request = await server.waitForRequest((r) => r.userText?.includes("via-exec") === true);
      expect(JSON.stringify((request.body as { input: unknown[] }).input)).not.toContain("<switchyard_instructions>");
      expect(JSON.stringify([ctx.logs, events.events])).not.toContain(mcp.token);
    } finally {
      await mcp.close();
    }
  });

  it("interrupts by aborting the turn's process, leaving no process behind", async () => {
    const { session, events } = await open();
    const turn = turnInput("@@hold exec-interrupt @@reply late");
    await session.startTurn(turn);
    await server.waitForHold("exec-interrupt");
    expect(execProcesses()).toHaveLength(1);
    await session.interruptTurn!({ turnId: turn.turnId });
    const terminal = await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    expect(terminal.status).toBe("interrupted");
    server.release("exec-interrupt");
    await eventually(() => execProcesses().length === 0, 10_000, "the aborted codex exec exited");
    await expect(session.interruptTurn!({ turnId: turn.turnId })).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "turn_not_active"),
    );

    const shell = turnInput("@@shell sleep 30");
    await session.startTurn(shell);
    await events.waitFor("tool_call.started", (event) => event.turnId === shell.turnId);
    await eventually(
      () => processesMentioning(home.home).some((proc) => proc.cmdline.includes("sleep 30")),
      10_000,
      "the shell command runs",
    );
    await session.interruptTurn!({ turnId: shell.turnId });
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === shell.turnId)).status).toBe(
      "interrupted",
    );
    await eventually(() => processesMentioning(home.home).length === 0, 10_000, "no codex exec nor its shell survives");
  });
});

describe("codex-exec driver in a Switchyard host", () => {
  const INSTANCE = "codex-exec-main";
  let lab: TestHost;

  beforeAll(async () => {
    lab = await startTestHost({
      plugins: [PLUGIN_DIR],
      providers: [{ id: INSTANCE, driver: "codex-exec", options: {}, homePath: home.home, environment: home.env }],
    });
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it("degrades a steer to interrupt-and-restart (delivery restarted)", async () => {
    const threadId = await lab.createThread(INSTANCE, "first ask @@hold exec-steer @@reply never", {
      runtimeMode: "full-access",
    });
    await server.waitForHold("exec-steer");
    await eventually(
      async () => (await lab.host.threads.runs(threadId))[0]?.status === "running",
      10_000,
      "the run is running",
    );
    const sent = await lab.host.threads.send({
      threadId,
      text: "EXEC-STEER: new direction",
      mode: "steer",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(sent.delivery).toBe("restarted");
    expect(sent.decision).toMatchObject({ asked: "steer", action: "restart", degraded: true });
    const restarted = await server.waitForRequest(
      (request) => request.userText?.includes("EXEC-STEER: new direction") === true,
      20_000,
    );
    expect(restarted.heldOn).toBeUndefined();
    server.release("exec-steer");
    const run = await lab.waitForRun(threadId);
    expect(run.status).toBe("completed");
  });

  it("calls the live MCP endpoint with the session's credential", async () => {
    const threadId = await lab.createThread(INSTANCE, "@@tool orchestrator_capabilities {}", {
      runtimeMode: "full-access",
    });
    expect((await lab.waitForRun(threadId)).status).toBe("completed");
    const tool = (
      lab.host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position") as unknown as {
        kind: string;
        status: string;
        data: Record<string, unknown>;
      }[]
    ).find((item) => item.kind === "tool_call");
    expect(tool).toMatchObject({ status: "completed", data: { toolKind: "mcp", server: "switchyard" } });
    expect(String(tool?.data.output)).toContain(`"providerInstanceId":"${INSTANCE}"`);
  });
});
