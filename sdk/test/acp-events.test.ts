import { describe, expect, it } from "vitest";
import type { AdapterEvent, TurnInput } from "@switchyard/spec";
import { RuntimeRequestBook, UNFINISHED_SUBAGENT_SUMMARY } from "../src/harness/index.js";
import { sessionCostUsdOf, withTurnCost } from "../src/acp/acp-usage.js";
import { ObservedSubagents, observedStatusOf } from "../src/acp/acp-subagents.js";
import {
  AcpTurn,
  agentExitReport,
  permissionApproval,
  promptEnding,
  readSessionUpdate,
  replayedTurns,
  type AcpPromptEnding,
  type AcpUpdateContext,
  type acpSdk,
} from "../src/acp/index.js";

const CONTEXT: AcpUpdateContext = { injectedServers: ["switchyard"] };

function text(
  sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
  value: string,
): acpSdk.SessionUpdate {
  return { sessionUpdate, content: { type: "text", text: value } };
}

describe("readSessionUpdate", () => {
  it("reads text chunks, and nothing for empty or non-text ones", () => {
    expect(readSessionUpdate(text("agent_message_chunk", "Hi"), CONTEXT)).toEqual({
      kind: "message_chunk",
      text: "Hi",
    });
    expect(readSessionUpdate(text("agent_thought_chunk", "hmm"), CONTEXT)).toEqual({
      kind: "thought_chunk",
      text: "hmm",
    });
    expect(readSessionUpdate(text("agent_message_chunk", ""), CONTEXT)).toEqual({ kind: "none" });
    expect(
      readSessionUpdate(
        { sessionUpdate: "agent_message_chunk", content: { type: "image", data: "", mimeType: "image/png" } },
        CONTEXT,
      ),
    ).toEqual({
      kind: "none",
    });
    // Our own prompt echoed back is not output.
    expect(readSessionUpdate(text("user_message_chunk", "the prompt"), CONTEXT)).toEqual({ kind: "none" });
  });

  it("reads a tool call's start from its first sighting and its end from a terminal status", () => {
    const announced = readSessionUpdate(
      {
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "npm test",
        kind: "execute",
        status: "in_progress",
        rawInput: { command: "npm test" },
      },
      CONTEXT,
    );
    expect(announced).toEqual({
      kind: "tool_call",
      announced: true,
      start: { itemId: "t1", kind: "command", name: "npm test", title: "npm test", input: { command: "npm test" } },
      end: null,
    });
    const finished = readSessionUpdate(
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "ok" } }],
      },
      CONTEXT,
    );
    expect(finished).toMatchObject({
      kind: "tool_call",
      announced: false,
      start: { itemId: "t1", title: "t1" },
      end: { status: "completed", output: "ok" },
    });
    expect(
      readSessionUpdate({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "failed" }, CONTEXT),
    ).toMatchObject({ end: { status: "failed" } });
  });

  it("names MCP calls to the injected server, and lets the flavor classify tools", () => {
    const mcp = readSessionUpdate(
      { sessionUpdate: "tool_call", toolCallId: "mcp_switchyard_delegate_task_1", title: "switchyard/delegate_task" },
      CONTEXT,
    );
    expect(mcp).toMatchObject({
      start: {
        kind: "mcp",
        server: "switchyard",
        name: "mcp__switchyard__delegate_task",
        title: "switchyard/delegate_task",
      },
    });
    const flavored = readSessionUpdate(
      { sessionUpdate: "tool_call", toolCallId: "t2", title: "AskUserQuestion", kind: "other" },
      { ...CONTEXT, toolKind: () => "web" },
    );
    expect(flavored).toMatchObject({ start: { kind: "web" } });
    const unclassified = readSessionUpdate(
      { sessionUpdate: "tool_call", toolCallId: "t3", title: "x", kind: "fetch" },
      { ...CONTEXT, toolKind: () => undefined },
    );
    expect(unclassified).toMatchObject({ start: { kind: "web" } });
  });

  it("reads plans as checklists and mode and config changes as session changes", () => {
    expect(
      readSessionUpdate(
        {
          sessionUpdate: "plan",
          entries: [
            { content: "read", status: "completed", priority: "high" },
            { content: "write", status: "pending", priority: "low" },
          ],
        },
        CONTEXT,
      ),
    ).toEqual({ kind: "plan", text: "- [x] read\n- [ ] write" });
    expect(readSessionUpdate({ sessionUpdate: "plan", entries: [] }, CONTEXT)).toEqual({ kind: "none" });
    expect(readSessionUpdate({ sessionUpdate: "current_mode_update", currentModeId: "plan" }, CONTEXT)).toEqual({
      kind: "mode_changed",
      currentModeId: "plan",
    });
    expect(readSessionUpdate({ sessionUpdate: "config_option_update", configOptions: [] }, CONTEXT)).toEqual({
      kind: "config_changed",
      configOptions: [],
    });
  });

  it("reads notices as one line for the user, naming a severity other than warning", () => {
    expect(
      readSessionUpdate(
        { sessionUpdate: "notice", severity: "warning", title: "Model metadata for `fake-model` not found." },
        CONTEXT,
      ),
    ).toEqual({
      kind: "notice",
      message: "Model metadata for `fake-model` not found.",
    });
    expect(
      readSessionUpdate(
        {
          sessionUpdate: "notice",
          severity: "info",
          title: "Context compacted",
          description: " Conversation compacted. ",
        },
        CONTEXT,
      ),
    ).toEqual({
      kind: "notice",
      message: "info: Context compacted: Conversation compacted.",
    });
    expect(
      readSessionUpdate(
        { sessionUpdate: "notice", severity: "error", title: "Sign-in expired", description: null },
        CONTEXT,
      ),
    ).toEqual({
      kind: "notice",
      message: "error: Sign-in expired",
    });
  });
});

