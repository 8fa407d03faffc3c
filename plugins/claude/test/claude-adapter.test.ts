/**
 * The Claude adapter against the real Agent SDK (0.3.337, its bundled `claude` 2.1.337) and the
 * scripted Anthropic Messages server: turns, usage, tool calls, steering in both of Claude's
 * ways, interrupts (and the prompt after one), resume in a new process, fork, snapshots, model
 * and mode switching, approvals, the root full-access fallback, MCP injection and the token's
 * secrecy, and capability honesty.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AdapterEvent } from "@switchyard/sdk";
import {
  descendantCommandLines,
  isRunning,
  startTestMcpServer,
  turnInput,
  type TestMcpServer,
} from "@switchyard/testkit";
import { ROOT_FULL_ACCESS_WARNING, claudeMcpOptions } from "../src/index.js";
import { FAKE_MODEL, createClaudeLab, grantFor, type ClaudeLab } from "./claude-lab.js";

const ofType = <T extends AdapterEvent["type"]>(events: readonly AdapterEvent[], type: T, turnId: string) =>
  events.filter(
    (event): event is Extract<AdapterEvent, { type: T }> =>
      event.type === type && "turnId" in event && event.turnId === turnId,
  );

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

let lab: ClaudeLab;

beforeAll(async () => {
  lab = await createClaudeLab();
}, 60_000);
afterEach(() => lab.server.reset());
afterAll(async () => {
  await lab?.dispose();
}, 60_000);

describe("Claude adapter over the Agent SDK", () => {
  it("runs a text turn: started, streamed deltas, one completed message, one completed terminal with usage and cost, a resume cursor", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("say it @@reply hello from claude");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    const mine = events.ofTurn(input.turnId).map((e) => e.type);
    expect(mine[0]).toBe("turn.started");
    expect(mine.at(-1)).toBe("turn.terminal");
    expect(mine.filter((type) => type === "turn.terminal")).toHaveLength(1);
    expect(events.textOf(input.turnId)).toBe("hello from claude");
    expect(ofType(events.events, "message.completed", input.turnId).map((e) => e.text)).toEqual(["hello from claude"]);
    // The deltas stream under the id the message completes with.
    const completedId = ofType(events.events, "message.completed", input.turnId)[0]!.itemId;
    expect(new Set(ofType(events.events, "message.delta", input.turnId).map((e) => e.itemId))).toEqual(
      new Set([completedId]),
    );
    // usage, total_cost_usd and modelUsage reach the terminal as per-turn figures.
    expect(terminal.usage?.inputTokens).toBeGreaterThan(0);
    expect(terminal.usage?.outputTokens).toBeGreaterThan(0);
    expect(terminal.usage?.costUsd).toBeGreaterThan(0);
    expect(Object.keys(terminal.usage?.byModel ?? {})).toEqual([FAKE_MODEL]);
    const cursor = await events.waitFor("session.resume_cursor");
    expect(cursor.cursor).toMatch(/^[0-9a-f-]{36}$/);
    expect(session.resumeCursor).toBe(cursor.cursor);

    // A second turn in the same process reports its own figures, not the running total.
    const second = turnInput("again @@reply second answer");
    await session.startTurn(second);
    const secondTerminal = await events.waitFor("turn.terminal", (e) => e.turnId === second.turnId, 60_000);
    expect(secondTerminal.usage!.costUsd!).toBeLessThan(terminal.usage!.costUsd! * 1.5);
    expect(secondTerminal.usage!.byModel![FAKE_MODEL]!.inputTokens).toBeLessThan(terminal.usage!.inputTokens! * 1.5);
  });

  it("surfaces Bash as a command tool call with its output", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("run it @@shell echo hi-from-bash @@then @@reply bash said {{output}}");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    const started = ofType(events.events, "tool_call.started", input.turnId);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({
      kind: "command",
      name: "Bash",
      title: "echo hi-from-bash",
      input: { command: "echo hi-from-bash" },
    });
    expect(ofType(events.events, "tool_call.completed", input.turnId)).toEqual([
      expect.objectContaining({ itemId: started[0]!.itemId, status: "completed", output: "hi-from-bash" }),
    ]);
    expect(events.textOf(input.turnId)).toBe("bash said hi-from-bash");
  });

  it("observes Claude's own sub-agent (the Agent tool, in the foreground): spawned with its task, its transcript, then completed with its report, model and usage; its messages stay out of the turn", async () => {
    const { session, events } = await lab.open();
    const spawn = {
      description: "count things",
      prompt: "sub task @@reply sub answer 7",
      subagent_type: "general-purpose",
    };
    const input = turnInput(`spawn @@tool Agent ${JSON.stringify(spawn)} @@then @@reply main is done`);
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    const observed = ofType(events.events, "subagent.observed", input.turnId);
    expect(observed.map((e) => e.status)).toEqual(["running", "completed"]);
    const [toolCall] = ofType(events.events, "tool_call.started", input.turnId);
    expect(toolCall).toMatchObject({ kind: "subagent", name: "Agent", title: "Agent count things" });
    // Spawned: tied to the Agent call, with its task and agent type.
    expect(observed[0]).toEqual({
      type: "subagent.observed",
      turnId: input.turnId,
      nativeId: toolCall!.itemId,
      parentItemId: toolCall!.itemId,
      status: "running",
      title: "count things",
      task: spawn.prompt,
      agentType: "general-purpose",
    });
    // Finished: its report alone (not the hand-back frame the model reads), the model it ran on,
    // and its own usage from the tool's structured result (Claude gives no cost per sub-agent).
    expect(observed[1]).toMatchObject({
      nativeId: toolCall!.itemId,
      parentItemId: toolCall!.itemId,
      title: "count things",
      task: spawn.prompt,
      agentType: "general-purpose",
      model: FAKE_MODEL,
      summary: "sub answer 7",
    });
    expect(observed[1]!.usage?.inputTokens).toBeGreaterThan(0);
    expect(observed[1]!.usage?.outputTokens).toBeGreaterThan(0);
    expect(observed[1]!.usage?.costUsd).toBeUndefined();
    // Its transcript as far as Claude Code streams it: the instructions it was given.
    const transcript = ofType(events.events, "subagent.message", input.turnId);
    expect(transcript.map(({ nativeId, role, text }) => ({ nativeId, role, text }))).toContainEqual({
      nativeId: toolCall!.itemId,
      role: "user",
      text: spawn.prompt,
    });
    // Between spawned and finished, in that order.
    const order = events.ofTurn(input.turnId).map((e) => e.type);
    expect(order.indexOf("subagent.message")).toBeGreaterThan(order.indexOf("subagent.observed"));
    expect(order.lastIndexOf("subagent.message")).toBeLessThan(order.lastIndexOf("subagent.observed"));
    // The sub-agent's own reply is not one of the turn's messages.
    expect(ofType(events.events, "message.completed", input.turnId).map((e) => e.text)).toEqual(["main is done"]);
  });

  it("steers during a tool call: Claude folds the message into its running turn, one result, one host turn", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("work @@shell sleep 2 @@then @@reply planned answer");
    await session.startTurn(input);
    await events.waitFor("tool_call.started", (e) => e.turnId === input.turnId, 60_000);
    await session.steerTurn({ turnId: input.turnId, text: "steer-during-tool @@reply steered answer" });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    // The next model request carried the tool result and the steer together.
    // (The scripted model reads the steer as the request, so it plays the steer's own script.)
    const folded = lab.server.requests.find(
      (r) => (r.userText ?? "").includes("steer-during-tool") && JSON.stringify(r.body).includes('"tool_result"'),
    );
    expect(folded, "no request carried the tool result with the steer").toBeDefined();
    expect(ofType(events.events, "message.completed", input.turnId).map((e) => e.text)).toEqual(["steered answer"]);
  });

  it("steers during a text-only reply: Claude answers it right after, and the host turn spans both answers", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("talk @@hold text-gate @@reply first answer");
    await session.startTurn(input);
    await lab.server.waitForHold("text-gate", 60_000);
    await session.steerTurn({ turnId: input.turnId, text: "steer-during-text @@reply second answer" });
    lab.server.release("text-gate");
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    expect(ofType(events.events, "message.completed", input.turnId).map((e) => e.text)).toEqual([
      "first answer",
      "second answer",
    ]);
    expect(ofType(events.events, "turn.terminal", input.turnId)).toHaveLength(1);
    // Both of Claude's results count: the usage adds up.
    expect(terminal.usage!.inputTokens!).toBeGreaterThan(0);
    await expect(session.steerTurn({ turnId: input.turnId, text: "late" })).rejects.toMatchObject({
      code: "turn_not_active",
    });
  });

  it("interrupts a held model call: one interrupted terminal, and the next turn acts on what the user sent next", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("wait @@hold never-released @@reply never");
    await session.startTurn(input);
    const held = await lab.server.waitForHold("never-released", 60_000);
    await session.interruptTurn({ turnId: input.turnId, reason: "test" });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("interrupted");
    expect(terminal.error).toBeUndefined();
    expect(terminal.usage).toBeDefined();
    expect(held.clientAborted).toBe(true);
    // Claude sends the old prompt, its interrupt marker and the new prompt as one user message;
    // the new prompt is what the turn answers, and the old gate does not hold it again.
    const next = turnInput("after the interrupt @@reply fresh answer");
    await session.startTurn(next);
    const done = await events.waitFor("turn.terminal", (e) => e.turnId === next.turnId, 60_000);
    expect(done.status).toBe("completed");
    expect(events.textOf(next.turnId)).toBe("fresh answer");
    const request = lab.server.requests.find((r) => r.userText === "after the interrupt @@reply fresh answer");
    expect(request, "the next request's user text was not what the user sent").toBeDefined();
    expect(JSON.stringify(request!.body)).toContain("[Request interrupted by user]");
  });

  it("interrupting a turn stops a steer Claude had queued behind its text reply too (Claude keeps it past interrupt())", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("talk @@hold queued-gate @@reply never");
    await session.startTurn(input);
    await lab.server.waitForHold("queued-gate", 60_000);
    await session.steerTurn({
      turnId: input.turnId,
      text: "queued steer @@hold leftover-gate @@reply leftover answer",
    });
    await session.interruptTurn({ turnId: input.turnId });
    // Claude runs the queued steer as a turn of its own; the adapter interrupts that one as well
    // (before or during its model call), so the turn ends by interrupt, not by the grace timer.
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("interrupted");
    expect(events.ofTurn(input.turnId).filter((e) => e.type === "warning")).toEqual([]);
    const leftovers = lab.server.requests.filter((r) => (r.userText ?? "").startsWith("queued steer"));
    expect(leftovers.every((r) => r.clientAborted)).toBe(true);
    expect(events.textOf(input.turnId)).not.toContain("leftover answer");
    lab.server.release("leftover-gate");
    lab.server.release("queued-gate");
    // The next turn is the user's own, answered on its own.
    const next = turnInput("next one @@reply clean answer");
    await session.startTurn(next);
    await events.waitFor("turn.terminal", (e) => e.turnId === next.turnId, 60_000);
    expect(events.textOf(next.turnId)).toBe("clean answer");
  });

  it("refuses to steer or interrupt a turn that is not running", async () => {
    const { session } = await lab.open();
    await expect(session.steerTurn({ turnId: "nope", text: "x" })).rejects.toMatchObject({ code: "turn_not_active" });
    await expect(session.interruptTurn({ turnId: "nope" })).rejects.toMatchObject({ code: "turn_not_active" });
  });

  it("closes, then resumes by session id in a new process with the conversation intact", async () => {
    const first = await lab.open();
    const input = turnInput("remember the word tangerine @@reply noted");
    await first.session.startTurn(input);
    await first.events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    const cursor = first.session.resumeCursor!;
    const oldPid = first.session.processId!;
    await first.session.close();
    expect(isRunning(oldPid)).toBe(false);

    const second = await lab.open({ resumeCursor: cursor });
    expect(second.session.processId).not.toBe(oldPid);
    const recall = turnInput("recall @@reply history: {{history}}");
    await second.session.startTurn(recall);
    const terminal = await second.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    expect(second.events.textOf(recall.turnId)).toContain("remember the word tangerine");
    expect(second.session.resumeCursor).toBe(cursor);
  });

  it("refuses a resume cursor whose session is gone, with not_found", async () => {
    await expect(lab.open({ resumeCursor: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("forks with forkSession (the SDK reads CLAUDE_CONFIG_DIR from its own process): the copy resumes with the history, the original goes on", async () => {
    const source = await lab.open();
    const input = turnInput("the secret is kumquat @@reply ok");
    await source.session.startTurn(input);
    await source.events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    await expect(source.session.forkThread({ afterTurnId: input.turnId })).rejects.toMatchObject({
      code: "unsupported_capability",
    });
    const { resumeCursor } = await source.session.forkThread({});
    expect(resumeCursor).not.toBe(source.session.resumeCursor);

    const copy = await lab.open({ resumeCursor });
    const recall = turnInput("recall @@reply fork history: {{history}}");
    await copy.session.startTurn(recall);
    await copy.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, 60_000);
    expect(copy.events.textOf(recall.turnId)).toContain("the secret is kumquat");

    const more = turnInput("only in the original @@reply yes");
    await source.session.startTurn(more);
    await source.events.waitFor("turn.terminal", (e) => e.turnId === more.turnId, 60_000);
    const snapshot = await copy.session.readSnapshot();
    expect(snapshot.turns.map((t) => t.userText)).toEqual([
      "the secret is kumquat @@reply ok",
      "recall @@reply fork history: {{history}}",
    ]);
    expect(snapshot.turns[0]!.assistantText).toBe("ok");
    expect((await source.session.readSnapshot()).turns.map((t) => t.userText).at(-1)).toBe(
      "only in the original @@reply yes",
    );
  });

  it("sends the turn's text as given and adds no instructions of its own (the host delivers them, once)", async () => {
    const mcp = await startTestMcpServer({ token: "instructions-token" });
    try {
      const { session, events } = await lab.open({ mcp: grantFor(mcp.url, mcp.token) });
      const input = turnInput(
        "<switchyard_instructions>\nYou are the reviewer.\n</switchyard_instructions>\n\ngo @@reply done",
      );
      await session.startTurn(input);
      await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
      const request = lab.server.requests.find((r) => r.userText === "go @@reply done")!;
      expect(JSON.stringify(request.body).split("You are the reviewer.").length - 1).toBe(1);
      expect(JSON.stringify(request.body)).not.toContain("Use the switchyard tools to delegate.");
    } finally {
      await mcp.close();
    }
  });

  it("switches model and runtime mode between turns in the same process", async () => {
    const { session, events } = await lab.open({ runtimeMode: "full-access" });
    const pid = session.processId;
    const first = turnInput("one @@reply a");
    await session.startTurn(first);
    await events.waitFor("turn.terminal", (e) => e.turnId === first.turnId, 60_000);
    const second = turnInput("two @@shell echo moded @@then @@reply b {{output}}", {
      model: "claude-fake-2",
      runtimeMode: "approval-required",
    });
    await session.startTurn(second);
    const request = await events.waitFor("runtime_request.opened", (e) => e.turnId === second.turnId, 60_000);
    await session.respondToRuntimeRequest(request.requestId, { kind: "approval", decision: "accept" });
    await events.waitFor("turn.terminal", (e) => e.turnId === second.turnId, 60_000);
    expect(lab.server.requests.find((r) => r.userText?.startsWith("two"))?.model).toBe("claude-fake-2");
    expect(session.processId).toBe(pid);
  });

  it("gives Claude the turn's effort for the session (applyFlagSettings), and the model request carries it", async () => {
    const status = await lab.adapter.probe();
    const opus = status.models.find((model) => model.id === "opus");
    expect(opus?.efforts?.length ?? 0).toBeGreaterThan(0);
    const { session, events } = await lab.open();
    const effort = opus!.efforts!.includes("high") ? "high" : opus!.efforts![0]!;
    const input = turnInput("effortful @@reply done", { model: "opus", effort });
    await session.startTurn(input);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000)).status).toBe("completed");
    const request = lab.server.requests.find((r) => r.userText === "effortful @@reply done")!;
    expect((request.body as { output_config?: { effort?: string } }).output_config?.effort).toBe(effort);
  });

  it("fails a turn with the model's error, exactly once", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("break @@fail 400 the scripted model refused");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("failed");
    expect(terminal.error?.message).toContain("the scripted model refused");
    expect(ofType(events.events, "turn.terminal", input.turnId)).toHaveLength(1);
  });

  it("reports a dead claude process: the turn fails with its reason, then session.exited", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("hold @@hold killed-gate @@reply never");
    await session.startTurn(input);
    await lab.server.waitForHold("killed-gate", 60_000);
    process.kill(session.processId!, "SIGKILL");
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 30_000);
    expect(terminal.status).toBe("failed");
    expect(terminal.error?.code).toBe("claude_exited");
    await events.waitFor("session.exited", undefined, 30_000);
    await expect(session.startTurn(turnInput("after"))).rejects.toMatchObject({ code: "session_closed" });
    lab.server.release("killed-gate");
  });
});

describe("Claude adapter: probe", () => {
  it("reads version, models and credentials from the initialize answer without a model turn, and adds the custom models", async () => {
    const probeLab = await createClaudeLab({ customModels: ["claude-local-1", "opus"] });
    try {
      // The claude the SDK bundles: 2.1.337 with SDK 0.3.337 (its package.json `claudeCodeVersion`).
      const status = await probeLab.adapter.probe();
      expect(status).toMatchObject({ installed: true, executable: true, authenticated: true, version: "2.1.337" });
      const ids = status.models.map((model) => model.id);
      // ANTHROPIC_MODEL (the lab's) is Claude Code's default: first, and the config's; then Claude's own catalog.
      expect(ids.slice(0, 3)).toEqual([FAKE_MODEL, "default", "opus"]);
      expect(status.models[0]).toEqual({ id: FAKE_MODEL, isDefault: true, source: "harness_config" });
      expect(status.models.filter((model) => model.isDefault).map((model) => model.id)).toEqual([FAKE_MODEL]);
      expect(status.models[1]).toMatchObject({ id: "default", source: "harness_catalog" });
      expect(ids.filter((id) => id === "opus")).toHaveLength(1);
      expect(ids.at(-1)).toBe("claude-local-1");
      expect(probeLab.server.requests.filter((r) => r.api === "anthropic-messages")).toEqual([]);
      // The probe's claude process is gone.
      expect(probeLab.ctx.processes.spawned.every((child) => !isRunning(child.pid))).toBe(true);
    } finally {
      await probeLab.dispose();
    }
  });

  it("inspects without starting claude or writing into its home: version, credentials, custom models only", async () => {
    const inspectLab = await createClaudeLab({ customModels: ["claude-local-1"] });
    try {
      const before = filesUnder(inspectLab.home.home);
      const status = await inspectLab.adapter.probe({ depth: "inspect" });
      expect(status).toMatchObject({ installed: true, executable: true, authenticated: true, version: "2.1.337" });
      expect(status.models).toEqual([
        { id: FAKE_MODEL, isDefault: true, source: "harness_config" },
        { id: "claude-local-1" },
      ]);
      expect(filesUnder(inspectLab.home.home)).toEqual(before);
      // Only `claude --version` ran (a run, not a spawn).
      expect(inspectLab.ctx.processes.spawned).toEqual([]);
    } finally {
      await inspectLab.dispose();
    }
  });

  it("reports no credentials when claude has no key, and a harness that cannot start", async () => {
    const keyless = await createClaudeLab({ withoutEnv: ["ANTHROPIC_API_KEY"] });
    try {
      for (const depth of ["full", "inspect"] as const) {
        const status = await keyless.adapter.probe({ depth });
        expect(status.authenticated, depth).toBe(false);
        expect(status.message, depth).toContain("ANTHROPIC_API_KEY");
      }
    } finally {
      await keyless.dispose();
    }
    const missing = await createClaudeLab({ driverOptions: { claudePath: "/nonexistent/claude" } });
    try {
      for (const depth of ["full", "inspect"] as const) {
        const status = await missing.adapter.probe({ depth });
        expect(status, depth).toMatchObject({ installed: false, executable: false, authenticated: false });
        expect(status.message, depth).toContain(
          "Claude Code was not found at /nonexistent/claude (the claudePath option)",
        );
      }
      await expect(missing.open()).rejects.toMatchObject({ code: "provider_unavailable" });
    } finally {
      await missing.dispose();
    }
  });
});

describe("Claude adapter: approvals", () => {
  it("approval-required asks before every shell command (echo too), and runs it once accepted", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const input = turnInput("approve @@shell echo approved-run @@then @@reply ran {{output}}", {
      runtimeMode: "approval-required",
    });
    await session.startTurn(input);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === input.turnId, 60_000);
    expect(opened.request).toMatchObject({
      kind: "approval",
      approvalKind: "command",
      title: "Bash: echo approved-run",
    });
    // The session's own request, not a sub-agent's.
    expect(opened.subagentNativeId).toBeUndefined();
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    expect(events.textOf(input.turnId)).toBe("ran approved-run");
    expect(ofType(events.events, "runtime_request.resolved", input.turnId)).toEqual([
      expect.objectContaining({ requestId: opened.requestId, resolution: "answered" }),
    ]);
  });

  it("a profile's ask rule asks even in full access, and a declined call never runs", async () => {
    const rules = { allow: [], deny: [], ask: ["Write"], allowOnly: false };
    const { session, events } = await lab.open({ runtimeMode: "full-access", toolRules: rules });
    const marker = path.join(lab.home.cwd, "asked-first.txt");
    const input = turnInput(
      `write @@tool Write ${JSON.stringify({ file_path: marker, content: "x" })} @@then @@reply wrote {{output}}`,
      { runtimeMode: "full-access" },
    );
    await session.startTurn(input);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === input.turnId, 60_000);
    expect(opened.request).toMatchObject({ kind: "approval" });
    expect(JSON.stringify(opened.request)).toContain("Write");
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "decline" });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    expect(existsSync(marker)).toBe(false);
    // Without the rule, full access writes unasked.
    const free = await lab.open({ runtimeMode: "full-access" });
    const unasked = turnInput(
      `write @@tool Write ${JSON.stringify({ file_path: marker, content: "x" })} @@then @@reply wrote`,
      { runtimeMode: "full-access" },
    );
    await free.session.startTurn(unasked);
    expect((await free.events.waitFor("turn.terminal", (e) => e.turnId === unasked.turnId, 60_000)).status).toBe(
      "completed",
    );
    expect(free.events.events.filter((e) => e.type === "runtime_request.opened")).toEqual([]);
    expect(existsSync(marker)).toBe(true);
  });

  it("a sub-agent's approval reaches the root's turn naming the sub-agent that asks", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const spawn = {
      description: "child shell",
      prompt: "sub task @@shell echo from-the-sub-agent @@then @@reply sub saw {{output}}",
      subagent_type: "general-purpose",
    };
    const input = turnInput(`spawn @@tool Agent ${JSON.stringify(spawn)} @@then @@reply main is done`, {
      runtimeMode: "approval-required",
    });
    await session.startTurn(input);
    // Accept whatever is asked (the Agent call itself may ask first) until the sub-agent's shell.
    let shell: Extract<AdapterEvent, { type: "runtime_request.opened" }> | null = null;
    for (let asked = 0; shell === null && asked < 3; asked++) {
      const opened = await events.waitFor(
        "runtime_request.opened",
        (e) =>
          e.turnId === input.turnId &&
          ofType(events.events, "runtime_request.opened", input.turnId).indexOf(e) === asked,
        60_000,
      );
      if (opened.request.kind === "approval" && opened.request.title === "Bash: echo from-the-sub-agent")
        shell = opened;
      else expect(opened.subagentNativeId).toBeUndefined();
      await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    }
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    const [agentCall] = ofType(events.events, "tool_call.started", input.turnId);
    expect(agentCall).toMatchObject({ name: "Agent" });
    expect(shell?.subagentNativeId).toBe(agentCall!.itemId);
    expect(ofType(events.events, "subagent.observed", input.turnId).at(-1)).toMatchObject({
      nativeId: agentCall!.itemId,
      status: "completed",
      summary: expect.stringContaining("sub saw"),
    });
  });

  it("a declined command is reported declined and never runs; a dismissed one is cancelled and never runs", async () => {
    const marker = path.join(lab.home.cwd, "must-not-exist");
    for (const response of [{ kind: "approval", decision: "decline" }, { kind: "dismiss" }] as const) {
      const { session, events } = await lab.open({ runtimeMode: "approval-required" });
      const input = turnInput(`deny @@shell touch ${marker} @@then @@reply told {{output}}`, {
        runtimeMode: "approval-required",
      });
      await session.startTurn(input);
      const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === input.turnId, 60_000);
      await session.respondToRuntimeRequest(opened.requestId, response);
      const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
      expect(terminal.status).toBe("completed");
      const tool = ofType(events.events, "tool_call.completed", input.turnId)[0];
      expect(tool?.status).toBe(response.kind === "dismiss" ? "failed" : "declined");
      expect(ofType(events.events, "runtime_request.resolved", input.turnId)[0]?.resolution).toBe(
        response.kind === "dismiss" ? "cancelled" : "answered",
      );
      expect(() => statSync(marker)).toThrow();
      await expect(
        session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" }),
      ).rejects.toMatchObject({ code: "not_found" });
    }
  });

  it("interrupting a turn that waits for approval cancels the request and ends the turn interrupted", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const input = turnInput("pending @@shell echo pending-approval @@then @@reply never", {
      runtimeMode: "approval-required",
    });
    await session.startTurn(input);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === input.turnId, 60_000);
    await session.interruptTurn({ turnId: input.turnId });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("interrupted");
    expect(ofType(events.events, "runtime_request.resolved", input.turnId)).toEqual([
      expect.objectContaining({ requestId: opened.requestId, resolution: "cancelled" }),
    ]);
  });

  it("is honest: questions are not offered, and answers to them are refused", async () => {
    const { session } = await lab.open();
    await expect(session.respondToRuntimeRequest("x", { kind: "user_input", answers: {} })).rejects.toMatchObject({
      code: "unsupported_capability",
    });
    expect(lab.adapter.capabilities().runtimeRequests.userInputQuestions).toBe(false);
  });
});

describe.runIf(isRoot)("Claude adapter as root without IS_SANDBOX", () => {
  let rootLab: ClaudeLab;
  beforeAll(async () => {
    // Explicitly not a sandbox, whatever the machine's own environment says.
    rootLab = await createClaudeLab({ withoutEnv: ["IS_SANDBOX"], environment: { IS_SANDBOX: "0" } });
  }, 60_000);
  afterAll(async () => {
    await rootLab?.dispose();
  }, 60_000);

  it("never sets IS_SANDBOX itself: full access runs in default mode with every prompt allowed by the adapter, and says so", async () => {
    const { session, events } = await rootLab.open({ runtimeMode: "full-access" });
    const warning = await events.waitFor("warning");
    expect(warning.message).toBe(ROOT_FULL_ACCESS_WARNING);
    const marker = path.join(rootLab.home.cwd, "made-as-root");
    const input = turnInput(`write @@shell touch ${marker} @@then @@reply made`);
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    expect(statSync(marker).isFile()).toBe(true);
    expect(events.events.filter((e) => e.type === "runtime_request.opened")).toEqual([]);
    const env = readFileSync(`/proc/${session.processId}/environ`, "utf8").split("\0");
    expect(env.filter((entry) => entry.startsWith("IS_SANDBOX="))).toEqual(["IS_SANDBOX=0"]);
  });
});

describe("Claude adapter: MCP injection", () => {
  let mcp: TestMcpServer;
  beforeAll(async () => {
    mcp = await startTestMcpServer({ token: `sy_claude-secret-${process.pid}` });
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("builds the seed's entry: an HTTP server with the bearer header, mcp__<key>__* allowed, delivered over initialize, always loaded", () => {
    const options = claudeMcpOptions(grantFor(mcp.url, mcp.token))!;
    expect(options).toEqual({
      mcpServers: {
        switchyard: {
          type: "http",
          url: mcp.url,
          headers: { Authorization: `Bearer ${mcp.token}` },
          alwaysLoad: true,
          timeout: 90_000,
        },
      },
      allowedTools: ["mcp__switchyard__*"],
      mcpServersDelivery: "initialize",
    });
    expect(claudeMcpOptions(null)).toBeNull();
    expect(() => claudeMcpOptions(grantFor(mcp.url, mcp.token, "bad key"))).toThrow(
      expect.objectContaining({ code: "invalid_input" }),
    );
  });

  it("calls the endpoint's tool with the session's token, and the token is in no process's argv, no environment, no log and no file", async () => {
    const { session, events } = await lab.open({ mcp: grantFor(mcp.url, mcp.token) });
    const input = turnInput('call @@tool echo {"text":"hi-mcp"} @@then @@hold mcp-gate @@reply got {{output}}');
    await session.startTurn(input);
    await lab.server.waitForHold("mcp-gate", 60_000);
    // While claude runs, with its MCP client connected: no command line on the machine holds the token.
    const leaks = descendantCommandLines().filter((line) => line.includes(mcp.token));
    expect(leaks).toEqual([]);
    expect(readFileSync(`/proc/${session.processId}/environ`, "utf8")).not.toContain(mcp.token);
    lab.server.release("mcp-gate");
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    expect(events.textOf(input.turnId)).toBe("got echo: hi-mcp");
    expect(mcp.calls).toContainEqual({ tool: "echo", args: { text: "hi-mcp" } });
    expect(mcp.rejectedRequests).toBe(0);
    const tool = ofType(events.events, "tool_call.started", input.turnId)[0]!;
    expect(tool).toMatchObject({
      kind: "mcp",
      name: "mcp__switchyard__echo",
      server: "switchyard",
      title: "switchyard/echo",
    });
    // The adapter logged that MCP is configured, never the header.
    const logs = JSON.stringify(lab.ctx.logs);
    expect(logs).not.toContain(mcp.token);
    expect(lab.ctx.logs.some((line) => line.message === "claude started" && line.fields?.["mcp"] === true)).toBe(true);
    // Claude Code wrote nothing holding the token under its config dir or the workspace.
    for (const root of [lab.home.home, lab.home.cwd]) {
      for (const file of filesUnder(root)) expect(readFileSync(file, "utf8").includes(mcp.token), file).toBe(false);
    }
  });
});

function filesUnder(root: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(full));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}
