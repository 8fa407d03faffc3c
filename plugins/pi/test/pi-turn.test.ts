/**
 * A Pi turn on the kit's turn ledger and request book, fed event sequences `pi --mode rpc`
 * 0.73.1 writes: what it reports, and when it tells the session the run is over.
 */
import { describe, expect, it } from "vitest";
import { RuntimeRequestBook, type AdapterEvent } from "@switchyard/sdk";
import { PiTurn } from "../src/pi-turn.js";
import type { PiMessage, PiRpcEvent } from "../src/pi-wire.js";

function lab(turnId = "turn-1") {
  const events: AdapterEvent[] = [];
  const emit = (event: AdapterEvent) => events.push(event);
  const requests = new RuntimeRequestBook<undefined>(emit, "approval");
  const turn = new PiTurn(turnId, emit, requests);
  return { events, requests, turn, types: () => events.map((event) => event.type) };
}

const assistant = (text: string, overrides: Partial<PiMessage> = {}): PiMessage => ({
  role: "assistant",
  content: text === "" ? [] : [{ type: "text", text }],
  stopReason: "stop",
  usage: { input: 10, output: 5 },
  ...overrides,
});
const delta = (text: string, type = "text_delta"): PiRpcEvent => ({
  type: "message_update",
  message: { role: "assistant" },
  assistantMessageEvent: { type, delta: text },
});

