/**
 * The Pi adapter against the real `pi --mode rpc` (1.6.0) and the scripted model server:
 * turns, tool calls, steering, interrupts, resume in a new process, fork, model switching,
 * approvals through the Switchyard extension, provider errors and capability honesty.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hasErrorCode, type AdapterEvent } from "@switchyard/sdk";
import {
  createPiHome,
  environmentVariablesOf,
  resolveHarnessBinary,
  startTestMcpServer,
  turnInput,
  type TestMcpServer,
} from "@switchyard/testkit";
import { ACKNOWLEDGING_EXTENSION, addSecondModel, createPiLab, grantFor, isAlive, type PiLab } from "./pi-lab.js";

let lab: PiLab;

beforeAll(async () => {
  lab = await createPiLab();
}, 60_000);
afterEach(() => lab.server.reset());
afterAll(async () => {
  await lab?.dispose();
}, 60_000);

const ofType = <T extends AdapterEvent["type"]>(events: readonly AdapterEvent[], type: T, turnId: string) =>
  events.filter(
    (event): event is Extract<AdapterEvent, { type: T }> =>
      event.type === type && "turnId" in event && event.turnId === turnId,
  );

/** The events of a turn's calls to one tool (a turn that calls a deferred tool calls tool_search first). */
const callsTo = <T extends "tool_call.started" | "tool_call.completed">(
  events: readonly AdapterEvent[],
  type: T,
  turnId: string,
  tool: string,
) => {
  const ids = new Set(
    ofType(events, "tool_call.started", turnId)
      .filter((event) => event.name === tool)
      .map((event) => event.itemId),
  );
  return ofType(events, type, turnId).filter((event) => ids.has((event as { itemId: string }).itemId));
};

/** A script that finds a deferred tool with Pi's tool_search, then calls it (seed 000: only three Switchyard tools stay direct on Pi 0.99+). */
const viaSearch = (tool: string, args: string) =>
  `@@tool tool_search {"query":"${tool}"} @@then @@tool ${tool} ${args}`;

