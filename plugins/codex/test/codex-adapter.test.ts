import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hasErrorCode, type AdapterEvent, type OrchestrationAdapter, type ProviderSession } from "@switchyard/sdk";
import { ScriptedModelServer, startTestMcpServer, turnInput, type TestMcpServer } from "@switchyard/testkit";
import { MCP_TOKEN_ENV_VAR } from "../src/index.js";
import {
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

// The `codex` driver against the real codex 0.171 app-server, driven by the scripted model
// server. Each test opens sessions directly on the adapter, with a plugin context that starts
// real process groups; the host-level tests are in codex-host.test.ts.

let server: ScriptedModelServer;
let home: CodexHome;
let ctx: AcpTestContext;
let adapter: OrchestrationAdapter;
const sessions: ProviderSession[] = [];

beforeAll(async () => {
  server = await ScriptedModelServer.start();
  home = await codexHome(server.url);
});

afterAll(async () => {
  await server.close();
  await home.cleanup();
});

beforeEach(async () => {
  server.reset();
  ctx = await createAcpTestContext();
  adapter = await createAdapter("codex", home, ctx);
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

function terminalOf(events: readonly AdapterEvent[], turnId: string) {
  return events.filter(
    (event): event is Extract<AdapterEvent, { type: "turn.terminal" }> =>
      event.type === "turn.terminal" && event.turnId === turnId,
  );
}

describe("codex app-server driver", () => {
  it("runs a text turn: turn.started, streamed deltas, the completed message and one completed terminal", async () => {
    const { session, events } = await open();
    const cursor = await events.waitFor("session.resume_cursor");
    expect(session.resumeCursor).toBe(cursor.cursor);

    const turn = turnInput("@@reply Hello from the scripted model, streamed in several chunks.");
    const started = await session.startTurn(turn);
    expect(started.providerTurnId).toMatch(/^[0-9a-f-]{36}$/);
    const terminal = await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    expect(terminal.status).toBe("completed");
    expect(terminal.usage?.inputTokens).toBeGreaterThan(0);

    const ofTurn = events.ofTurn(turn.turnId);
    expect(ofTurn[0]).toMatchObject({ type: "turn.started", providerTurnId: started.providerTurnId });
    const deltas = ofTurn.filter((event) => event.type === "message.delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.textOf(turn.turnId)).toBe("Hello from the scripted model, streamed in several chunks.");
    expect(ofTurn).toContainEqual(
      expect.objectContaining({
        type: "message.completed",
        text: "Hello from the scripted model, streamed in several chunks.",
      }),
    );
    expect(terminalOf(events.events, turn.turnId)).toHaveLength(1);
  });

  it("surfaces a shell command as a command tool call with its output", async () => {
    const { session, events } = await open();
    const turn = turnInput("@@shell echo shell-$((40+2))");
    await session.startTurn(turn);
    const terminal = await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    expect(terminal.status).toBe("completed");
    const started = events.ofTurn(turn.turnId).find((event) => event.type === "tool_call.started");
    expect(started).toMatchObject({ kind: "command", name: "exec_command", title: "echo shell-$((40+2))" });
    const completed = events.ofTurn(turn.turnId).find((event) => event.type === "tool_call.completed");
    expect(completed).toMatchObject({ status: "completed", itemId: (started as { itemId: string }).itemId });
    expect((completed as { output?: string }).output).toContain("shell-42");
    expect(events.textOf(turn.turnId)).toContain("DONE after exec_command: shell-42");
  });

  it("runs a profile's session with its own CODEX_HOME and environment (the values in no argv)", async () => {
    const profileHome = await codexHome(server.url);
    try {
      const secret = "profile-value-5d1c";
      const { session, events } = await open({
        harnessHome: profileHome.home,
        environment: { PROFILE_TOKEN: secret },
      });
      const pid = (session as unknown as { appServerPid: number }).appServerPid;
      const { argv, env } = processInfo(pid);
      expect(env["CODEX_HOME"]).toBe(profileHome.home);
      expect(env["PROFILE_TOKEN"]).toBe(secret);
      expect(argv.join(" ")).not.toContain(secret);
      const turn = turnInput("@@shell echo token=$PROFILE_TOKEN");
      await session.startTurn(turn);
      expect((await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId)).status).toBe("completed");
      expect(events.textOf(turn.turnId)).toContain(`token=${secret}`);
      // Codex keeps the conversation under the profile's home, not the instance's.
      const cursor = events.events.find((event) => event.type === "session.resume_cursor") as { cursor: string };
      const rollouts = (codexHome: string) =>
        existsSync(join(codexHome, "sessions"))
          ? readdirSync(join(codexHome, "sessions"), { recursive: true, encoding: "utf8" }).filter((file) =>
              file.includes(cursor.cursor),
            )
          : [];
      expect(rollouts(profileHome.home)).toHaveLength(1);
      expect(rollouts(home.home)).toEqual([]);
    } finally {
      await profileHome.cleanup();
    }
  });

  it("steers the running turn natively: the steer text reaches the next model request of the same turn", async () => {
    const { session, events } = await open();
    const turn = turnInput("first message @@hold steer-gate @@reply never shown");
    await session.startTurn(turn);
    await server.waitForHold("steer-gate");
    await session.steerTurn!({ turnId: turn.turnId, text: "STEER: also say hi" });
    const steered = await server.waitForRequest((request) => request.userText === "STEER: also say hi");
    const userTexts = (steered.body as { input: { role?: string; content?: { text?: string }[] }[] }).input
      .filter((item) => item.role === "user")
      .map((item) => item.content?.[0]?.text ?? "");
    expect(userTexts.slice(-2)).toEqual(["first message @@hold steer-gate @@reply never shown", "STEER: also say hi"]);
    server.release("steer-gate");
    const terminal = await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    expect(terminal.status).toBe("completed");
    expect(events.textOf(turn.turnId)).toBe("PONG");
    expect(terminalOf(events.events, turn.turnId)).toHaveLength(1);
  });

  it("interrupts a running turn: one interrupted terminal, and the session takes the next turn", async () => {
    const { session, events } = await open();
    const turn = turnInput("long work @@hold interrupt-gate @@reply too late");
    await session.startTurn(turn);
    await server.waitForHold("interrupt-gate");
    await session.interruptTurn!({ turnId: turn.turnId, reason: "test" });
    const terminal = await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    expect(terminal.status).toBe("interrupted");
    server.release("interrupt-gate");

    const next = turnInput("after the interrupt");
    await session.startTurn(next);
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === next.turnId)).status).toBe("completed");
    expect(terminalOf(events.events, turn.turnId)).toHaveLength(1);
    await expect(session.steerTurn!({ turnId: turn.turnId, text: "late" })).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "turn_not_active"),
    );
  });

  it("steers and interrupts a turn the moment turn/start has answered (before Codex announced it)", async () => {
    const { session, events } = await open();
    const steered = turnInput("early steer @@hold early-steer-gate @@reply unseen");
    await session.startTurn(steered);
    await session.steerTurn!({ turnId: steered.turnId, text: "EARLY STEER" });
    await server.waitForRequest((request) => request.userText === "EARLY STEER");
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === steered.turnId)).status).toBe(
      "completed",
    );
    server.release("early-steer-gate");

    const interrupted = turnInput("early interrupt @@hold early-interrupt-gate");
    const startedAt = Date.now();
    await session.startTurn(interrupted);
    await session.interruptTurn!({ turnId: interrupted.turnId });
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === interrupted.turnId)).status).toBe(
      "interrupted",
    );
    // Interrupted by Codex itself, not by the restart after interruptTimeoutMs.
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(
      events.events.some(
        (event) => event.type === "warning" && event.message.startsWith("Restarting codex app-server"),
      ),
    ).toBe(false);
    server.release("early-interrupt-gate");
  });

  it("resumes a closed session from its cursor with the conversation intact", async () => {
    const first = await open();
    const one = turnInput("alpha one");
    await first.session.startTurn(one);
    await first.events.waitFor("turn.terminal", (event) => event.turnId === one.turnId);
    const cursor = first.session.resumeCursor!;
    await first.session.close();

    const second = await open({ resumeCursor: cursor });
    expect(second.session.resumeCursor).toBe(cursor);
    const two = turnInput("beta two");
    await second.session.startTurn(two);
    expect((await second.events.waitFor("turn.terminal", (event) => event.turnId === two.turnId)).status).toBe(
      "completed",
    );
    const request = await server.waitForRequest((r) => r.userText === "beta two");
    const history = JSON.stringify((request.body as { input: unknown[] }).input);
    expect(history).toContain("alpha one");
    expect(history).toContain("PONG");
    // A resumed session does not announce a new cursor: the thread is the same.
    expect(second.events.events.some((event) => event.type === "session.resume_cursor")).toBe(false);

    await expect(open({ resumeCursor: "01a229b1-0000-7000-8000-000000000000" })).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "not_found"),
    );
  });

  it("forks natively, cutting after a given turn, and the fork resumes in its own session", async () => {
    const { session, events } = await open();
    const one = turnInput("fork-alpha");
    await session.startTurn(one);
    await events.waitFor("turn.terminal", (event) => event.turnId === one.turnId);
    const two = turnInput("fork-beta");
    await session.startTurn(two);
    await events.waitFor("turn.terminal", (event) => event.turnId === two.turnId);

    const whole = await session.forkThread!({});
    const cut = await session.forkThread!({ afterTurnId: one.turnId });
    expect(new Set([whole.resumeCursor, cut.resumeCursor, session.resumeCursor]).size).toBe(3);
    await expect(session.forkThread!({ afterTurnId: "no-such-turn" })).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "not_found"),
    );

    const forked = await open({ resumeCursor: cut.resumeCursor });
    const three = turnInput("fork-gamma");
    await forked.session.startTurn(three);
    expect((await forked.events.waitFor("turn.terminal", (event) => event.turnId === three.turnId)).status).toBe(
      "completed",
    );
    const request = await server.waitForRequest((r) => r.userText === "fork-gamma");
    const history = JSON.stringify((request.body as { input: unknown[] }).input);
    expect(history).toContain("fork-alpha");
    expect(history).not.toContain("fork-beta");

    // The whole copy keeps both turns; the host's turn ids map through the rollout after a restart.
    const wholeSession = await open({ resumeCursor: whole.resumeCursor });
    const snapshot = await wholeSession.session.readSnapshot!();
    expect(snapshot.turns.map((entry) => entry.userText)).toEqual(["fork-alpha", "fork-beta"]);
    expect(snapshot.turns.map((entry) => entry.assistantText)).toEqual(["PONG", "PONG"]);
    // One writer per Codex thread: the host holds one session per thread, so reopen after closing.
    const sourceCursor = session.resumeCursor;
    await session.close();
    const reopened = await open({ resumeCursor: sourceCursor });
    const fromRestart = await reopened.session.forkThread!({ afterTurnId: one.turnId });
    const cutAgain = await open({ resumeCursor: fromRestart.resumeCursor });
    expect((await cutAgain.session.readSnapshot!()).turns.map((entry) => entry.userText)).toEqual(["fork-alpha"]);
  });

  it("asks for approval in approval-required mode and carries the decision back to Codex", async () => {
    const { session, events } = await open({ runtimeMode: "approval-required" });
    const accepted = turnInput("@@shell touch approved.txt", { runtimeMode: "approval-required" });
    await session.startTurn(accepted);
    const request = await events.waitFor("runtime_request.opened", (event) => event.turnId === accepted.turnId);
    expect(request.request).toMatchObject({ kind: "approval", approvalKind: "command", title: "touch approved.txt" });
    expect(existsSync(join(home.cwd, "approved.txt"))).toBe(false);
    await session.respondToRuntimeRequest!(request.requestId, { kind: "approval", decision: "accept" });
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === accepted.turnId)).status).toBe(
      "completed",
    );
    expect(existsSync(join(home.cwd, "approved.txt"))).toBe(true);
    expect(events.ofTurn(accepted.turnId)).toContainEqual(
      expect.objectContaining({
        type: "runtime_request.resolved",
        requestId: request.requestId,
        resolution: "answered",
      }),
    );
    expect(events.ofTurn(accepted.turnId)).toContainEqual(
      expect.objectContaining({ type: "tool_call.completed", status: "completed" }),
    );

    const declined = turnInput("@@shell touch declined.txt", { runtimeMode: "approval-required" });
    await session.startTurn(declined);
    const second = await events.waitFor("runtime_request.opened", (event) => event.turnId === declined.turnId);
    await session.respondToRuntimeRequest!(second.requestId, { kind: "approval", decision: "decline" });
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === declined.turnId)).status).toBe(
      "completed",
    );
    expect(existsSync(join(home.cwd, "declined.txt"))).toBe(false);
    expect(events.ofTurn(declined.turnId)).toContainEqual(
      expect.objectContaining({ type: "tool_call.completed", status: "declined" }),
    );

    const dismissed = turnInput("@@shell touch dismissed.txt", { runtimeMode: "approval-required" });
    await session.startTurn(dismissed);
    const third = await events.waitFor("runtime_request.opened", (event) => event.turnId === dismissed.turnId);
    await session.respondToRuntimeRequest!(third.requestId, { kind: "dismiss" });
    // Codex answers `cancel` by ending the turn.
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === dismissed.turnId)).status).toBe(
      "cancelled",
    );
    await expect(
      session.respondToRuntimeRequest!(third.requestId, { kind: "approval", decision: "accept" }),
    ).rejects.toSatisfy((error: unknown) => hasErrorCode(error, "not_found"));

    // The same session, switched to full-access for one turn, runs without asking.
    const free = turnInput("@@shell touch free.txt", { runtimeMode: "full-access" });
    await session.startTurn(free);
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === free.turnId)).status).toBe("completed");
    expect(existsSync(join(home.cwd, "free.txt"))).toBe(true);
    expect(events.ofTurn(free.turnId).some((event) => event.type === "runtime_request.opened")).toBe(false);
  });

  it("calls MCP tools with the session's bearer token from its environment, never from argv or logs", async () => {
    const mcp: TestMcpServer = await startTestMcpServer();
    try {
      const { session, events } = await open({ mcp: grantFor(mcp.url, mcp.token) });
      const pid = (session as unknown as { appServerPid: number }).appServerPid;
      const { argv, env } = processInfo(pid);
      expect(argv.slice(1)).toEqual(["app-server"]);
      expect(argv.join(" ")).not.toContain(mcp.token);
      expect(env[MCP_TOKEN_ENV_VAR]).toBe(mcp.token);

      const turn = turnInput('@@tool echo {"text":"over-mcp"}');
      await session.startTurn(turn);
      expect((await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId)).status).toBe("completed");
      expect(mcp.calls).toEqual([{ tool: "echo", args: { text: "over-mcp" } }]);
      expect(mcp.rejectedRequests).toBe(0);
      const started = events.ofTurn(turn.turnId).find((event) => event.type === "tool_call.started");
      expect(started).toMatchObject({
        kind: "mcp",
        name: "mcp__switchyard__echo",
        server: "switchyard",
        title: "switchyard/echo",
        input: { text: "over-mcp" },
      });
      expect(events.ofTurn(turn.turnId)).toContainEqual(
        expect.objectContaining({ type: "tool_call.completed", status: "completed", output: "echo: over-mcp" }),
      );

      // The host delivers the grant's instructions (in the first turn's instructions); the
      // adapter never adds them itself, so the model sees them once.
      const request = await server.waitForRequest((r) => r.userText?.includes("over-mcp") === true);
      expect(JSON.stringify(request.body)).not.toContain("SWITCHYARD-ORCHESTRATION-INSTRUCTIONS");
      expect(request.userText).toBe('@@tool echo {"text":"over-mcp"}');
      // The split entry: the direct server only carries t3_thread_wait, which this server lacks.
      expect(request.toolNames).toContain("mcp__switchyard__echo");
      expect(request.toolNames.some((name) => name.startsWith("mcp__switchyard_direct__"))).toBe(false);

      const everything = JSON.stringify([ctx.logs, events.events]);
      expect(everything).not.toContain(mcp.token);
      for (const proc of processesMentioning(mcp.token)) expect(proc.cmdline).not.toContain(mcp.token);
    } finally {
      await mcp.close();
    }
  });

  it("turns Codex's approval of a third-party MCP tool call into an mcp-elicitation approval", async () => {
    const other = await startTestMcpServer();
    try {
      // A user-configured server (instance config) without an approval mode: Codex asks first.
      await adapter.dispose?.();
      adapter = await createAdapter(
        "codex",
        home,
        ctx,
        { config: { "mcp_servers.other": { url: other.url, bearer_token_env_var: "OTHER_MCP_TOKEN" } } },
        { OTHER_MCP_TOKEN: other.token },
      );
      const { session, events } = await open({ runtimeMode: "approval-required" });
      const turn = turnInput('@@tool echo {"text":"needs-ok"}', { runtimeMode: "approval-required" });
      await session.startTurn(turn);
      const request = await events.waitFor("runtime_request.opened", (event) => event.turnId === turn.turnId);
      expect(request.request).toMatchObject({ kind: "approval", approvalKind: "mcp-elicitation", title: "other/echo" });
      expect(other.calls).toEqual([]);
      await session.respondToRuntimeRequest!(request.requestId, { kind: "approval", decision: "accept" });
      expect((await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId)).status).toBe("completed");
      expect(other.calls).toEqual([{ tool: "echo", args: { text: "needs-ok" } }]);
      expect(events.ofTurn(turn.turnId)).toContainEqual(
        expect.objectContaining({ type: "tool_call.started", kind: "mcp", server: "other", name: "mcp__other__echo" }),
      );
    } finally {
      await other.close();
    }
  });

  it("delivers a turn's instructions as a developer message before the user's text", async () => {
    const { session, events } = await open();
    const turn = turnInput("with instructions", { instructions: "ROLE-INSTRUCTION: answer tersely." });
    await session.startTurn(turn);
    await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    const request = await server.waitForRequest((r) => r.userText === "with instructions");
    const input = (request.body as { input: { role?: string; content?: { text?: string }[] }[] }).input;
    const roles = input.map((item) => `${item.role}:${item.content?.[0]?.text ?? ""}`);
    const instructionAt = roles.findIndex((entry) => entry === "developer:ROLE-INSTRUCTION: answer tersely.");
    expect(instructionAt).toBeGreaterThan(-1);
    expect(instructionAt).toBeLessThan(roles.indexOf("user:with instructions"));
  });

  it("passes the turn's effort to Codex: the model request carries it as reasoning.effort", async () => {
    const { session, events } = await open();
    const turn = turnInput("think hard", { effort: "high" });
    await session.startTurn(turn);
    await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    const request = await server.waitForRequest((r) => r.userText === "think hard");
    expect((request.body as { reasoning?: { effort?: string } }).reasoning?.effort).toBe("high");
  });

  it("observes Codex's own sub-agents with their native thread ids", async () => {
    const { session, events } = await open();
    const turn = turnInput('@@tool spawn_agent {"message":"child task hello"}');
    await session.startTurn(turn);
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId)).status).toBe("completed");
    const running = await events.waitFor("subagent.observed", (event) => event.status === "running");
    const spawnCall = events
      .ofTurn(turn.turnId)
      .find((event) => event.type === "tool_call.started" && event.name === "spawn_agent");
    expect(spawnCall).toMatchObject({ kind: "subagent" });
    // Spawned: tied to the spawn_agent call, with its task.
    expect(running).toMatchObject({
      turnId: turn.turnId,
      title: "child task hello",
      task: "child task hello",
      parentItemId: (spawnCall as { itemId: string }).itemId,
    });
    expect(running.nativeThreadId).toBe(running.nativeId);
    const done = await events.waitFor("subagent.observed", (event) => event.status === "completed");
    expect(done).toMatchObject({
      nativeId: running.nativeId,
      summary: "PONG",
      task: "child task hello",
      parentItemId: running.parentItemId,
    });
    // Its transcript: what it answered, before it is reported finished.
    const message = await events.waitFor("subagent.message", (event) => event.nativeId === running.nativeId);
    expect(message).toMatchObject({ turnId: turn.turnId, role: "assistant", text: "PONG" });
    expect(events.events.indexOf(message)).toBeLessThan(events.events.indexOf(done));
    // The child's own turn never ends ours: exactly one terminal.
    expect(terminalOf(events.events, turn.turnId)).toHaveLength(1);
  });

  it("names the sub-agent an approval came from: a spawned child's request carries its native id", async () => {
    const { session, events } = await open({ runtimeMode: "approval-required" });
    const message = "helper task @@shell touch from-the-child.txt @@then @@reply child saw {{output}}";
    const wait = JSON.stringify({ targets: ["{{output.agent_id}}"], timeout_ms: 120_000 });
    const turn = turnInput(
      `spawn @@tool spawn_agent ${JSON.stringify({ message })} @@then @@tool wait_agent ${wait} @@then @@reply main is done`,
      { runtimeMode: "approval-required" },
    );
    await session.startTurn(turn);
    const child = await events.waitFor("subagent.observed", (event) => event.status === "running");
    const request = await events.waitFor(
      "runtime_request.opened",
      (event) => event.turnId === turn.turnId && event.request.kind === "approval",
    );
    expect(request.request).toMatchObject({ approvalKind: "command", title: "touch from-the-child.txt" });
    expect(request.subagentNativeId).toBe(child.nativeId);
    await session.respondToRuntimeRequest!(request.requestId, { kind: "approval", decision: "accept" });
    expect((await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId)).status).toBe("completed");
    expect(existsSync(join(home.cwd, "from-the-child.txt"))).toBe(true);
    // The parent's own approvals name no child (the test above): only the child's did.
  });

  it("fails a turn the model refuses, with Codex's error", async () => {
    const { session, events } = await open();
    const turn = turnInput("@@fail 400 scripted refusal for the test");
    await session.startTurn(turn);
    const terminal = await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    expect(terminal.status).toBe("failed");
    expect(terminal.error?.message).toContain("scripted refusal for the test");
    expect(terminalOf(events.events, turn.turnId)).toHaveLength(1);
  });

  it("reports a dead app-server: the running turn fails, then session.exited", async () => {
    const { session, events } = await open();
    const turn = turnInput("doomed @@hold crash-gate");
    await session.startTurn(turn);
    await server.waitForHold("crash-gate");
    process.kill((session as unknown as { appServerPid: number }).appServerPid, "SIGKILL");
    const terminal = await events.waitFor("turn.terminal", (event) => event.turnId === turn.turnId);
    expect(terminal).toMatchObject({ status: "failed", error: { code: "app_server_exited" } });
    await events.waitFor("session.exited");
    server.release("crash-gate");
    await expect(session.startTurn(turnInput("after death"))).rejects.toSatisfy((error: unknown) =>
      hasErrorCode(error, "session_closed"),
    );
  });

  it("probes without starting a turn: version, the configured model first, custom models", async () => {
    const status = await adapter.probe();
    expect(status).toMatchObject({ installed: true, executable: true, authenticated: true, version: "0.171.0" });
    expect(status.models[0]).toEqual({ id: "fake-model", isDefault: true, source: "harness_config" });
    expect(status.models.map((model) => model.id)).toContain("custom-model-x");
    expect(server.requests.filter((request) => request.api === "openai-responses")).toHaveLength(0);
  });

  it("leaves no Codex process behind", async () => {
    const { session, events } = await open();
    const turn = turnInput("@@shell sleep 30 @@then @@reply unreachable");
    await session.startTurn(turn);
    await events.waitFor("tool_call.started", (event) => event.turnId === turn.turnId);
    await eventually(
      () => processesMentioning(home.home).some((proc) => proc.cmdline.includes("sleep 30")),
      10_000,
      "the shell command runs",
    );
    await session.close();
    await eventually(
      () => processesMentioning(home.home).length === 0,
      10_000,
      "every process with our CODEX_HOME exited",
    );
  });
});
