/**
 * The pure mapping of Pi's RPC events to what a Switchyard turn reports, on the shapes
 * `pi --mode rpc` 0.73.1 writes (its `rpc-types.d.ts` and observed runs).
 */
import { describe, expect, it } from "vitest";
import {
  assistantDeltaOf,
  assistantFinalOf,
  extensionErrorWarningOf,
  lastAssistantOf,
  parseMcpToolName,
  retryWarningOf,
  runOutcomeOf,
  snapshotOf,
  toolCallEndOf,
  toolCallStartOf,
  toolKindOf,
  toolTitleOf,
  usageOf,
} from "../src/pi-events.js";
import type { PiMessage } from "../src/pi-wire.js";

const assistant = (overrides: Partial<PiMessage> = {}): PiMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "PONG-pi" }],
  stopReason: "stop",
  ...overrides,
});

describe("Pi tools", () => {
  it("kinds and titles Pi's tools", () => {
    expect(toolKindOf("bash")).toBe("command");
    expect(toolKindOf("read")).toBe("file_read");
    expect(toolKindOf("ls")).toBe("file_read");
    expect(toolKindOf("grep")).toBe("search");
    expect(toolKindOf("write")).toBe("file_change");
    expect(toolKindOf("mcp__switchyard__delegate_task")).toBe("mcp");
    expect(toolKindOf("my_custom_tool")).toBe("other");
    expect(parseMcpToolName("mcp__t3-code__t3_thread_wait")).toEqual({ server: "t3-code", tool: "t3_thread_wait" });
    expect(parseMcpToolName("bash")).toBeNull();
    expect(toolTitleOf("bash", { command: "ls -la" })).toBe("ls -la");
    expect(toolTitleOf("edit", { path: "src/a.ts" })).toBe("edit src/a.ts");
    expect(toolTitleOf("grep", { pattern: "TODO" })).toBe("grep TODO");
    expect(toolTitleOf("read", {})).toBe("read");
    expect(toolTitleOf("mcp__switchyard__delegate_task", {})).toBe("switchyard/delegate_task");
  });

  it("maps tool_execution_start to a tool call start keyed by Pi's toolCallId", () => {
    expect(
      toolCallStartOf({
        type: "tool_execution_start",
        toolCallId: "call_1",
        toolName: "bash",
        args: { command: "echo hi" },
      }),
    ).toEqual({
      itemId: "call_1",
      kind: "command",
      name: "bash",
      title: "echo hi",
      input: { command: "echo hi" },
    });
    expect(
      toolCallStartOf({
        type: "tool_execution_start",
        toolCallId: "call_2",
        toolName: "mcp__switchyard__echo",
        args: { text: "x" },
      }),
    ).toMatchObject({
      kind: "mcp",
      server: "switchyard",
      title: "switchyard/echo",
    });
    expect(
      toolCallStartOf({ type: "tool_execution_start", toolCallId: "call_3", toolName: "custom" }),
    ).not.toHaveProperty("input");
  });

  it("maps tool_execution_end to completed or failed, with the text of the result", () => {
    expect(
      toolCallEndOf({
        type: "tool_execution_end",
        toolCallId: "call_1",
        toolName: "bash",
        result: { content: [{ type: "text", text: "hi\n" }] },
        isError: false,
      }),
    ).toEqual({
      itemId: "call_1",
      status: "completed",
      output: "hi\n",
    });
    expect(
      toolCallEndOf({
        type: "tool_execution_end",
        toolCallId: "call_1",
        toolName: "bash",
        result: {
          content: [
            { type: "text", text: "Command aborted" },
            { type: "image", mimeType: "image/png" },
          ],
        },
        isError: true,
      }),
    ).toEqual({ itemId: "call_1", status: "failed", output: "Command aborted\n[image image/png]" });
    expect(toolCallEndOf({ type: "tool_execution_end", toolCallId: "call_1", toolName: "bash" })).toEqual({
      itemId: "call_1",
      status: "completed",
    });
  });
});

