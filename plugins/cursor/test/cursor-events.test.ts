/**
 * How Cursor SDK run messages become the host's turn events, without a process: the message
 * shapes are the ones the real SDK 1.0.32 streamed against the fake backend (see
 * cursor-adapter.test.ts), plus the kinds that backend does not produce (thinking, the `task`
 * sub-agent tool, errors).
 */
import { describe, expect, it } from "vitest";
import { UNFINISHED_SUBAGENT_SUMMARY, type AdapterEvent } from "@switchyard/sdk";
import {
  CursorTurn,
  terminalOf,
  toolKindOf,
  toolNameOf,
  toolOutputOf,
  toolTitleOf,
  turnUsageOf,
  type SDKMessage,
} from "../src/index.js";

const ids = { agent_id: "agent-1", run_id: "run-1" };

function record(): { turn: CursorTurn; events: AdapterEvent[] } {
  const events: AdapterEvent[] = [];
  return { turn: new CursorTurn("turn-a", (event) => events.push(event)), events };
}

const assistant = (text: string): SDKMessage => ({
  type: "assistant",
  ...ids,
  message: { role: "assistant", content: [{ type: "text", text }] },
});
const shellRunning: SDKMessage = {
  type: "tool_call",
  ...ids,
  call_id: "call-1",
  name: "shell",
  status: "running",
  args: { command: "echo hi", timeout: 300000 },
};
const shellDone: SDKMessage = {
  type: "tool_call",
  ...ids,
  call_id: "call-1",
  name: "shell",
  status: "completed",
  args: { command: "echo hi", timeout: 300000 },
  result: { status: "success", value: { exitCode: 0, signal: "", stdout: "hi\n", stderr: "", executionTime: 5 } },
};