describe("Pi adapter over pi --mode rpc", () => {
  it("runs a text turn: started, streamed deltas, completed message, one completed terminal, a resume cursor", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("say it @@reply hello from pi");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("completed");
    expect(terminal.usage?.outputTokens).toBeGreaterThan(0);

    const mine = events.ofTurn(input.turnId).map((e) => e.type);
    expect(mine[0]).toBe("turn.started");
    expect(mine.at(-1)).toBe("turn.terminal");
    expect(mine.filter((type) => type === "turn.terminal")).toHaveLength(1);
    expect(events.textOf(input.turnId)).toBe("hello from pi");
    expect(ofType(events.events, "message.completed", input.turnId).map((e) => e.text)).toEqual(["hello from pi"]);

    const cursor = await events.waitFor("session.resume_cursor");
    expect(cursor.cursor).toMatch(/\.jsonl$/);
    expect(existsSync(cursor.cursor)).toBe(true);
    expect(session.resumeCursor).toBe(cursor.cursor);
  });

  it("surfaces Pi's bash tool as a command tool call with its output", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("run it @@shell echo hi-from-bash");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("completed");
    const started = ofType(events.events, "tool_call.started", input.turnId);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({
      kind: "command",
      name: "bash",
      title: "echo hi-from-bash",
      input: { command: "echo hi-from-bash" },
    });
    const completed = ofType(events.events, "tool_call.completed", input.turnId);
    expect(completed).toEqual([
      expect.objectContaining({ itemId: started[0]!.itemId, status: "completed", output: "hi-from-bash\n" }),
    ]);
    expect(events.textOf(input.turnId)).toBe("DONE after bash: hi-from-bash");
  });

  it("runs a profile's session with its home as Pi's agent directory and its environment: the conversation lives there", async () => {
    expect(lab.adapter.capabilities().sessions).toMatchObject({ harnessHome: true, environment: true });
    const profileHome = await createPiHome({ modelServerUrl: lab.server.url });
    try {
      const secret = "pi-profile-value-3f9b";
      const { session, events } = await lab.open({
        harnessHome: profileHome.home,
        environment: { PROFILE_TOKEN: secret },
      });
      const input = turnInput("run it @@shell echo token=$PROFILE_TOKEN");
      await session.startTurn(input);
      const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
      expect(terminal.status).toBe("completed");
      expect(events.textOf(input.turnId)).toBe(`DONE after bash: token=${secret}`);
      const spawned = lab.spawns.at(-1)!;
      expect(spawned.env["PI_CODING_AGENT_DIR"]).toBe(profileHome.home);
      expect(spawned.args.join(" ")).not.toContain(secret);
      expect(session.resumeCursor?.startsWith(profileHome.home + path.sep)).toBe(true);
      await session.close();
    } finally {
      await profileHome.cleanup();
    }
  });

  it("applies a profile's tool rules through the extension: deny blocks in full access, ask asks, allowOnly blocks the unnamed", async () => {
    expect(lab.adapter.capabilities().tools.rules).toEqual({ allow: true, deny: true, ask: true, allowOnly: true });
    const marker = path.join(lab.home.cwd, "pi-denied-by-profile.txt");
    const denied = await lab.open({
      runtimeMode: "full-access",
      toolRules: { allow: [], deny: ["Bash(touch:*)"], ask: ["bash(echo asked*)"], allowOnly: false },
    });
    const refused = turnInput(`go @@shell touch ${marker} @@then @@shell echo free @@then @@reply ok`, {
      runtimeMode: "full-access",
    });
    await denied.session.startTurn(refused);
    expect((await denied.events.waitFor("turn.terminal", (e) => e.turnId === refused.turnId, 30_000)).status).toBe(
      "completed",
    );
    expect(existsSync(marker)).toBe(false);
    const completed = ofType(denied.events.events, "tool_call.completed", refused.turnId);
    expect(completed.map((event) => event.status)).toEqual(["failed", "completed"]);
    expect(JSON.stringify(completed[0])).toContain("profile does not allow");
    expect(ofType(denied.events.events, "runtime_request.opened", refused.turnId)).toEqual([]);

    const asked = turnInput("ask @@shell echo asked-by-rule", { runtimeMode: "full-access" });
    await denied.session.startTurn(asked);
    const opened = await denied.events.waitFor("runtime_request.opened", (e) => e.turnId === asked.turnId, 30_000);
    expect(opened.request).toMatchObject({ kind: "approval", approvalKind: "command" });
    await denied.session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    await denied.events.waitFor("turn.terminal", (e) => e.turnId === asked.turnId, 30_000);
    expect(denied.events.textOf(asked.turnId)).toBe("DONE after bash: asked-by-rule");
    await denied.session.close();

    const only = await lab.open({
      runtimeMode: "full-access",
      toolRules: { allow: ["read"], deny: [], ask: [], allowOnly: true },
    });
    const unnamed = turnInput(`go @@shell touch ${marker}`, { runtimeMode: "full-access" });
    await only.session.startTurn(unnamed);
    await only.events.waitFor("turn.terminal", (e) => e.turnId === unnamed.turnId, 30_000);
    expect(existsSync(marker)).toBe(false);
    expect(ofType(only.events.events, "tool_call.completed", unnamed.turnId).map((event) => event.status)).toEqual([
      "failed",
    ]);
    await only.session.close();

    // Without rules the same call runs: the rules are what blocked it.
    const free = await lab.open({ runtimeMode: "full-access" });
    const runs = turnInput(`go @@shell touch ${marker}`, { runtimeMode: "full-access" });
    await free.session.startTurn(runs);
    await free.events.waitFor("turn.terminal", (e) => e.turnId === runs.turnId, 30_000);
    expect(existsSync(marker)).toBe(true);
    await free.session.close();
  });

  it("steers a turn while the model holds its stream: the steer reaches the next model request", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("first @@hold steer-gate @@reply first answer");
    await session.startTurn(input);
    await lab.server.waitForHold("steer-gate", 30_000);
    // Pi 1.x acknowledges the steer `queued`: delivered into the running turn.
    expect(await session.steerTurn({ turnId: input.turnId, text: "steered text @@echo" })).toEqual({
      disposition: "delivered",
    });
    lab.server.release("steer-gate");
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("completed");
    const next = await lab.server.waitForRequest((r) => r.userText === "steered text @@echo");
    expect(JSON.stringify(next.body)).toContain("first answer");
    expect(ofType(events.events, "message.completed", input.turnId).map((e) => e.text)).toEqual([
      "first answer",
      "steered text",
    ]);
  });

  it("interrupts a held turn with abort: one interrupted terminal, and the model request is hung up", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("wait @@hold never-released");
    await session.startTurn(input);
    await lab.server.waitForHold("never-released", 30_000);
    await session.interruptTurn({ turnId: input.turnId, reason: "test" });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("interrupted");
    expect(ofType(events.events, "turn.terminal", input.turnId)).toHaveLength(1);
    const aborted = await lab.server.waitForRequest((r) => r.clientAborted);
    expect(aborted.heldOn).toBe("never-released");
    // The session goes on in the same process.
    const after = turnInput("again @@reply still here");
    await session.startTurn(after);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === after.turnId, 30_000)).status).toBe("completed");
  });

  it("refuses to steer or interrupt a turn that is not running", async () => {
    const { session } = await lab.open();
    await expect(session.steerTurn({ turnId: "nope", text: "x" })).rejects.toMatchObject({ code: "turn_not_active" });
    await expect(session.interruptTurn({ turnId: "nope" })).rejects.toMatchObject({ code: "turn_not_active" });
  });

  it("closes, then reopens from the resume cursor in a new process with the conversation intact", async () => {
    const first = await lab.open();
    const remember = turnInput("remember ALPHA-7 @@reply noted");
    await first.session.startTurn(remember);
    await first.events.waitFor("turn.terminal", (e) => e.turnId === remember.turnId, 30_000);
    const cursor = first.session.resumeCursor;
    const firstPid = first.session.processId!;
    expect(cursor).not.toBeNull();
    await first.session.close();
    expect(isAlive(firstPid)).toBe(false);

    const second = await lab.open({ resumeCursor: cursor });
    expect(second.session.processId).not.toBe(firstPid);
    expect(second.session.resumeCursor).toBe(cursor);
    const recall = turnInput("recall it @@reply recalled");
    await second.session.startTurn(recall);
    expect((await second.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, 30_000)).status).toBe(
      "completed",
    );
    const request = await lab.server.waitForRequest((r) => r.userText === "recall it @@reply recalled");
    const body = JSON.stringify(request.body);
    expect(body).toContain("remember ALPHA-7");
    expect(body).toContain("noted");
    const snapshot = await second.session.readSnapshot();
    expect(snapshot.turns.map((t) => t.userText)).toEqual([
      "remember ALPHA-7 @@reply noted",
      "recall it @@reply recalled",
    ]);
    expect(snapshot.turns.map((t) => t.assistantText)).toEqual(["noted", "recalled"]);
  });

  it("refuses a resume cursor whose session file is gone", async () => {
    await expect(lab.open({ resumeCursor: "/nonexistent/pi-session.jsonl" })).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("forks natively with clone: the copy resumes elsewhere, the original goes on unchanged", async () => {
    const { session, events } = await lab.open();
    const base = turnInput("remember FORK-BASE @@reply base noted");
    await session.startTurn(base);
    await events.waitFor("turn.terminal", (e) => e.turnId === base.turnId, 30_000);
    const original = session.resumeCursor!;
    const { resumeCursor: copy } = await session.forkThread({});
    expect(copy).not.toBe(original);
    expect(existsSync(copy)).toBe(true);
    await expect(session.forkThread({ afterTurnId: base.turnId })).rejects.toMatchObject({
      code: "unsupported_capability",
    });

    // The original session still writes to its own file.
    const more = turnInput("original goes on @@reply on original");
    await session.startTurn(more);
    await events.waitFor("turn.terminal", (e) => e.turnId === more.turnId, 30_000);
    expect(session.resumeCursor).toBe(original);

    const forked = await lab.open({ resumeCursor: copy });
    const recall = turnInput("in the fork @@reply fork answer");
    await forked.session.startTurn(recall);
    await forked.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, 30_000);
    const body = JSON.stringify(
      (await lab.server.waitForRequest((r) => r.userText === "in the fork @@reply fork answer")).body,
    );
    expect(body).toContain("remember FORK-BASE");
    expect(body).not.toContain("original goes on");
  });

  it("fails a turn with the provider's error, exactly once", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("break @@fail 400 scripted-boom");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("failed");
    expect(terminal.error?.message).toContain("scripted-boom");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ofType(events.events, "turn.terminal", input.turnId)).toHaveLength(1);
  });

  it("approval-required: asks before bash through the extension, and runs it once accepted", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const input = turnInput("approve it @@shell echo approved-run", { runtimeMode: "approval-required" });
    await session.startTurn(input);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === input.turnId, 30_000);
    expect(opened.request).toMatchObject({ kind: "approval", approvalKind: "command", title: "echo approved-run" });
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("completed");
    expect(events.events).toContainEqual({
      type: "runtime_request.resolved",
      turnId: input.turnId,
      requestId: opened.requestId,
      resolution: "answered",
    });
    expect(ofType(events.events, "tool_call.completed", input.turnId)[0]).toMatchObject({
      status: "completed",
      output: "approved-run\n",
    });
    await expect(
      session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" }),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  it("approval-required: a declined bash call is reported declined and never runs", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const input = turnInput("decline it @@shell echo must-not-run", { runtimeMode: "approval-required" });
    await session.startTurn(input);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === input.turnId, 30_000);
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "decline" });
    await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    const completed = ofType(events.events, "tool_call.completed", input.turnId)[0];
    // Pi starts the tool before the extension asks, so the declined call is a whole item.
    expect(ofType(events.events, "tool_call.started", input.turnId).map((e) => e.itemId)).toEqual([completed?.itemId]);
    expect(completed?.status).toBe("declined");
    expect(completed?.output).not.toContain("must-not-run\n");
  });

  it("switches the runtime mode between turns without a new process", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const pid = session.processId;
    const input = turnInput("free now @@shell echo no-approval-needed", { runtimeMode: "full-access" });
    await session.startTurn(input);
    await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(events.events.some((e) => e.type === "runtime_request.opened")).toBe(false);
    expect(session.processId).toBe(pid);
  });

  it("interrupting a turn that waits for approval cancels the request", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const input = turnInput("approve later @@shell echo never", { runtimeMode: "approval-required" });
    await session.startTurn(input);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === input.turnId, 30_000);
    await session.interruptTurn({ turnId: input.turnId });
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000)).status).toBe(
      "interrupted",
    );
    expect(events.events).toContainEqual({
      type: "runtime_request.resolved",
      turnId: input.turnId,
      requestId: opened.requestId,
      resolution: "cancelled",
    });
  });

  it("reports a dead pi process: the turn fails, then session.exited", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("hold on @@hold crash-gate");
    await session.startTurn(input);
    await lab.server.waitForHold("crash-gate", 30_000);
    process.kill(session.processId!, "SIGKILL");
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal).toMatchObject({ status: "failed", error: { code: "pi_exited" } });
    await events.waitFor("session.exited");
    await expect(session.startTurn(turnInput("after death"))).rejects.toMatchObject({ code: "session_closed" });
    lab.server.release("crash-gate");
  });

  it("is honest about what it declared false", async () => {
    const caps = lab.adapter.capabilities();
    expect(caps.threads.forkFromTurn).toBe(false);
    expect(caps.runtimeRequests.userInputQuestions).toBe(false);
    const { session } = await lab.open();
    await expect(session.forkThread({ afterTurnId: "any" })).rejects.toMatchObject({ code: "unsupported_capability" });
    const refused = await session
      .respondToRuntimeRequest("any", { kind: "user_input", answers: {} })
      .catch((error: unknown) => error);
    expect(hasErrorCode(refused, "unsupported_capability")).toBe(true);
  });
});

