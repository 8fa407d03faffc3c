import { describe, expect, it } from "vitest";
import { RuntimeRequestBook, type AdapterEvent } from "@switchyard/sdk";
import {
  codexEventsOf,
  codexTerminalOf,
  type CodexEvent,
  type CodexEventContext,
} from "../src/app-server/codex-events.js";
import { CodexSubagents } from "../src/app-server/codex-subagents.js";
import { CodexTurn } from "../src/app-server/codex-turn.js";
import type { ServerNotification, v2 } from "../src/codex-wire.js";
import { grantFor } from "./codex-lab.js";

// The pure mapping of `codex app-server` notifications (shaped as Codex 0.171 writes them, see
// reference/codex-app-server.md) to what they mean for a session, and a Codex turn on the kit's
// ledger turning those into adapter events. No harness runs here.

const THREAD = "01a22986-thread";
const TURN = "01a22986-turn";
const context: CodexEventContext = { threadId: THREAD, grant: grantFor("http://127.0.0.1:1/mcp", "tok") };

function note(method: string, params: Record<string, unknown>): ServerNotification {
  return { method, params } as unknown as ServerNotification;
}

function item(value: Record<string, unknown>): v2.ThreadItem {
  return value as unknown as v2.ThreadItem;
}

const started = (value: Record<string, unknown>) =>
  note("item/started", { item: item(value), threadId: THREAD, turnId: TURN, startedAtMs: 1 });
const completed = (value: Record<string, unknown>) =>
  note("item/completed", { item: item(value), threadId: THREAD, turnId: TURN, completedAtMs: 2 });

function turnRecord(status: string, error: v2.TurnError | null = null): v2.Turn {
  return {
    id: TURN,
    rootTurnId: TURN,
    items: [],
    itemsView: "summary",
    status,
    error,
    startedAt: 1,
    completedAt: 2,
    durationMs: 1,
  } as v2.Turn;
}

function changes(events: CodexEvent[]) {
  return events.map((event) => (event.kind === "turn" ? event.change : event));
}

const command = {
  type: "commandExecution",
  id: "call_8w4",
  command: "/bin/bash -lc 'touch a1.txt'",
  cwd: "/ws",
  processId: "19873",
  source: "agent",
  commandActions: [],
  aggregatedOutput: null,
  exitCode: null,
  durationMs: null,
  pluginId: null,
  scriptPath: null,
};