describe("CursorTurn", () => {
  it("starts on RUNNING with Cursor's run id, streams chunks into one message and completes it with the turn", () => {
    const { turn, events } = record();
    turn.onMessage({ type: "status", ...ids, status: "RUNNING" });
    turn.onMessage(assistant("hello "));
    turn.onMessage(assistant("world"));
    turn.onMessage({
      type: "usage",
      ...ids,
      usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 4, cacheWriteTokens: 1, totalTokens: 18 },
    });
    turn.onMessage({ type: "status", ...ids, status: "FINISHED" });
    expect(turn.finish("completed")).toBe(true);
    expect(events).toEqual([
      { type: "turn.started", turnId: "turn-a", providerTurnId: "run-1" },
      { type: "message.delta", turnId: "turn-a", itemId: "message-1", text: "hello " },
      { type: "message.delta", turnId: "turn-a", itemId: "message-1", text: "world" },
      { type: "message.completed", turnId: "turn-a", itemId: "message-1", text: "hello world" },
      {
        type: "turn.terminal",
        turnId: "turn-a",
        status: "completed",
        usage: { inputTokens: 10, outputTokens: 3, cacheReadInputTokens: 4, cacheCreationInputTokens: 1 },
      },
    ]);
  });

  it("closes the message at a tool call: text before and after are two items around one command item", () => {
    const { turn, events } = record();
    turn.onMessage(assistant("let me look"));
    turn.onMessage(shellRunning);
    turn.onMessage(shellDone);
    turn.onMessage(assistant("it said hi"));
    turn.finish("completed");
    expect(events.map((event) => [event.type, "itemId" in event ? event.itemId : ""])).toEqual([
      ["message.delta", "message-1"],
      ["message.completed", "message-1"],
      ["tool_call.started", "call-1"],
      ["tool_call.completed", "call-1"],
      ["message.delta", "message-2"],
      ["message.completed", "message-2"],
      ["turn.terminal", ""],
    ]);
    expect(events[2]).toMatchObject({
      kind: "command",
      name: "shell",
      title: "echo hi",
      input: { command: "echo hi", timeout: 300000 },
    });
    expect(events[3]).toMatchObject({ status: "completed", output: "hi\n" });
  });

  it("names an MCP call mcp__<server>__<tool> with its server, and reads its text content as output", () => {
    const { turn, events } = record();
    const args = { providerIdentifier: "switchyard", toolName: "delegate_task", args: { task: "x" } };
    turn.onMessage({ type: "tool_call", ...ids, call_id: "call-2", name: "mcp", status: "running", args });
    turn.onMessage({
      type: "tool_call",
      ...ids,
      call_id: "call-2",
      name: "mcp",
      status: "completed",
      args,
      result: { status: "success", value: { content: [{ text: { text: '{"taskId":"t1"}' } }], isError: false } },
    });
    turn.finish("completed");
    expect(events[0]).toMatchObject({
      type: "tool_call.started",
      kind: "mcp",
      name: "mcp__switchyard__delegate_task",
      server: "switchyard",
      title: "switchyard/delegate_task",
    });
    expect(events[1]).toMatchObject({ type: "tool_call.completed", status: "completed", output: '{"taskId":"t1"}' });
  });

  it("reports a tool call whose result is not a success, or that errored, as failed", () => {
    const { turn, events } = record();
    turn.onMessage(shellRunning);
    turn.onMessage({
      ...shellDone,
      result: { status: "failure", value: { exitCode: 1, stdout: "", stderr: "nope" } },
    } as SDKMessage);
    turn.onMessage({
      type: "tool_call",
      ...ids,
      call_id: "call-3",
      name: "read",
      status: "running",
      args: { path: "a.txt" },
    });
    turn.onMessage({
      type: "tool_call",
      ...ids,
      call_id: "call-3",
      name: "read",
      status: "error",
      args: { path: "a.txt" },
    });
    turn.finish("completed");
    const completed = events.filter((event) => event.type === "tool_call.completed");
    expect(completed).toEqual([
      { type: "tool_call.completed", turnId: "turn-a", itemId: "call-1", status: "failed", output: "nope" },
      { type: "tool_call.completed", turnId: "turn-a", itemId: "call-3", status: "failed" },
    ]);
    expect(events.find((event) => event.type === "tool_call.started" && event.itemId === "call-3")).toMatchObject({
      kind: "file_read",
      title: "read a.txt",
    });
  });

  it("streams thinking into a reasoning item that a reply closes", () => {
    const { turn, events } = record();
    turn.onMessage({ type: "thinking", ...ids, text: "hmm, " });
    turn.onMessage({ type: "thinking", ...ids, text: "yes" });
    turn.onMessage(assistant("answer"));
    turn.finish("completed");
    expect(events.map((event) => event.type)).toEqual([
      "reasoning.delta",
      "reasoning.delta",
      "reasoning.completed",
      "message.delta",
      "message.completed",
      "turn.terminal",
    ]);
    expect(events[2]).toMatchObject({ itemId: "reasoning-1", text: "hmm, yes" });
  });

  it("observes Cursor's own sub-agents (the task tool) and settles them when the turn ends", () => {
    const { turn, events } = record();
    turn.onMessage({
      type: "tool_call",
      ...ids,
      call_id: "task-1",
      name: "task",
      status: "running",
      args: { description: "look around" },
    });
    turn.onMessage({ type: "tool_call", ...ids, call_id: "task-2", name: "task", status: "running", args: {} });
    turn.onMessage({
      type: "tool_call",
      ...ids,
      call_id: "task-1",
      name: "task",
      status: "completed",
      args: { description: "look around" },
      result: { status: "success", value: "found it" },
    });
    turn.finish("interrupted");
    const observed = events.filter((event) => event.type === "subagent.observed");
    // Snapshots: the call and the title repeat; the one cut off fails, its result never came.
    const task1 = { type: "subagent.observed", turnId: "turn-a", nativeId: "task-1", parentItemId: "task-1" };
    const task2 = { type: "subagent.observed", turnId: "turn-a", nativeId: "task-2", parentItemId: "task-2" };
    expect(observed).toEqual([
      { ...task1, status: "running", title: "look around" },
      { ...task2, status: "running" },
      { ...task1, status: "completed", title: "look around", summary: "found it" },
      { ...task2, status: "failed", summary: UNFINISHED_SUBAGENT_SUMMARY },
    ]);
    // The tool call still open when the turn was cut off ends failed; its partial text is the host's to keep.
    expect(
      events.filter((event) => event.type === "tool_call.completed").map((event) => [event.itemId, event.status]),
    ).toEqual([
      ["task-1", "completed"],
      ["task-2", "failed"],
    ]);
  });

  it("ignores everything after the turn ended", () => {
    const { turn, events } = record();
    turn.finish("completed");
    turn.onMessage(assistant("late"));
    turn.onMessage(shellRunning);
    expect(turn.finish("failed")).toBe(false);
    expect(events.map((event) => event.type)).toEqual(["turn.terminal"]);
  });
});