describe("Pi assistant messages", () => {
  it("takes text and thinking deltas of assistant messages only", () => {
    const message = assistant({ content: [] });
    expect(
      assistantDeltaOf({ type: "message_update", message, assistantMessageEvent: { type: "text_delta", delta: "PO" } }),
    ).toEqual({ channel: "message", text: "PO" });
    expect(
      assistantDeltaOf({
        type: "message_update",
        message,
        assistantMessageEvent: { type: "thinking_delta", delta: "hmm" },
      }),
    ).toEqual({ channel: "reasoning", text: "hmm" });
    expect(
      assistantDeltaOf({ type: "message_update", message, assistantMessageEvent: { type: "text_start" } }),
    ).toBeNull();
    expect(
      assistantDeltaOf({ type: "message_update", message, assistantMessageEvent: { type: "text_delta", delta: "" } }),
    ).toBeNull();
    expect(
      assistantDeltaOf({
        type: "message_update",
        message: { role: "user" },
        assistantMessageEvent: { type: "text_delta", delta: "x" },
      }),
    ).toBeNull();
    expect(assistantDeltaOf({ type: "message_update", message })).toBeNull();
  });

  it("takes Pi 1.x's bare deltas by the role of the message its message_start opened", () => {
    const update = { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "PO" } } as const;
    expect(assistantDeltaOf(update, "assistant")).toEqual({ channel: "message", text: "PO" });
    expect(assistantDeltaOf(update, "user")).toBeNull();
    expect(assistantDeltaOf(update)).toBeNull();
  });

  it("reads the final text, thinking and usage of message_end", () => {
    const message = assistant({
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "a" },
        { type: "toolCall", id: "c", name: "bash", arguments: {} },
        { type: "text", text: "b" },
      ],
      usage: { input: 30, output: 15 },
    });
    expect(assistantFinalOf(message)).toEqual({ text: "ab", thinking: "hmm" });
    expect(usageOf(message)).toEqual({ inputTokens: 30, outputTokens: 15 });
    // What Pi left out stays out: not 0.
    expect(usageOf(assistant({ usage: { output: 4 } }))).toEqual({ outputTokens: 4 });
    expect(usageOf(assistant({ usage: {} }))).toBeNull();
    // Cache figures, Pi's cost and the model it came from.
    const priced = usageOf(
      assistant({
        model: "claude-sonnet-4-5",
        usage: { input: 30, output: 15, cacheRead: 200, cacheWrite: 10, totalTokens: 255, cost: { total: 0.0021 } },
      }),
    );
    const figures = {
      inputTokens: 30,
      outputTokens: 15,
      cacheReadInputTokens: 200,
      cacheCreationInputTokens: 10,
      costUsd: 0.0021,
    };
    expect(priced).toEqual({ ...figures, byModel: { "claude-sonnet-4-5": figures } });
    // A cost of 0 for tokens spent is a model Pi has no price for: left out, not $0.
    expect(usageOf(assistant({ usage: { input: 30, output: 15, cost: { total: 0 } } }))).toEqual({
      inputTokens: 30,
      outputTokens: 15,
    });
    // An aborted request's message (Pi reports zeros): no cost either, or the turn's other,
    // unpriced messages would add up to a "reported" $0.
    expect(
      usageOf(
        assistant({
          stopReason: "aborted",
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { total: 0 } },
        }),
      ),
    ).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 });
    expect(usageOf(assistant())).toBeNull();
  });
});

describe("the end of a Pi run", () => {
  it("maps the last assistant message's stop reason to the turn's outcome", () => {
    expect(runOutcomeOf(assistant(), false)).toEqual({ kind: "terminal", status: "completed" });
    expect(runOutcomeOf(undefined, false)).toEqual({ kind: "terminal", status: "completed" });
    expect(runOutcomeOf(assistant({ stopReason: "length" }), false)).toEqual({
      kind: "terminal",
      status: "completed",
      warning: "The model stopped at its output token limit.",
    });
    expect(runOutcomeOf(assistant({ stopReason: "aborted", errorMessage: "Request was aborted" }), true)).toEqual({
      kind: "terminal",
      status: "interrupted",
    });
    // Nobody asked for it: Pi stopped on its own (another client, an extension).
    expect(runOutcomeOf(assistant({ stopReason: "aborted" }), false)).toEqual({
      kind: "terminal",
      status: "cancelled",
    });
    // A provider error may still be retried or compacted away.
    expect(runOutcomeOf(assistant({ stopReason: "error", errorMessage: "Connection error." }), false)).toEqual({
      kind: "error_pending",
      error: { message: "Connection error." },
    });
    expect(runOutcomeOf(assistant({ stopReason: "error" }), false)).toEqual({
      kind: "error_pending",
      error: { message: "The model provider reported an error." },
    });
    expect(runOutcomeOf(assistant({ stopReason: "error", errorMessage: "boom" }), true)).toEqual({
      kind: "terminal",
      status: "interrupted",
      error: { message: "boom" },
    });
  });

  it("takes the last assistant message from agent_end, else the last one seen", () => {
    const seen = assistant({ stopReason: "toolUse" });
    const final = assistant({ stopReason: "aborted" });
    expect(
      lastAssistantOf(
        { type: "agent_end", messages: [{ role: "user", content: "hi" }, seen, { role: "toolResult" }, final] },
        null,
      ),
    ).toBe(final);
    expect(lastAssistantOf({ type: "agent_end", messages: [{ role: "user", content: "hi" }] }, seen)).toBe(seen);
    expect(lastAssistantOf({ type: "agent_end" }, null)).toBeUndefined();
  });

  it("words Pi's retries and extension failures as warnings", () => {
    expect(
      retryWarningOf({
        type: "auto_retry_start",
        attempt: 1,
        maxAttempts: 2,
        delayMs: 200,
        errorMessage: "Connection error.",
      }),
    ).toBe("Pi retries after a provider error (attempt 1 of 2): Connection error.");
    expect(retryWarningOf({ type: "auto_retry_start" })).toBe(
      "Pi retries after a provider error (attempt ? of ?): unknown error",
    );
    expect(extensionErrorWarningOf({ type: "extension_error", event: "tool_call", error: "boom" })).toBe(
      "A Pi extension failed in tool_call: boom",
    );
  });
});

describe("a Pi conversation snapshot", () => {
  it("has one turn per user message with the last assistant text after it", () => {
    const snapshot = snapshotOf([
      { role: "user", content: [{ type: "text", text: "remember ALPHA" }] },
      assistant({ content: [{ type: "toolCall", id: "call_1", name: "bash", arguments: {} }], stopReason: "toolUse" }),
      { role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: "hi" }] },
      assistant({ content: [{ type: "text", text: "noted" }] }),
      { role: "custom", content: "from an extension" },
      { role: "user", content: "recall" },
      assistant({ content: [], stopReason: "aborted" }),
    ]);
    expect(snapshot.turns).toEqual([
      { userText: "remember ALPHA", assistantText: "noted" },
      { userText: "recall", assistantText: "" },
    ]);
    expect(snapshotOf([assistant()]).turns).toEqual([]);
  });
});