describe("Pi adapter: model switching and Pi's auto-retry", () => {
  let retryLab: PiLab;

  beforeAll(async () => {
    retryLab = await createPiLab({
      home: { autoRetry: true, settings: { retry: { enabled: true, maxRetries: 1, baseDelayMs: 50 } } },
    });
    await addSecondModel(retryLab.home);
  }, 60_000);
  afterAll(async () => {
    await retryLab?.dispose();
  }, 60_000);

  it("waits out Pi's auto-retry after a provider error and ends the turn once, failed", async () => {
    const { session, events } = await retryLab.open();
    const input = turnInput("flaky @@fail 500 overloaded-boom");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("failed");
    expect(terminal.error?.message).toContain("overloaded-boom");
    // Pi announced its retry, and the terminal came only after it.
    const mine = events.ofTurn(input.turnId);
    const retryWarning = mine.findIndex((e) => e.type === "warning" && e.message.startsWith("Pi retries"));
    expect(retryWarning).toBeGreaterThan(-1);
    expect(retryWarning).toBeLessThan(mine.findIndex((e) => e.type === "turn.terminal"));
    // Pi's retry re-sent the request (the provider SDK inside Pi may retry a 5xx on its own too).
    const calls = retryLab.server.requests.filter((r) => r.userText === "flaky @@fail 500 overloaded-boom");
    expect(calls.length).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mine.filter((e) => e.type === "turn.terminal")).toHaveLength(1);
  });

  it("switches the model between turns by restarting pi on the same session file", async () => {
    const { session, events } = await retryLab.open();
    const first = turnInput("first model @@reply one");
    await session.startTurn(first);
    await events.waitFor("turn.terminal", (e) => e.turnId === first.turnId, 30_000);
    const pid = session.processId;
    const second = turnInput("second model @@reply two", { model: "fake/fake-model-2" });
    await session.startTurn(second);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === second.turnId, 30_000)).status).toBe("completed");
    expect(session.processId).not.toBe(pid);
    const request = await retryLab.server.waitForRequest((r) => r.userText === "second model @@reply two");
    expect(request.model).toBe("fake-model-2");
    expect(JSON.stringify(request.body)).toContain("first model @@reply one");
  });
});