describe("codexEventsOf", () => {
  it("maps a text turn: announced, streamed, completed message, usage, completion", () => {
    const sequence = [
      note("turn/started", { threadId: THREAD, turn: turnRecord("inProgress") }),
      started({
        type: "userMessage",
        id: "u1",
        clientId: "host-turn",
        content: [{ type: "text", text: "hello", text_elements: [] }],
      }),
      completed({
        type: "userMessage",
        id: "u1",
        clientId: "host-turn",
        content: [{ type: "text", text: "hello", text_elements: [] }],
      }),
      started({ type: "agentMessage", id: "msg_1", text: "", phase: null }),
      note("item/agentMessage/delta", { threadId: THREAD, turnId: TURN, itemId: "msg_1", delta: "PONG-" }),
      note("item/agentMessage/delta", { threadId: THREAD, turnId: TURN, itemId: "msg_1", delta: "codex" }),
      completed({ type: "agentMessage", id: "msg_1", text: "PONG-codex", phase: null }),
      note("thread/tokenUsage/updated", {
        threadId: THREAD,
        turnId: TURN,
        tokenUsage: {
          total: { inputTokens: 30, outputTokens: 9 },
          last: { inputTokens: 10, outputTokens: 5 },
          modelContextWindow: 258400,
        },
      }),
      note("account/rateLimits/updated", { rateLimits: { limitId: "codex" } }),
      note("turn/completed", { threadId: THREAD, turn: turnRecord("completed") }),
    ];
    const events = sequence.flatMap((n) => codexEventsOf(n, context));
    expect(events).toEqual([
      { kind: "turn_started", codexTurnId: TURN },
      { kind: "turn", codexTurnId: TURN, change: { type: "message_delta", itemId: "msg_1", text: "PONG-" } },
      { kind: "turn", codexTurnId: TURN, change: { type: "message_delta", itemId: "msg_1", text: "codex" } },
      { kind: "turn", codexTurnId: TURN, change: { type: "message_completed", itemId: "msg_1", text: "PONG-codex" } },
      {
        kind: "turn",
        codexTurnId: TURN,
        change: { type: "request_usage", usage: { inputTokens: 10, outputTokens: 5 }, runningTotalTokens: null },
      },
      { kind: "turn", codexTurnId: TURN, change: { type: "completed", turn: turnRecord("completed") } },
    ]);
  });

  it("maps reasoning deltas of both kinds and the summary of a completed reasoning item", () => {
    const events = [
      note("item/reasoning/summaryTextDelta", {
        threadId: THREAD,
        turnId: TURN,
        itemId: "rs_1",
        delta: "Think",
        summaryIndex: 0,
      }),
      note("item/reasoning/textDelta", {
        threadId: THREAD,
        turnId: TURN,
        itemId: "rs_1",
        delta: "ing",
        contentIndex: 0,
      }),
      completed({ type: "reasoning", id: "rs_1", summary: ["First.", "Second."], content: ["raw"] }),
      completed({ type: "reasoning", id: "rs_2", summary: [], content: ["only raw"] }),
    ].flatMap((n) => changes(codexEventsOf(n, context)));
    expect(events).toEqual([
      { type: "reasoning_delta", itemId: "rs_1", text: "Think" },
      { type: "reasoning_delta", itemId: "rs_1", text: "ing" },
      { type: "reasoning_completed", itemId: "rs_1", text: "First.\n\nSecond." },
      { type: "reasoning_completed", itemId: "rs_2", text: "only raw" },
    ]);
  });

  it("maps a shell command without Codex's shell wrapper, and its output when it completes", () => {
    expect(changes(codexEventsOf(started({ ...command, status: "inProgress" }), context))).toEqual([
      {
        type: "tool_started",
        start: {
          itemId: "call_8w4",
          kind: "command",
          name: "exec_command",
          title: "touch a1.txt",
          input: { command: command.command, cwd: "/ws" },
        },
      },
    ]);
    const done = changes(
      codexEventsOf(completed({ ...command, status: "completed", aggregatedOutput: "made\n", exitCode: 0 }), context),
    );
    // The start is repeated (the ledger keeps the first): a quick tool may only ever complete.
    expect(done.map((change) => ("type" in change ? change.type : change.kind))).toEqual([
      "tool_started",
      "tool_completed",
    ]);
    expect(done[1]).toEqual({ type: "tool_completed", itemId: "call_8w4", status: "completed", output: "made\n" });
    expect(changes(codexEventsOf(completed({ ...command, status: "declined" }), context))[1]).toEqual({
      type: "tool_completed",
      itemId: "call_8w4",
      status: "declined",
    });
  });

  it("names calls of the direct-tools entry after the Switchyard server", () => {
    const call = {
      type: "mcpToolCall",
      id: "call_m",
      server: "switchyard-direct",
      tool: "t3_thread_wait",
      arguments: { threadId: "t" },
      environmentId: null,
      appContext: null,
      mcpAppUi: null,
      pluginId: null,
      readOnlyHint: null,
      durationMs: 3,
    };
    const done = changes(
      codexEventsOf(
        completed({
          ...call,
          status: "completed",
          result: { content: [{ type: "text", text: "waited" }], structuredContent: null, _meta: null },
          error: null,
        }),
        context,
      ),
    );
    expect(done).toEqual([
      {
        type: "tool_started",
        start: {
          itemId: "call_m",
          kind: "mcp",
          name: "mcp__switchyard__t3_thread_wait",
          title: "switchyard/t3_thread_wait",
          server: "switchyard",
          input: { threadId: "t" },
        },
      },
      { type: "tool_completed", itemId: "call_m", status: "completed", output: "waited" },
    ]);
    const failed = changes(
      codexEventsOf(
        completed({
          ...call,
          server: "other",
          status: "failed",
          result: null,
          error: { message: "MCP tool call requires approval" },
        }),
        context,
      ),
    );
    expect(failed[1]).toEqual({
      type: "tool_completed",
      itemId: "call_m",
      status: "failed",
      output: "MCP tool call requires approval",
    });
  });

  it("remembers a file change for its approval and reports it as a tool call", () => {
    const change = {
      type: "fileChange",
      id: "call_f",
      changes: [{ path: "a.txt", kind: { type: "add" }, diff: "+hi" }],
      status: "inProgress",
    };
    expect(changes(codexEventsOf(started(change), context))).toEqual([
      { type: "file_change", item: change },
      {
        type: "tool_started",
        start: {
          itemId: "call_f",
          kind: "file_change",
          name: "apply_patch",
          title: "a.txt",
          input: { changes: [{ path: "a.txt", kind: "add" }] },
        },
      },
    ]);
  });

  it("reports spawned sub-agents after their spawn_agent call, and Codex's sub-agent activity", () => {
    const spawn = {
      type: "collabAgentToolCall",
      id: "call_s",
      tool: "spawnAgent",
      status: "completed",
      senderThreadId: THREAD,
      receiverThreadIds: ["child-1"],
      prompt: "child task",
      model: null,
      reasoningEffort: null,
      agentsStates: {},
    };
    expect(changes(codexEventsOf(completed(spawn), context))).toEqual([
      {
        type: "tool_started",
        start: {
          itemId: "call_s",
          kind: "subagent",
          name: "spawn_agent",
          title: "child task",
          input: { receiverThreadIds: ["child-1"] },
        },
      },
      { type: "tool_completed", itemId: "call_s", status: "completed", output: "child-1" },
      { type: "subagents_spawned", threadIds: ["child-1"], title: "child task", itemId: "call_s", model: null },
    ]);
    const activity = {
      type: "subAgentActivity",
      id: "a1",
      kind: "interrupted",
      agentThreadId: "child-1",
      agentPath: "/root/child",
      model: null,
      reasoningEffort: null,
    };
    expect(changes(codexEventsOf(completed(activity), context))).toEqual([
      { type: "subagent_activity", nativeId: "child-1", title: "/root/child", status: "failed" },
    ]);
  });

  it("routes notifications of other threads to the sub-agents, never to the session's turn", () => {
    const child = "child-1";
    const events = [
      note("item/agentMessage/delta", { threadId: child, turnId: "ct", itemId: "m", delta: "ignored" }),
      note("item/completed", {
        threadId: child,
        turnId: "ct",
        item: item({ type: "agentMessage", id: "m", text: "child says hi", phase: null }),
        completedAtMs: 1,
      }),
      note("turn/completed", {
        threadId: child,
        turn: {
          ...turnRecord("failed", {
            message: "child broke",
            codexErrorInfo: null,
            additionalDetails: null,
            misalignment: null,
          }),
          id: "ct",
        },
      }),
      note("thread/closed", { threadId: "fork-1" }),
    ].flatMap((n) => codexEventsOf(n, context));
    expect(events).toEqual([
      { kind: "child_message", threadId: child, text: "child says hi" },
      { kind: "child_turn_completed", threadId: child, status: "failed", error: "child broke" },
      { kind: "thread_closed", threadId: "fork-1" },
    ]);
  });

  it("maps errors, withdrawn requests and warnings", () => {
    const error = (willRetry: boolean) =>
      note("error", {
        threadId: THREAD,
        turnId: TURN,
        willRetry,
        error: {
          message: "stream dropped",
          codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 502 } },
          additionalDetails: null,
        },
      });
    expect(codexEventsOf(error(true), context)).toEqual([
      { kind: "retrying", codexTurnId: TURN, message: "Codex retries after an error: stream dropped" },
    ]);
    expect(changes(codexEventsOf(error(false), context))).toEqual([
      { type: "error", error: { code: "responseStreamDisconnected", message: "stream dropped" } },
    ]);
    expect(codexEventsOf(note("serverRequest/resolved", { threadId: THREAD, requestId: 0 }), context)).toEqual([
      { kind: "request_resolved", rpcId: 0 },
    ]);
    expect(codexEventsOf(note("warning", { threadId: THREAD, message: "Model metadata not found" }), context)).toEqual([
      { kind: "notice", message: "Model metadata not found" },
    ]);
    expect(codexEventsOf(note("configWarning", { summary: "no bubblewrap", details: null }), context)).toEqual([
      { kind: "notice", message: "no bubblewrap" },
    ]);
    const startup = (status: string) =>
      note("mcpServer/startupStatus/updated", {
        threadId: THREAD,
        name: "other",
        status,
        error: status === "failed" ? "NOT_SET_VAR is not set" : null,
      });
    expect(codexEventsOf(startup("ready"), context)).toEqual([]);
    expect(codexEventsOf(startup("failed"), context)).toEqual([
      { kind: "notice", message: 'MCP server "other" failed to start: NOT_SET_VAR is not set.' },
    ]);
    expect(
      codexEventsOf(note("thread/status/changed", { threadId: THREAD, status: { type: "idle" } }), context),
    ).toEqual([]);
  });
});

