import { describe, expect, it } from "vitest";
import type { AdapterEvent } from "@switchyard/spec";
import { NativeSubagentBook, UNFINISHED_SUBAGENT_SUMMARY } from "./native-subagent-book.js";

function recorder(): { events: AdapterEvent[]; emit: (event: AdapterEvent) => void } {
  const events: AdapterEvent[] = [];
  return { events, emit: (event) => events.push(event) };
}

describe("NativeSubagentBook: a native sub-agent's life as the spec's events", () => {
  it("reports full snapshots: spawned, an update only when it changes something, transcript, one ending with usage", () => {
    const { events, emit } = recorder();
    const book = new NativeSubagentBook("turn-1", emit);
    book.spawned("call-1", { parentItemId: "call-1", title: "count things", task: "" });
    book.update("call-1", { agentType: "explorer" });
    book.update("call-1", { agentType: "explorer" });
    book.message("call-1", "user", "count the files");
    book.message("call-1", "assistant", "");
    book.message("call-1", "assistant", "done", "part-1");
    book.message("call-1", "assistant", "done", "part-1");
    expect(
      book.finished("call-1", { status: "completed", summary: "7", usage: { inputTokens: 10 } }, { model: "m" }),
    ).toBe(true);
    expect(book.finished("call-1", { status: "failed" })).toBe(false);
    book.message("call-1", "assistant", "late");
    book.spawned("call-1", { title: "again" });
    const base = {
      type: "subagent.observed",
      turnId: "turn-1",
      nativeId: "call-1",
      parentItemId: "call-1",
      title: "count things",
    };
    expect(events).toEqual([
      { ...base, status: "running" },
      { ...base, agentType: "explorer", status: "running" },
      {
        type: "subagent.message",
        turnId: "turn-1",
        nativeId: "call-1",
        itemId: "call-1:message:0",
        role: "user",
        text: "count the files",
      },
      {
        type: "subagent.message",
        turnId: "turn-1",
        nativeId: "call-1",
        itemId: "part-1",
        role: "assistant",
        text: "done",
      },
      { ...base, agentType: "explorer", model: "m", status: "completed", summary: "7", usage: { inputTokens: 10 } },
    ]);
  });

  it("closes what is still open as failed when the turn ends, and ignores facts about children it never saw spawn", () => {
    const { events, emit } = recorder();
    const book = new NativeSubagentBook("turn-1", emit);
    book.update("ghost", { title: "never spawned" });
    book.message("ghost", "assistant", "hello");
    expect(book.finished("ghost", { status: "completed" })).toBe(false);
    book.spawned("a", { title: "first" });
    book.spawned("b");
    book.finished("a", { status: "completed", summary: "x".repeat(5_000) });
    book.closeOpen();
    book.closeOpen();
    expect(book.openIds).toEqual([]);
    expect(events.map((e) => (e.type === "subagent.observed" ? [e.nativeId, e.status] : e.type))).toEqual([
      ["a", "running"],
      ["b", "running"],
      ["a", "completed"],
      ["b", "failed"],
    ]);
    const endings = events.filter((e) => e.type === "subagent.observed" && e.status !== "running");
    expect(endings[0]).toMatchObject({ summary: "x".repeat(2_000) });
    expect(endings[1]).toMatchObject({ summary: UNFINISHED_SUBAGENT_SUMMARY });
  });
});