describe("PiTurn", () => {
  it("reports a streamed reply once, with the final text authoritative, and ends on agent_end", () => {
    const { turn, events } = lab();
    const steps = [
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "message_start", message: { role: "user", content: "hello" } },
      { type: "message_end", message: { role: "user", content: "hello" } },
      { type: "message_start", message: { role: "assistant" } },
      delta("thinking…", "thinking_delta"),
      delta("PO"),
      delta("NG"),
      {
        type: "message_end",
        message: assistant("PONG-pi", {
          content: [
            { type: "thinking", thinking: "thought" },
            { type: "text", text: "PONG-pi" },
          ],
        }),
      },
      { type: "turn_end" },
      { type: "agent_end", messages: [{ role: "user", content: "hello" }, assistant("PONG-pi")] },
    ].map((event) => turn.apply(event as PiRpcEvent));
    expect(steps.at(-1)).toEqual({ kind: "end", status: "completed" });
    expect(steps.slice(0, -1).every((step) => step === null)).toBe(true);
    expect(turn.finish("completed")).toBe(true);
    expect(events).toEqual([
      { type: "turn.started", turnId: "turn-1" },
      { type: "reasoning.delta", turnId: "turn-1", itemId: "reasoning-1", text: "thinking…" },
      { type: "message.delta", turnId: "turn-1", itemId: "message-2", text: "PO" },
      { type: "message.delta", turnId: "turn-1", itemId: "message-2", text: "NG" },
      { type: "reasoning.completed", turnId: "turn-1", itemId: "reasoning-1", text: "thought" },
      { type: "message.completed", turnId: "turn-1", itemId: "message-2", text: "PONG-pi" },
      { type: "turn.terminal", turnId: "turn-1", status: "completed", usage: { inputTokens: 10, outputTokens: 5 } },
    ]);
    expect(turn.finish("failed")).toBe(false);
  });

  it("closes the text before a tool starts, and sums the usage of every step", () => {
    const { turn, events } = lab();
    for (const event of [
      { type: "agent_start" },
      delta("let me look"),
      {
        type: "message_end",
        message: assistant("", {
          stopReason: "toolUse",
          content: [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "echo hi" } }],
        }),
      },
      { type: "tool_execution_start", toolCallId: "call_1", toolName: "bash", args: { command: "echo hi" } },
      {
        type: "tool_execution_update",
        toolCallId: "call_1",
        toolName: "bash",
        partialResult: { content: [{ type: "text", text: "h" }] },
      },
      {
        type: "tool_execution_end",
        toolCallId: "call_1",
        toolName: "bash",
        result: { content: [{ type: "text", text: "hi\n" }] },
        isError: false,
      },
      { type: "message_start", message: { role: "assistant" } },
      { type: "message_end", message: assistant("DONE after bash: hi") },
    ] as PiRpcEvent[]) {
      turn.apply(event);
    }
    turn.finish("completed");
    expect(events.filter((event) => event.type !== "message.delta")).toEqual([
      { type: "turn.started", turnId: "turn-1" },
      { type: "message.completed", turnId: "turn-1", itemId: "message-1", text: "let me look" },
      {
        type: "tool_call.started",
        turnId: "turn-1",
        itemId: "call_1",
        kind: "command",
        name: "bash",
        title: "echo hi",
        input: { command: "echo hi" },
      },
      { type: "tool_call.completed", turnId: "turn-1", itemId: "call_1", status: "completed", output: "hi\n" },
      { type: "message.completed", turnId: "turn-1", itemId: "message-2", text: "DONE after bash: hi" },
      { type: "turn.terminal", turnId: "turn-1", status: "completed", usage: { inputTokens: 20, outputTokens: 10 } },
    ]);
  });

  it("ends an interrupted turn inside a tool: the tool fails, the turn's approval is cancelled, partial text is kept", () => {
    const { turn, events, requests } = lab();
    turn.apply({ type: "agent_start" });
    turn.apply(delta("partial"));
    turn.apply({ type: "tool_execution_start", toolCallId: "call_1", toolName: "bash", args: { command: "sleep 60" } });
    const { requestId } = requests.open(
      "turn-1",
      { kind: "approval", approvalKind: "command", title: "rm -rf build", options: [] },
      undefined,
    );
    turn.interruptRequested = true;
    const step = turn.apply({ type: "agent_end", messages: [assistant("", { stopReason: "aborted" })] });
    expect(step).toEqual({ kind: "end", status: "interrupted" });
    turn.finish("interrupted");
    expect(events.slice(-3)).toEqual([
      { type: "tool_call.completed", turnId: "turn-1", itemId: "call_1", status: "failed" },
      { type: "runtime_request.resolved", turnId: "turn-1", requestId, resolution: "cancelled" },
      { type: "turn.terminal", turnId: "turn-1", status: "interrupted" },
    ]);
    expect(events).toContainEqual({
      type: "message.completed",
      turnId: "turn-1",
      itemId: "message-1",
      text: "partial",
    });
    // Late events of the ended turn never leak.
    expect(turn.apply({ type: "message_end", message: assistant("late") })).toBeNull();
    expect(events.at(-1)?.type).toBe("turn.terminal");
  });

  it("reports a declined tool call as declined, whether Pi ends it or the turn does", () => {
    const ended = lab();
    ended.turn.apply({
      type: "tool_execution_start",
      toolCallId: "call_1",
      toolName: "bash",
      args: { command: "rm x" },
    });
    ended.turn.declineTool("call_1");
    ended.turn.apply({
      type: "tool_execution_end",
      toolCallId: "call_1",
      toolName: "bash",
      result: { content: [{ type: "text", text: "The user declined this bash call." }] },
      isError: true,
    });
    expect(ended.events.at(-1)).toMatchObject({ type: "tool_call.completed", status: "declined" });

    const open = lab();
    open.turn.apply({
      type: "tool_execution_start",
      toolCallId: "call_2",
      toolName: "bash",
      args: { command: "rm y" },
    });
    open.turn.declineTool("call_2");
    open.turn.finish("cancelled");
    expect(open.events).toContainEqual({
      type: "tool_call.completed",
      turnId: "turn-1",
      itemId: "call_2",
      status: "declined",
    });
  });

  it("waits out a provider error Pi retries: a later run's agent_end ends the turn", () => {
    const { turn, types } = lab();
    turn.apply({ type: "agent_start" });
    expect(
      turn.apply({
        type: "agent_end",
        messages: [assistant("", { stopReason: "error", errorMessage: "Connection error." })],
      }),
    ).toEqual({ kind: "confirm_error" });
    expect(
      turn.apply({
        type: "auto_retry_start",
        attempt: 1,
        maxAttempts: 2,
        delayMs: 200,
        errorMessage: "Connection error.",
      }),
    ).toBeNull();
    // The round trip came back after the announcement: not final.
    expect(turn.errorSettled()).toBeNull();
    turn.apply({ type: "agent_start" });
    turn.apply({ type: "message_end", message: assistant("recovered") });
    expect(turn.apply({ type: "agent_end", messages: [assistant("recovered")] })).toEqual({
      kind: "end",
      status: "completed",
    });
    expect(types()).toContain("warning");
  });

  it("fails the turn on a provider error nothing recovers, or when Pi's retries run out", () => {
    const final = lab();
    expect(
      final.turn.apply({
        type: "agent_end",
        messages: [assistant("", { stopReason: "error", errorMessage: "scripted-boom" })],
      }),
    ).toEqual({ kind: "confirm_error" });
    expect(final.turn.errorSettled()).toEqual({ kind: "end", status: "failed", error: { message: "scripted-boom" } });

    const retried = lab();
    retried.turn.apply({
      type: "agent_end",
      messages: [assistant("", { stopReason: "error", errorMessage: "Connection error." })],
    });
    retried.turn.apply({ type: "auto_retry_start", attempt: 1, maxAttempts: 1 });
    expect(
      retried.turn.apply({ type: "auto_retry_end", success: false, attempt: 1, finalError: "Connection error." }),
    ).toEqual({
      kind: "end",
      status: "failed",
      error: { message: "Connection error." },
    });

    const compacted = lab();
    compacted.turn.apply({
      type: "agent_end",
      messages: [assistant("", { stopReason: "error", errorMessage: "context overflow" })],
    });
    compacted.turn.apply({ type: "compaction_start", reason: "overflow" });
    expect(compacted.turn.errorSettled()).toBeNull();
    expect(compacted.turn.apply({ type: "compaction_end", reason: "overflow", willRetry: false })).toEqual({
      kind: "end",
      status: "failed",
      error: { message: "context overflow" },
    });
  });

  it("warns about steering Pi still queued when a run completes", () => {
    const { turn, events } = lab();
    turn.apply({ type: "queue_update", steering: ["late steer"], followUp: [] });
    turn.finish("completed");
    expect(events).toContainEqual({
      type: "warning",
      turnId: "turn-1",
      message: "1 steering message(s) reached Pi after its last model call; Pi delivers them with the next prompt.",
    });
  });

  it("projects the task cards of Pi's subagent tool as observed native sub-agents, each status change once, none with a thread id", () => {
    const { turn, events } = lab();
    const child = (status: string, extra: Record<string, unknown> = {}) => ({
      agent: "scout",
      task: "map the repo",
      agentSource: "user",
      status,
      exitCode: null,
      messages: [],
      stderr: "",
      usage: {},
      ...extra,
    });
    const details = (...results: unknown[]) => ({
      content: [{ type: "text", text: "…" }],
      details: { mode: "parallel", results, isError: false },
    });
    const answer = { role: "assistant", content: [{ type: "text", text: "src/ holds the code" }] };
    const steps: PiRpcEvent[] = [
      { type: "agent_start" },
      { type: "tool_execution_start", toolCallId: "call-1", toolName: "subagent", args: {} },
      {
        type: "tool_execution_update",
        toolCallId: "call-1",
        toolName: "subagent",
        partialResult: details(child("pending"), child("running", { agent: "critic", task: "review" })),
      },
      {
        type: "tool_execution_update",
        toolCallId: "call-1",
        toolName: "subagent",
        partialResult: details(child("running"), child("running", { agent: "critic", task: "review" })),
      },
      {
        type: "tool_execution_end",
        toolCallId: "call-1",
        toolName: "subagent",
        result: details(
          child("completed", { messages: [answer] }),
          child("failed", { agent: "critic", task: "review", errorMessage: "model refused" }),
        ),
        isError: false,
      },
      // Another tool with the same shape, and the subagent tool with one it does not know: ordinary tool output.
      { type: "tool_execution_start", toolCallId: "call-2", toolName: "bash", args: {} },
      {
        type: "tool_execution_end",
        toolCallId: "call-2",
        toolName: "bash",
        result: details(child("completed")),
        isError: false,
      },
      { type: "tool_execution_start", toolCallId: "call-3", toolName: "subagent", args: {} },
      {
        type: "tool_execution_end",
        toolCallId: "call-3",
        toolName: "subagent",
        result: { details: { results: [{ name: "x" }] } },
        isError: false,
      },
    ];
    for (const step of steps) turn.apply(step);
    const observed = events.filter((event) => event.type === "subagent.observed");
    expect(observed).toEqual([
      {
        type: "subagent.observed",
        turnId: "turn-1",
        nativeId: "call-1#0",
        title: "scout: map the repo",
        status: "running",
      },
      { type: "subagent.observed", turnId: "turn-1", nativeId: "call-1#1", title: "critic: review", status: "running" },
      {
        type: "subagent.observed",
        turnId: "turn-1",
        nativeId: "call-1#0",
        title: "scout: map the repo",
        status: "completed",
        summary: "src/ holds the code",
      },
      {
        type: "subagent.observed",
        turnId: "turn-1",
        nativeId: "call-1#1",
        title: "critic: review",
        status: "failed",
        summary: "model refused",
      },
    ]);
    expect(events.filter((event) => event.type === "tool_call.completed")).toHaveLength(3);
  });

  it("ends a task card still running when the turn ends, as the turn ended", () => {
    const { turn, events } = lab();
    turn.apply({ type: "agent_start" });
    turn.apply({ type: "tool_execution_start", toolCallId: "call-1", toolName: "subagent", args: {} });
    turn.apply({
      type: "tool_execution_update",
      toolCallId: "call-1",
      toolName: "subagent",
      partialResult: {
        details: { mode: "single", results: [{ agent: "scout", task: "t", status: "running", messages: [] }] },
      },
    });
    turn.finish("interrupted");
    expect(
      events.filter((event) => event.type === "subagent.observed").map((event) => (event as { status: string }).status),
    ).toEqual(["running", "failed"]);
  });
});