describe("codexTerminalOf", () => {
  const quiet = { interruptRequested: false, lastError: null };
  it("reads interrupted as cancelled unless the host interrupted, and a failure's own error first", () => {
    expect(codexTerminalOf(turnRecord("completed"), quiet)).toEqual({ status: "completed" });
    expect(codexTerminalOf(turnRecord("interrupted"), quiet)).toEqual({ status: "cancelled" });
    expect(codexTerminalOf(turnRecord("interrupted"), { ...quiet, interruptRequested: true })).toEqual({
      status: "interrupted",
    });
    const own = {
      message: "usage limit",
      codexErrorInfo: "usageLimitExceeded",
      additionalDetails: null,
      misalignment: null,
    } satisfies v2.TurnError;
    expect(codexTerminalOf(turnRecord("failed", own), { ...quiet, lastError: { message: "older" } })).toEqual({
      status: "failed",
      error: { code: "usageLimitExceeded", message: "usage limit" },
    });
    expect(
      codexTerminalOf(turnRecord("failed"), { ...quiet, lastError: { code: "x", message: "sent earlier" } }),
    ).toEqual({ status: "failed", error: { code: "x", message: "sent earlier" } });
    expect(codexTerminalOf(turnRecord("failed"), quiet).error?.message).toBe(
      "Codex reported the turn as failed without an error.",
    );
    expect(codexTerminalOf(turnRecord("paused"), quiet)).toMatchObject({
      status: "failed",
      warning: 'Codex ended a turn with status "paused"; treated as failed.',
    });
  });
});