describe("ObservedSubagents: subagent_update patches merged per child", () => {
  const child = "parent:subagent:1";

  it("keeps omitted fields, clears null ones, and prefers the title over the description", () => {
    const subagents = new ObservedSubagents();
    expect(subagents.apply({ sessionId: child, description: "review the diff" })).toEqual({
      nativeId: child,
      title: "review the diff",
      task: "review the diff",
      status: null,
    });
    expect(subagents.apply({ sessionId: child, state: { state: "running" } })).toEqual({
      nativeId: child,
      title: "review the diff",
      task: "review the diff",
      status: "running",
    });
    expect(subagents.apply({ sessionId: child, title: "Reviewer" })).toEqual({
      nativeId: child,
      title: "Reviewer",
      task: "review the diff",
      status: "running",
    });
    expect(subagents.apply({ sessionId: child, title: null, description: null })).toEqual({
      nativeId: child,
      status: "running",
    });
    expect(subagents.apply({ sessionId: child, state: null })).toEqual({ nativeId: child, status: null });
    expect(subagents.apply({ sessionId: "other", state: { state: "requires_action" } })).toEqual({
      nativeId: "other",
      status: "running",
    });
  });

  it("takes a model only for a child the agent announced (its own session's model option)", () => {
    const subagents = new ObservedSubagents();
    expect(subagents.has(child)).toBe(false);
    expect(subagents.applyModel(child, "gpt-5")).toBeNull();
    subagents.apply({ sessionId: child, description: "review the diff", state: { state: "running" } });
    expect(subagents.has(child)).toBe(true);
    expect(subagents.applyModel(child, "gpt-5")).toEqual({
      nativeId: child,
      title: "review the diff",
      task: "review the diff",
      model: "gpt-5",
      status: "running",
    });
  });

  it("reads a state snapshot as a status; unknown and future states say nothing", () => {
    expect(observedStatusOf({ state: "idle", stopReason: "end_turn" })).toBe("completed");
    expect(observedStatusOf({ state: "idle" })).toBe("completed");
    expect(observedStatusOf({ state: "idle", stopReason: "max_tokens" })).toBe("completed");
    expect(observedStatusOf({ state: "idle", stopReason: "refusal" })).toBe("failed");
    expect(observedStatusOf({ state: "idle", stopReason: "cancelled" })).toBe("failed");
    expect(observedStatusOf({ state: "idle", stopReason: "error", error: { code: -32603, message: "boom" } })).toBe(
      "failed",
    );
    expect(observedStatusOf({ state: "unknown" })).toBeNull();
    expect(observedStatusOf({ state: "_paused" })).toBeNull();
    expect(
      readSessionUpdate({ sessionUpdate: "subagent_update", sessionId: child, state: { state: "running" } }, CONTEXT),
    ).toEqual({
      kind: "subagent",
      update: { sessionUpdate: "subagent_update", sessionId: child, state: { state: "running" } },
    });
  });
});

