import { describe, expect, it } from "vitest";
import type { AdapterEvent } from "@switchyard/spec";
import { RuntimeRequestBook } from "./runtime-request-book.js";
import { TurnLedger, addUsage } from "./turn-ledger.js";

function recorder(): { events: AdapterEvent[]; emit: (event: AdapterEvent) => void } {
  const events: AdapterEvent[] = [];
  return { events, emit: (event) => events.push(event) };
}

describe("TurnLedger: what becomes of open items at turn.terminal", () => {
  it("leaves cut-off text to the host, ends open tools by the turn's status or as declined, cancels the turn's requests, one terminal", () => {
    const { events, emit } = recorder();
    const book = new RuntimeRequestBook<null>(emit, "req");
    const turn = new TurnLedger("turn-1", emit, book);
    turn.start("native-1");
    turn.start();
    turn.messageDelta("m1", "partial ");
    turn.messageDelta("m1", "answer");
    turn.reasoningDelta("r1", "thinking");
    turn.toolStarted({ itemId: "t1", kind: "command", name: "bash", title: "ls" });
    turn.toolStarted({ itemId: "t2", kind: "command", name: "bash", title: "rm" });
    turn.declineTool("t2");
    book.open("turn-1", { kind: "approval", approvalKind: "command", title: "rm" }, null);
    expect(turn.finish("interrupted")).toBe(true);
    expect(turn.finish("completed")).toBe(false);
    turn.messageDelta("m1", "late");
    const tail = events.slice(events.findIndex((e) => e.type === "runtime_request.opened") + 1);
    expect(tail).toEqual([
      { type: "tool_call.completed", turnId: "turn-1", itemId: "t1", status: "failed" },
      { type: "tool_call.completed", turnId: "turn-1", itemId: "t2", status: "declined" },
      { type: "runtime_request.resolved", turnId: "turn-1", requestId: "turn-1:req:1", resolution: "cancelled" },
      { type: "turn.terminal", turnId: "turn-1", status: "interrupted" },
    ]);
    expect(events.filter((e) => e.type === "turn.started")).toEqual([
      { type: "turn.started", turnId: "turn-1", providerTurnId: "native-1" },
    ]);
    expect(turn.lastAssistantText).toBe("");
  });

  it("a completed turn completes unfinished tools and reports usage; a declined tool's failure reads declined", async () => {
    const { events, emit } = recorder();
    const turn = new TurnLedger("turn-2", emit);
    turn.toolStarted({
      itemId: "a",
      kind: "mcp",
      name: "mcp__switchyard__task_status",
      title: "switchyard/task_status",
      server: "switchyard",
    });
    turn.toolStarted({ itemId: "b", kind: "command", name: "bash", title: "x" });
    turn.declineTool("b");
    turn.toolCompleted("b", "failed", "user said no");
    turn.addUsage({ inputTokens: 10, outputTokens: 2 });
    turn.addUsage({ inputTokens: 5 });
    turn.finish("completed");
    expect(events.filter((e) => e.type === "tool_call.completed")).toEqual([
      { type: "tool_call.completed", turnId: "turn-2", itemId: "b", status: "declined", output: "user said no" },
      { type: "tool_call.completed", turnId: "turn-2", itemId: "a", status: "completed" },
    ]);
    await expect(turn.ended).resolves.toEqual({
      type: "turn.terminal",
      turnId: "turn-2",
      status: "completed",
      usage: { inputTokens: 15, outputTokens: 2 },
    });
  });
});

describe("usage across a turn's steps", () => {
  it("adds every figure and every model, and leaves out figures nobody reported", () => {
    const first = {
      inputTokens: 10,
      outputTokens: 2,
      costUsd: 0.01,
      byModel: { opus: { inputTokens: 10, costUsd: 0.01 } },
    };
    const second = {
      inputTokens: 5,
      cacheReadInputTokens: 100,
      costUsd: 0.02,
      byModel: { opus: { inputTokens: 5, costUsd: 0.015 }, haiku: { inputTokens: 1, costUsd: 0.005 } },
    };
    expect(addUsage(first, second)).toEqual({
      inputTokens: 15,
      outputTokens: 2,
      cacheReadInputTokens: 100,
      costUsd: 0.03,
      byModel: { opus: { inputTokens: 15, costUsd: 0.025 }, haiku: { inputTokens: 1, costUsd: 0.005 } },
    });
    expect(addUsage({}, { outputTokens: 1 })).toEqual({ outputTokens: 1 });
    const { events, emit } = recorder();
    const turn = new TurnLedger("turn-u", emit);
    turn.addUsage(first);
    turn.addUsage(second);
    turn.finish("interrupted");
    expect(events.at(-1)).toMatchObject({
      type: "turn.terminal",
      status: "interrupted",
      usage: { inputTokens: 15, costUsd: 0.03 },
    });
  });
});