describe("Pi adapter: MCP injection through the Switchyard extension", () => {
  let mcpLab: PiLab;
  let mcp: TestMcpServer;
  const inherited = {
    SWITCHYARD_MCP_TOKEN: process.env["SWITCHYARD_MCP_TOKEN"],
    SWITCHYARD_PI_STATE_FILE: process.env["SWITCHYARD_PI_STATE_FILE"],
  };

  beforeAll(async () => {
    mcp = await startTestMcpServer();
    // Values a host (or the instance config) may carry must never reach Pi.
    process.env["SWITCHYARD_MCP_TOKEN"] = "inherited-from-the-host";
    process.env["SWITCHYARD_PI_STATE_FILE"] = "/tmp/not-this-one.json";
    mcpLab = await createPiLab({
      instanceEnvironment: {
        SWITCHYARD_MCP_URL: "http://127.0.0.1:9/wrong",
        SWITCHYARD_MCP_TOKEN: "from-the-instance-config",
      },
    });
  }, 60_000);
  afterAll(async () => {
    for (const [name, value] of Object.entries(inherited)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await mcpLab?.dispose();
    await mcp?.close();
  }, 60_000);

  it("registers the endpoint's tools as mcp__<server>__<tool> and calls them with the grant's token, passed in the environment only", async () => {
    const grant = grantFor(mcp.url, mcp.token);
    const { session, events } = await mcpLab.open({ mcp: grant, runtimeMode: "approval-required" });
    const input = turnInput(`go ${viaSearch("echo", '{"text":"via-bridge"}')}`, { runtimeMode: "approval-required" });
    await session.startTurn(input);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000)).status).toBe("completed");

    const started = callsTo(events.events, "tool_call.started", input.turnId, "mcp__switchyard__echo");
    expect(started).toEqual([
      expect.objectContaining({
        kind: "mcp",
        name: "mcp__switchyard__echo",
        server: "switchyard",
        title: "switchyard/echo",
        input: { text: "via-bridge" },
      }),
    ]);
    expect(callsTo(events.events, "tool_call.completed", input.turnId, "mcp__switchyard__echo")).toEqual([
      expect.objectContaining({ status: "completed", output: "echo: via-bridge" }),
    ]);
    // The Switchyard tools never wait for approval (the server checks the caller's modes).
    expect(events.events.some((e) => e.type === "runtime_request.opened")).toBe(false);
    expect(mcp.calls).toContainEqual({ tool: "echo", args: { text: "via-bridge" } });
    expect(mcp.rejectedRequests).toBe(0);
    const request = await mcpLab.server.waitForRequest((r) => r.userText === input.text && r.stepIndex === 0);
    // The host delivers the grant's instructions (folded into the first prompt); neither the
    // adapter nor the extension adds them, so the model sees them once.
    expect(JSON.stringify(request.body)).not.toContain("Use the switchyard tools.");

    const spawn = mcpLab.spawns.at(-1)!;
    expect(spawn.extendEnv).toBe(false);
    expect(spawn.args.join("\n")).not.toContain(mcp.token);
    expect(spawn.env["SWITCHYARD_MCP_TOKEN"]).toBe(mcp.token);
    expect(spawn.env["SWITCHYARD_MCP_URL"]).toBe(mcp.url);
    expect(spawn.env["SWITCHYARD_PI_STATE_FILE"]).not.toBe("/tmp/not-this-one.json");
    const extension = spawn.args[spawn.args.indexOf("--extension") + 1]!;
    expect(extension.startsWith(mcpLab.ctx.context.paths.cacheDir)).toBe(true);
    expect(readFileSync(extension, "utf8")).not.toContain(mcp.token);
    // Pi overwrites its argv with its process title; the environment is where the token is.
    expect(environmentVariablesOf(session.processId!)["SWITCHYARD_MCP_TOKEN"]).toBe(mcp.token);
  });

  it("takes a rotated grant live: the same Pi process calls with the token from its private state file", async () => {
    const { session, events } = await mcpLab.open({ mcp: grantFor(mcp.url, mcp.token) });
    const call = async (text: string) => {
      const input = turnInput(`go ${viaSearch("echo", `{"text":"${text}"}`)}`);
      await session.startTurn(input);
      await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
      return callsTo(events.events, "tool_call.completed", input.turnId, "mcp__switchyard__echo")[0];
    };
    expect((await call("before"))?.status).toBe("completed");
    const pid = session.processId;
    const rejected = mcp.rejectedRequests;
    // A token this endpoint does not know: the next call carries it, so it is refused.
    await session.updateMcpGrant(grantFor(mcp.url, "rotated-but-unknown"));
    expect((await call("refused"))?.status).toBe("failed");
    expect(mcp.rejectedRequests).toBeGreaterThan(rejected);
    // The endpoint's token again: calls go through, still without restarting Pi.
    await session.updateMcpGrant(grantFor(mcp.url, mcp.token));
    expect((await call("after"))?.status).toBe("completed");
    expect(mcp.calls).toContainEqual({ tool: "echo", args: { text: "after" } });
    expect(session.processId).toBe(pid);
    const stateFile = mcpLab.spawns.at(-1)!.env["SWITCHYARD_PI_STATE_FILE"]!;
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    expect(environmentVariablesOf(pid!)["SWITCHYARD_MCP_TOKEN"]).toBe(mcp.token);
  });

  it("a tool call Pi rejects (invalid arguments) is a failed tool call", async () => {
    const { session, events } = await mcpLab.open({ mcp: grantFor(mcp.url, mcp.token) });
    const input = turnInput(`go ${viaSearch("echo", "{}")}`);
    await session.startTurn(input);
    await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(callsTo(events.events, "tool_call.completed", input.turnId, "mcp__switchyard__echo")).toEqual([
      expect.objectContaining({ status: "failed" }),
    ]);
  });

  it("an endpoint that refuses the token: pi starts without the tools and the session says why", async () => {
    const { session, events } = await mcpLab.open({ mcp: grantFor(mcp.url, "not-the-token") });
    const warning = await events.waitFor(
      "warning",
      (e) => e.message.includes("Switchyard MCP tools are unavailable"),
      30_000,
    );
    expect(warning.message).toContain("HTTP 401");
    expect(warning.message).not.toContain("not-the-token");
    const input = turnInput('go @@tool echo {"text":"x"}');
    await session.startTurn(input);
    await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(events.textOf(input.turnId)).toContain("TOOL NOT OFFERED");
  });
});