describe("terminalOf", () => {
  const result = (status: "finished" | "cancelled" | "error", error?: { message: string; code?: string }) => ({
    turnId: "t",
    result: { id: "run-1", status, ...(error ? { error } : {}) },
  });

  it("maps finished to completed, cancel to interrupted when Switchyard asked and cancelled otherwise", () => {
    expect(terminalOf(result("finished"), false)).toEqual({ status: "completed" });
    expect(terminalOf(result("cancelled"), true)).toEqual({ status: "interrupted" });
    expect(terminalOf(result("cancelled"), false)).toEqual({ status: "cancelled" });
  });

  it("maps an error to failed with Cursor's code and message, unless an interrupt was asked for", () => {
    expect(terminalOf(result("error", { message: "quota", code: "rate_limited" }), false)).toEqual({
      status: "failed",
      error: { code: "rate_limited", message: "quota" },
    });
    expect(terminalOf(result("error", { message: "x" }), false)).toEqual({
      status: "failed",
      error: { code: "cursor_error", message: "x" },
    });
    expect(terminalOf(result("error", { message: "x" }), true)).toEqual({ status: "interrupted" });
  });

  it("fails a run whose result could not be read, with the sidecar's reason", () => {
    expect(terminalOf({ turnId: "t", error: { kind: "network", message: "socket hang up" } }, false)).toEqual({
      status: "failed",
      error: { code: "network", message: "socket hang up" },
    });
    expect(terminalOf({ turnId: "t", error: { kind: "network", message: "gone" } }, true)).toEqual({
      status: "interrupted",
    });
  });
});

describe("tool and usage helpers", () => {
  it("kinds Cursor's public tool names", () => {
    expect(
      [
        "shell",
        "read",
        "edit",
        "write",
        "delete",
        "grep",
        "glob",
        "semSearch",
        "webSearch",
        "webFetch",
        "mcp",
        "task",
        "updateTodos",
      ].map(toolKindOf),
    ).toEqual([
      "command",
      "file_read",
      "file_change",
      "file_change",
      "file_change",
      "search",
      "search",
      "search",
      "web",
      "web",
      "mcp",
      "subagent",
      "other",
    ]);
  });

  it("names and titles calls, and falls back to Cursor's own name when an MCP call names no tool", () => {
    expect(toolNameOf({ name: "mcp", args: {} })).toBe("mcp");
    expect(toolTitleOf("mcp", {})).toBe("mcp");
    expect(toolTitleOf("grep", { pattern: "TODO" })).toBe("grep TODO");
    expect(toolTitleOf("updateTodos", {})).toBe("updateTodos");
  });

  it("reads outputs: command text, MCP text content, a plain value, an error, else JSON", () => {
    expect(toolOutputOf({ status: "success", value: { stdout: "out", stderr: "err" } })).toBe("out\nerr");
    expect(toolOutputOf({ status: "success", value: { content: [{ text: { text: "a" } }, { text: "b" }] } })).toBe(
      "a\nb",
    );
    expect(toolOutputOf({ status: "success", value: "done" })).toBe("done");
    expect(toolOutputOf({ status: "error", value: { error: "denied" } })).toBe("denied");
    expect(toolOutputOf({ status: "success", value: { files: ["a"] } })).toBe('{"files":["a"]}');
    expect(toolOutputOf(undefined)).toBeUndefined();
  });

  it("maps token usage to the spec's figures (reasoning tokens are part of the output and not reported apart)", () => {
    expect(
      turnUsageOf({
        inputTokens: 5,
        outputTokens: 6,
        cacheReadTokens: 7,
        cacheWriteTokens: 8,
        totalTokens: 26,
        reasoningTokens: 2,
      }),
    ).toEqual({
      inputTokens: 5,
      outputTokens: 6,
      cacheReadInputTokens: 7,
      cacheCreationInputTokens: 8,
    });
  });
});