describe("promptEnding", () => {
  it("maps every stop reason, with usage when the agent reports it", () => {
    expect(
      promptEnding({ stopReason: "end_turn", usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 } }, false),
    ).toEqual({
      status: "completed",
      usage: { inputTokens: 3, outputTokens: 5 },
    });
    // Cache and thought figures apart from input and output (the total has room for them: Anthropic's convention)…
    expect(
      promptEnding(
        {
          stopReason: "end_turn",
          usage: {
            inputTokens: 10,
            outputTokens: 20,
            cachedReadTokens: 300,
            cachedWriteTokens: 40,
            thoughtTokens: 5,
            totalTokens: 375,
          },
        },
        false,
      ).usage,
    ).toEqual({
      inputTokens: 10,
      outputTokens: 25,
      cacheReadInputTokens: 300,
      cacheCreationInputTokens: 40,
      reasoningOutputTokens: 5,
    });
    // …or inside them (OpenAI's): the spec's input excludes cache reads, its output includes reasoning.
    expect(
      promptEnding(
        {
          stopReason: "end_turn",
          usage: { inputTokens: 310, outputTokens: 20, cachedReadTokens: 300, thoughtTokens: 5, totalTokens: 330 },
        },
        false,
      ).usage,
    ).toEqual({
      inputTokens: 10,
      outputTokens: 20,
      cacheReadInputTokens: 300,
      reasoningOutputTokens: 5,
    });
    expect(promptEnding({ stopReason: "max_tokens" }, false)).toMatchObject({
      status: "completed",
      warning: expect.stringContaining("max_tokens"),
    });
    expect(promptEnding({ stopReason: "max_turn_requests" }, false)).toMatchObject({
      status: "completed",
      warning: expect.stringContaining("max_turn_requests"),
    });
    expect(promptEnding({ stopReason: "refusal" }, false)).toEqual({
      status: "failed",
      error: { code: "refusal", message: "The agent refused to continue this turn." },
    });
    expect(promptEnding({ stopReason: "cancelled" }, true)).toEqual({ status: "interrupted" });
    expect(promptEnding({ stopReason: "cancelled" }, false)).toEqual({ status: "cancelled" });
    expect(promptEnding({ stopReason: "sideways" as acpSdk.StopReason }, false)).toMatchObject({
      status: "completed",
      warning: expect.stringContaining("sideways"),
    });
  });
});

describe("agentExitReport", () => {
  it("carries the exit and the stderr tail; a clean exit has no error", () => {
    const crashed = agentExitReport({ exitCode: 7, signal: null }, "boom");
    expect(crashed.reason).toContain("exited (code 7, signal none)");
    expect(crashed.reason).toContain("boom");
    expect(crashed.error).toEqual({ code: "7", message: crashed.reason });
    expect(agentExitReport({ exitCode: null, signal: "SIGKILL" }, undefined).error?.code).toBe("agent_exited");
    expect(agentExitReport(null, undefined)).toMatchObject({
      reason: expect.stringContaining("closed its connection"),
      error: { code: "agent_exited" },
    });
    expect(agentExitReport({ exitCode: 0, signal: null }, undefined).error).toBeUndefined();
  });
});

describe("replayedTurns", () => {
  it("opens a turn per user run and gives it the assistant text after it", () => {
    expect(
      replayedTurns([
        text("user_message_chunk", "first "),
        text("user_message_chunk", "question"),
        text("agent_thought_chunk", "ignored"),
        text("agent_message_chunk", "answer"),
        { sessionUpdate: "tool_call", toolCallId: "t", title: "ignored" },
        text("agent_message_chunk", " one"),
        text("user_message_chunk", "second"),
        text("agent_message_chunk", "two"),
      ]),
    ).toEqual([
      { userText: "first question", assistantText: "answer one" },
      { userText: "second", assistantText: "two" },
    ]);
    expect(replayedTurns([text("agent_message_chunk", "greeting")])).toEqual([
      { userText: "", assistantText: "greeting" },
    ]);
  });
});