describe("Pi adapter: effort as Pi's thinking level", () => {
  let thinkingLab: PiLab;

  beforeAll(async () => {
    thinkingLab = await createPiLab();
    // A reasoning model whose provider takes reasoning_effort, so the level reaches the request.
    const file = path.join(thinkingLab.home.home, "models.json");
    const models = JSON.parse(await readFile(file, "utf8")) as {
      providers: Record<string, { compat?: Record<string, unknown>; models: Record<string, unknown>[] }>;
    };
    for (const provider of Object.values(models.providers)) {
      provider.compat = { ...provider.compat, supportsReasoningEffort: true };
      for (const model of provider.models) model["reasoning"] = true;
    }
    await writeFile(file, JSON.stringify(models, null, 2));
  }, 60_000);
  afterAll(async () => {
    await thinkingLab?.dispose();
  }, 60_000);

  it("lists a reasoning model's thinking levels as its efforts and starts Pi with the turn's effort", async () => {
    const status = await thinkingLab.adapter.probe({ depth: "inspect" });
    expect(status.models.find((model) => model.id === thinkingLab.home.model)?.efforts).toEqual([
      "off",
      "minimal",
      "low",
      "medium",
      "high",
    ]);
    const { session, events } = await thinkingLab.open();
    const input = turnInput("think @@reply thought", { effort: "high" });
    await session.startTurn(input);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000)).status).toBe("completed");
    const request = await thinkingLab.server.waitForRequest((r) => r.userText === "think @@reply thought");
    expect((request.body as { reasoning_effort?: string }).reasoning_effort).toBe("high");
    expect(thinkingLab.spawns.at(-1)?.args.slice(-2)).toEqual(["--thinking", "high"]);
  });
});