describe("CodexTurn (on the kit's turn ledger)", () => {
  function setup() {
    const events: AdapterEvent[] = [];
    const emit = (event: AdapterEvent) => events.push(event);
    const requests = new RuntimeRequestBook<string | number>(emit, "codex-request");
    const subagents = new CodexSubagents(emit);
    const turn = new CodexTurn("host-turn", "approval-required", { emit, requests, subagents });
    const apply = (notification: ServerNotification) => {
      for (const event of codexEventsOf(notification, context)) if (event.kind === "turn") turn.apply(event.change);
    };
    return { events, requests, subagents, turn, apply };
  }

  it("reports the host's turn id, and settles an interrupted turn: tools end failed, requests cancelled, cut-off text left to the host, one terminal", async () => {
    const { events, requests, turn, apply } = setup();
    turn.bind(TURN);
    turn.bind(TURN);
    turn.interruptRequested = true;
    apply(started({ ...command, status: "inProgress" }));
    const { outcome } = requests.open(
      "host-turn",
      { kind: "approval", approvalKind: "command", title: "touch a1.txt" },
      0,
    );
    apply(note("item/agentMessage/delta", { threadId: THREAD, turnId: TURN, itemId: "msg_1", delta: "cut " }));
    apply(note("turn/completed", { threadId: THREAD, turn: turnRecord("interrupted") }));
    apply(note("item/agentMessage/delta", { threadId: THREAD, turnId: TURN, itemId: "msg_1", delta: "late" }));
    expect(turn.terminated).toBe(true);
    await expect(outcome).resolves.toMatchObject({ kind: "cancelled", resolution: "cancelled" });
    await turn.ended;
    expect(events.map((event) => event.type)).toEqual([
      "turn.started",
      "tool_call.started",
      "runtime_request.opened",
      "message.delta",
      "tool_call.completed",
      "runtime_request.resolved",
      "turn.terminal",
    ]);
    expect(events.every((event) => !("turnId" in event) || event.turnId === "host-turn")).toBe(true);
    expect(events[0]).toMatchObject({ providerTurnId: TURN });
    expect(events.find((event) => event.type === "tool_call.completed")).toMatchObject({
      itemId: "call_8w4",
      status: "failed",
    });
    expect(events.at(-1)).toMatchObject({ type: "turn.terminal", status: "interrupted" });
  });

  it("adds up the usage of every model request of a turn once each, cached input out of input, reasoning kept in output", async () => {
    const { events, turn, apply } = setup();
    turn.bind(TURN);
    const usage = (total: number, last: Partial<v2.TokenUsageBreakdown>) =>
      note("thread/tokenUsage/updated", {
        threadId: THREAD,
        turnId: TURN,
        tokenUsage: {
          total: {
            totalTokens: total,
            inputTokens: 0,
            cachedInputTokens: 0,
            cacheWriteInputTokens: 0,
            outputTokens: 0,
            reasoningOutputTokens: 0,
          },
          last,
          modelContextWindow: 258400,
        },
      });
    // Two model requests (a tool call between them); Codex repeats the second report on a rate-limit update.
    apply(
      usage(1_150, {
        totalTokens: 1_150,
        inputTokens: 1_000,
        cachedInputTokens: 400,
        cacheWriteInputTokens: 0,
        outputTokens: 150,
        reasoningOutputTokens: 60,
      }),
    );
    apply(
      usage(2_480, {
        totalTokens: 1_330,
        inputTokens: 1_300,
        cachedInputTokens: 1_000,
        cacheWriteInputTokens: 0,
        outputTokens: 30,
        reasoningOutputTokens: 0,
      }),
    );
    apply(
      usage(2_480, {
        totalTokens: 1_330,
        inputTokens: 1_300,
        cachedInputTokens: 1_000,
        cacheWriteInputTokens: 0,
        outputTokens: 30,
        reasoningOutputTokens: 0,
      }),
    );
    apply(note("turn/completed", { threadId: THREAD, turn: turnRecord("completed") }));
    await turn.ended;
    expect(events.at(-1)).toEqual({
      type: "turn.terminal",
      turnId: "host-turn",
      status: "completed",
      usage: {
        inputTokens: 900,
        cacheReadInputTokens: 1_400,
        cacheCreationInputTokens: 0,
        outputTokens: 180,
        reasoningOutputTokens: 60,
      },
    });
  });

  it("reports a declined command as declined, a failure with the last error Codex sent, and sub-agents on the spawning turn", () => {
    const { events, subagents, turn, apply } = setup();
    turn.bind(TURN);
    apply(started({ ...command, status: "inProgress" }));
    turn.ledger.declineTool("call_8w4");
    apply(completed({ ...command, status: "failed" }));
    apply(
      completed({
        type: "collabAgentToolCall",
        id: "call_s",
        tool: "spawnAgent",
        status: "completed",
        senderThreadId: THREAD,
        receiverThreadIds: ["child-1"],
        prompt: "child task",
        model: null,
        reasoningEffort: null,
        agentsStates: {},
      }),
    );
    apply(
      note("error", {
        threadId: THREAD,
        turnId: TURN,
        willRetry: false,
        error: { message: "model refused", codexErrorInfo: "badRequest", additionalDetails: null },
      }),
    );
    apply(note("turn/completed", { threadId: THREAD, turn: turnRecord("failed") }));
    for (const event of [
      note("item/completed", {
        threadId: "child-1",
        turnId: "ct",
        item: item({ type: "agentMessage", id: "m", text: "PONG", phase: null }),
        completedAtMs: 1,
      }),
      note("turn/completed", { threadId: "child-1", turn: { ...turnRecord("completed"), id: "ct" } }),
    ].flatMap((n) => codexEventsOf(n, context))) {
      if (event.kind === "child_message" || event.kind === "child_turn_completed") subagents.observe(event);
    }
    expect(events.find((event) => event.type === "tool_call.completed" && event.itemId === "call_8w4")).toMatchObject({
      status: "declined",
    });
    expect(events.filter((event) => event.type === "subagent.observed")).toEqual([
      {
        type: "subagent.observed",
        turnId: "host-turn",
        nativeId: "child-1",
        title: "child task",
        task: "child task",
        parentItemId: "call_s",
        status: "running",
        nativeThreadId: "child-1",
      },
      {
        type: "subagent.observed",
        turnId: "host-turn",
        nativeId: "child-1",
        title: "child task",
        task: "child task",
        parentItemId: "call_s",
        status: "completed",
        summary: "PONG",
        nativeThreadId: "child-1",
      },
    ]);
    // The child's message is its transcript, on the spawning turn even after that turn ended.
    expect(events.filter((event) => event.type === "subagent.message")).toEqual([
      {
        type: "subagent.message",
        turnId: "host-turn",
        nativeId: "child-1",
        itemId: "child-1:message:0",
        role: "assistant",
        text: "PONG",
      },
    ]);
    expect(events.filter((event) => event.type === "turn.terminal")).toEqual([
      {
        type: "turn.terminal",
        turnId: "host-turn",
        status: "failed",
        error: { code: "badRequest", message: "model refused" },
      },
    ]);
  });

  it("reports nothing for a turn Codex refused to start, and ends the waits on it", async () => {
    const { events, turn } = setup();
    turn.abandon();
    await expect(turn.codexTurnIdKnown).resolves.toBeNull();
    await turn.announced;
    await turn.ended;
    expect(turn.finish("failed")).toBe(false);
    expect(events).toEqual([]);
  });
});