describe("permissionApproval", () => {
  it("shows the diff, else the raw input, and the options as decisions", () => {
    const options: acpSdk.PermissionOption[] = [
      { optionId: "ok", name: "Allow", kind: "allow_once" },
      { optionId: "no", name: "Reject", kind: "reject_once" },
    ];
    expect(
      permissionApproval({
        sessionId: "s",
        options,
        toolCall: {
          toolCallId: "t",
          title: "edit",
          kind: "edit",
          content: [{ type: "diff", path: "/a.ts", newText: "x" }],
        },
      }),
    ).toEqual({
      kind: "approval",
      approvalKind: "file-change",
      title: "edit",
      detail: "--- /a.ts\nx",
      options: [
        { id: "ok", label: "Allow", decision: "accept" },
        { id: "no", label: "Reject", decision: "decline" },
      ],
    });
    expect(
      permissionApproval({
        sessionId: "s",
        options,
        toolCall: { toolCallId: "t", kind: "execute", rawInput: { command: "ls" } },
      }),
    ).toMatchObject({
      approvalKind: "command",
      title: "t",
      detail: '{"command":"ls"}',
    });
  });
});

describe("AcpTurn on the kit's ledger", () => {
  function turnOf(extra: Partial<TurnInput> = {}) {
    const events: AdapterEvent[] = [];
    const emit = (event: AdapterEvent) => events.push(event);
    const requests = new RuntimeRequestBook<unknown>(emit, "request");
    const ended: AcpTurn[] = [];
    let counter = 0;
    const input: TurnInput = {
      turnId: "turn-1",
      runId: "run-1",
      text: "do it",
      instructions: null,
      model: null,
      runtimeMode: "approval-required",
      interactionMode: "default",
      restartOfTurnId: null,
      ...extra,
    };
    const turn = new AcpTurn(input, {
      emit,
      requests,
      newItemId: (prefix) => `turn-1:${prefix}:${++counter}`,
      onEnded: (t) => ended.push(t),
    });
    return { turn, events, requests, ended };
  }
  const read = (update: acpSdk.SessionUpdate) => readSessionUpdate(update, CONTEXT);

  it("opens one item per run of text: a thought ends the message, a tool call ends both", () => {
    const { turn, events } = turnOf();
    turn.start();
    turn.apply(read(text("agent_message_chunk", "Hel")));
    turn.apply(read(text("agent_message_chunk", "lo")));
    turn.apply(read(text("agent_thought_chunk", "think")));
    turn.apply(read({ sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", kind: "execute" }));
    turn.apply(read(text("agent_message_chunk", "after")));
    turn.apply(read({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" }));
    expect(turn.endWith(promptEnding({ stopReason: "end_turn" }, false))).toBe(true);
    expect(events.map((event) => `${event.type}${"itemId" in event ? ` ${event.itemId}` : ""}`)).toEqual([
      "turn.started",
      "message.delta turn-1:message:1",
      "message.delta turn-1:message:1",
      "message.completed turn-1:message:1",
      "reasoning.delta turn-1:reasoning:2",
      "reasoning.completed turn-1:reasoning:2",
      "tool_call.started t1",
      "message.delta turn-1:message:3",
      "tool_call.completed t1",
      "message.completed turn-1:message:3",
      "turn.terminal",
    ]);
    expect(events.find((event) => event.type === "message.completed")).toMatchObject({ text: "Hello" });
    expect(turn.replayed).toEqual({ userText: "do it", assistantText: "Helloafter" });
  });

  it("reports a plan only in a plan turn, under one item", () => {
    const plan = (content: string) =>
      read({ sessionUpdate: "plan", entries: [{ content, status: "pending", priority: "medium" }] });
    const planning = turnOf({ interactionMode: "plan" });
    planning.turn.apply(plan("a"));
    planning.turn.apply(plan("b"));
    expect(planning.events).toEqual([
      { type: "plan.proposed", turnId: "turn-1", itemId: "turn-1:plan:1", text: "- [ ] a" },
      { type: "plan.proposed", turnId: "turn-1", itemId: "turn-1:plan:1", text: "- [ ] b" },
    ]);
    const working = turnOf();
    working.turn.apply(plan("a"));
    expect(working.events).toEqual([]);
  });

  it("ends by the spec's rule: open tools end (declined ones declined), its requests are cancelled, one terminal", async () => {
    const { turn, events, requests, ended } = turnOf();
    turn.apply(read({ sessionUpdate: "tool_call", toolCallId: "declined", title: "rm", kind: "execute" }));
    turn.apply(read({ sessionUpdate: "tool_call", toolCallId: "open", title: "ls", kind: "execute" }));
    turn.declineTool("declined");
    const { outcome } = requests.open("turn-1", { kind: "approval", approvalKind: "command", title: "ls" }, undefined);
    turn.apply(read(text("agent_message_chunk", "partial")));
    expect(
      turn.endWith({ status: "interrupted", usage: { inputTokens: 1, outputTokens: 2 }, warning: "stopped" }),
    ).toBe(true);
    expect(turn.finish("failed")).toBe(false);
    turn.apply(read(text("agent_message_chunk", "late")));
    expect(await outcome).toMatchObject({ kind: "cancelled" });
    expect(await turn.ended).toMatchObject({ status: "interrupted", usage: { inputTokens: 1, outputTokens: 2 } });
    expect(events.filter((event) => event.type === "tool_call.completed")).toEqual([
      { type: "tool_call.completed", turnId: "turn-1", itemId: "declined", status: "declined" },
      { type: "tool_call.completed", turnId: "turn-1", itemId: "open", status: "failed" },
    ]);
    expect(events.filter((event) => event.type === "turn.terminal")).toHaveLength(1);
    expect(events.find((event) => event.type === "warning")).toEqual({
      type: "warning",
      turnId: "turn-1",
      message: "stopped",
    });
    expect(events.some((event) => event.type === "message.delta" && event.text === "late")).toBe(false);
    expect(events.map((event) => event.type).slice(-3)).toEqual([
      "tool_call.completed",
      "runtime_request.resolved",
      "turn.terminal",
    ]);
    expect(ended).toEqual([turn]);
  });

  it("reports notices as warnings, and the agent's sub-agents when their state or facts change; running ones fail with the turn", () => {
    const { turn, events } = turnOf();
    const subagents = new ObservedSubagents();
    turn.apply(read({ sessionUpdate: "notice", severity: "warning", title: "Low disk" }));
    turn.observeSubagent(subagents.apply({ sessionId: "c1", description: "write tests" }));
    turn.observeSubagent(subagents.apply({ sessionId: "c1", state: { state: "running" } }));
    turn.observeSubagent(subagents.apply({ sessionId: "c1", state: { state: "running" } }));
    turn.observeSubagent(subagents.apply({ sessionId: "c2", state: { state: "running" } }));
    turn.observeSubagent(subagents.applyModel("c1", "gpt-5")!);
    turn.observeSubagent(subagents.apply({ sessionId: "c1", state: { state: "idle", stopReason: "end_turn" } }));
    // An ended child stays ended.
    turn.observeSubagent(subagents.apply({ sessionId: "c1", title: "Tester", state: { state: "running" } }));
    expect(turn.endWith(promptEnding({ stopReason: "cancelled" }, true))).toBe(true);
    turn.observeSubagent(subagents.apply({ sessionId: "c2", state: { state: "idle" } }));
    const c1 = { nativeId: "c1", title: "write tests", task: "write tests" };
    expect(events.filter((event) => event.type === "warning" || event.type === "subagent.observed")).toEqual([
      { type: "warning", turnId: "turn-1", message: "Low disk" },
      { type: "subagent.observed", turnId: "turn-1", ...c1, status: "running" },
      { type: "subagent.observed", turnId: "turn-1", nativeId: "c2", status: "running" },
      { type: "subagent.observed", turnId: "turn-1", ...c1, model: "gpt-5", status: "running" },
      { type: "subagent.observed", turnId: "turn-1", ...c1, model: "gpt-5", status: "completed" },
      // Still running when the interrupted turn ended: its result never came.
      {
        type: "subagent.observed",
        turnId: "turn-1",
        nativeId: "c2",
        status: "failed",
        summary: UNFINISHED_SUBAGENT_SUMMARY,
      },
    ]);
    expect(events.at(-1)?.type).toBe("turn.terminal");
  });

  it("joins a child's streamed text into messages (its transcript), the last one its summary; a child reported ended first is spawned, then ended", () => {
    const { turn, events } = turnOf();
    const subagents = new ObservedSubagents();
    turn.subagentMessage("c1", "m0", "before it was announced");
    turn.observeSubagent(subagents.apply({ sessionId: "c1", description: "count", state: { state: "running" } }));
    turn.subagentMessage("c1", "m1", "looking ");
    turn.subagentMessage("c1", "m1", "around");
    turn.subagentMessage("c1", "m2", "the answer ");
    turn.subagentMessage("c1", "m2", "is 7");
    turn.observeSubagent(subagents.apply({ sessionId: "c1", state: { state: "idle", stopReason: "end_turn" } }));
    turn.subagentMessage("c1", "m3", "after it ended");
    turn.observeSubagent(subagents.apply({ sessionId: "c3", state: { state: "idle", stopReason: "refusal" } }));
    expect(events.filter((event) => event.type.startsWith("subagent."))).toEqual([
      { type: "subagent.observed", turnId: "turn-1", nativeId: "c1", title: "count", task: "count", status: "running" },
      {
        type: "subagent.message",
        turnId: "turn-1",
        nativeId: "c1",
        itemId: "c1:m1",
        role: "assistant",
        text: "looking around",
      },
      {
        type: "subagent.message",
        turnId: "turn-1",
        nativeId: "c1",
        itemId: "c1:m2",
        role: "assistant",
        text: "the answer is 7",
      },
      {
        type: "subagent.observed",
        turnId: "turn-1",
        nativeId: "c1",
        title: "count",
        task: "count",
        status: "completed",
        summary: "the answer is 7",
      },
      { type: "subagent.observed", turnId: "turn-1", nativeId: "c3", status: "running" },
      { type: "subagent.observed", turnId: "turn-1", nativeId: "c3", status: "failed" },
    ]);
  });
});

describe("ACP cost: the growth of the session's usage_update cost over a turn", () => {
  const usageUpdate = (amount: number, currency = "USD") =>
    ({ sessionUpdate: "usage_update", used: 1_000, size: 200_000, cost: { amount, currency } }) as acpSdk.SessionUpdate;

  it("reads the session's cumulative cost in dollars from usage_update, and nothing from other updates or currencies", () => {
    expect(sessionCostUsdOf(usageUpdate(0.42))).toBe(0.42);
    expect(sessionCostUsdOf(usageUpdate(0.42, "EUR"))).toBeNull();
    expect(sessionCostUsdOf({ sessionUpdate: "usage_update", used: 1, size: 2 } as acpSdk.SessionUpdate)).toBeNull();
    expect(
      sessionCostUsdOf({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: "hi" },
      } as acpSdk.SessionUpdate),
    ).toBeNull();
  });

  it("gives the turn what the session cost grew by, and leaves the cost out when either end is unknown or it did not grow for tokens spent", () => {
    const ending: AcpPromptEnding = { status: "completed", usage: { inputTokens: 100, outputTokens: 10 } };
    expect(withTurnCost(ending, 0.25, 0.4).usage!.costUsd).toBeCloseTo(0.15, 10);
    expect(withTurnCost(ending, null, 0.4)).toEqual(ending);
    expect(withTurnCost(ending, 0.25, null)).toEqual(ending);
    expect(withTurnCost(ending, 0.4, 0.4)).toEqual(ending);
    expect(withTurnCost<AcpPromptEnding>({ status: "completed" }, 0, 0.01)).toEqual({
      status: "completed",
      usage: { costUsd: 0.01 },
    });
  });
});