describe("Pi: where each listed model comes from", () => {
  it("marks the models of a provider models.json defines as configured, and the built-in providers' as Pi's own catalog", async () => {
    // A key for a built-in provider makes `pi --list-models` list that provider's catalog too.
    const lab = await createPiLab({ instanceEnvironment: { ANTHROPIC_API_KEY: "sk-ant-not-a-real-key" } });
    try {
      const inspected = await lab.adapter.probe({ depth: "inspect" });
      expect(inspected.models.find((model) => model.id === lab.home.model)?.source).toBe("harness_config");
      const full = await lab.adapter.probe({ depth: "full" });
      expect(full.models.find((model) => model.id === lab.home.model)?.source).toBe("harness_config");
      const builtIn = full.models.filter((model) => model.id.startsWith("anthropic/"));
      expect(builtIn.length).toBeGreaterThan(0);
      expect(new Set(builtIn.map((model) => model.source))).toEqual(new Set(["harness_catalog"]));
    } finally {
      await lab.dispose();
    }
  });
});

describe("Pi 0.99+: tool exposure, acknowledgements, and the old package", () => {
  let mcp: TestMcpServer;
  let scratch: string;
  beforeAll(async () => {
    mcp = await startTestMcpServer();
    scratch = mkdtempSync(path.join(tmpdir(), "pi-exposure-"));
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("a server key Pi's MCP client would normalize (t3-code): public names stay, hidden mcp__t3_code__ aliases reserve the normalized ones", async () => {
    // A second extension that records, when a prompt starts, every tool Pi has and its exposure.
    const probe = path.join(scratch, "tools-probe.js");
    const out = path.join(scratch, "tools.json");
    writeFileSync(
      probe,
      'import { writeFileSync } from "node:fs";\nexport default function (pi) { pi.on("before_agent_start", () => { writeFileSync(process.env.TOOLS_PROBE_OUT, JSON.stringify(pi.getAllTools().map((t) => ({ name: t.name, exposure: t.exposure })))); }); }\n',
    );
    const probed = await createPiLab({
      driverOptions: { extraArgs: ["--extension", probe] },
      instanceEnvironment: { TOOLS_PROBE_OUT: out },
    });
    try {
      const { session, events } = await probed.open({
        mcp: { ...grantFor(mcp.url, mcp.token), serverName: "t3-code" },
      });
      const input = turnInput(`go ${viaSearch("mcp__t3-code__echo", '{"text":"hyphenated"}')}`);
      await session.startTurn(input);
      expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000)).status).toBe(
        "completed",
      );
      expect(callsTo(events.events, "tool_call.completed", input.turnId, "mcp__t3-code__echo")).toEqual([
        expect.objectContaining({ status: "completed", output: "echo: hyphenated" }),
      ]);
      const tools = JSON.parse(readFileSync(out, "utf8")) as { name: string; exposure: string }[];
      expect(tools).toContainEqual({ name: "mcp__t3-code__echo", exposure: "deferred" });
      expect(tools).toContainEqual({ name: "mcp__t3_code__echo", exposure: "hidden" });
      // Neither declared nor found by a search: the aliases only hold the names.
      const first = await probed.server.waitForRequest((r) => r.userText === input.text && r.stepIndex === 0);
      const second = await probed.server.waitForRequest((r) => r.userText === input.text && r.stepIndex === 1);
      expect(first.toolNames).toContain("tool_search");
      expect(first.toolNames).not.toContain("mcp__t3-code__echo");
      expect(second.toolNames).toContain("mcp__t3-code__echo");
      expect([...first.toolNames, ...second.toolNames].filter((name) => name.startsWith("mcp__t3_code__"))).toEqual([]);
    } finally {
      await probed.dispose();
    }
  });

  it("ends a turn whose prompt a Pi extension handled (disposition handled): no run starts, so no agent_end would ever come", async () => {
    const extension = path.join(scratch, "acknowledging.js");
    writeFileSync(extension, ACKNOWLEDGING_EXTENSION);
    const acking = await createPiLab({ driverOptions: { extraArgs: ["--extension", extension] } });
    try {
      const { session, events } = await acking.open();
      const input = turnInput("/switchyard-noop");
      await session.startTurn(input);
      expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000)).status).toBe(
        "completed",
      );
      expect(ofType(events.events, "warning", input.turnId).map((e) => e.message)).toContain(
        "A Pi extension handled this prompt itself (an extension command or input handler): no model run started.",
      );
      expect(acking.server.requests.filter((r) => r.userText?.includes("switchyard-noop"))).toEqual([]);

      // A steer an input handler swallows reaches no model, and the session says so.
      const held = turnInput("first @@hold ack-gate @@reply first answer");
      await session.startTurn(held);
      await acking.server.waitForHold("ack-gate", 30_000);
      expect(await session.steerTurn({ turnId: held.turnId, text: "swallowed steer" })).toEqual({
        disposition: "handled",
        detail: "a Pi extension's input handler",
      });
      acking.server.release("ack-gate");
      expect((await events.waitFor("turn.terminal", (e) => e.turnId === held.turnId, 30_000)).status).toBe("completed");
      expect(acking.server.requests.some((r) => JSON.stringify(r.body).includes("swallowed steer"))).toBe(false);
      expect(ofType(events.events, "warning", held.turnId).map((e) => e.message)).toContain(
        "A Pi extension's input handler consumed the steered message: it did not reach the model.",
      );
    } finally {
      await acking.dispose();
    }
  });

  it("drives the old package (@mariozechner/pi-coding-agent 0.73.1): every Switchyard tool direct, and the probe says it is outside the tested range", async () => {
    const legacy = resolveHarnessBinary("pi-legacy");
    expect(legacy.version).toBe("0.73.1");
    const old = await createPiLab({ driverOptions: { piPath: legacy.args[0]! } });
    try {
      const status = await old.adapter.probe({ depth: "inspect" });
      expect(status).toMatchObject({
        installed: true,
        executable: true,
        version: "0.73.1",
        harness: { inTestedRange: false, testedVersions: "^1.6.0" },
      });
      expect(status.warnings?.join(" ")).toContain(
        "install a tested version (npm i -g @earendil-works/pi-coding-agent, at a version in ^1.6.0)",
      );
      const { session, events } = await old.open({ mcp: grantFor(mcp.url, mcp.token) });
      const input = turnInput('go @@tool echo {"text":"old pi"}');
      await session.startTurn(input);
      expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000)).status).toBe(
        "completed",
      );
      expect(ofType(events.events, "tool_call.completed", input.turnId)).toEqual([
        expect.objectContaining({ status: "completed", output: "echo: old pi" }),
      ]);
      expect(events.textOf(input.turnId)).toContain("echo: old pi");
    } finally {
      await old.dispose();
    }
  });
});
