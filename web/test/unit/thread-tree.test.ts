import { describe, expect, it } from "vitest";
import type { ThreadShell } from "../../src/api/types.js";
import { threadShell } from "./thread-fixture.js";
import {
  ancestorsOf,
  badgeOf,
  childrenOf,
  deliveryText,
  elapsed,
  sidebarSections,
} from "../../src/model/thread-tree.js";
import { loadOpenSections, saveOpenSections } from "../../src/model/section-memory.js";

let counter = 0;
function thread(overrides: Partial<ThreadShell> = {}): ThreadShell {
  counter += 1;
  return threadShell({
    threadId: `t${counter}`,
    title: `thread ${counter}`,
    model: "alpha-large",
    createdAt: `2026-12-01T10:00:${String(counter % 60).padStart(2, "0")}.000Z`,
    ...overrides,
  });
}

describe("the sidebar's sections", () => {
  it("moves children to Subagents, snoozed and settled threads to theirs, each newest first", () => {
    const root = thread();
    const newerRoot = thread();
    const child = thread({ parentThreadId: root.threadId, relationship: "subagent" });
    const snoozedChild = thread({ parentThreadId: root.threadId, snoozed: true });
    const settled = thread({ settledAt: "2026-12-01T11:00:00.000Z" });
    const sections = sidebarSections([root, child, newerRoot, snoozedChild, settled]);
    expect(sections.main.map((t) => t.threadId)).toEqual([newerRoot.threadId, root.threadId]);
    expect(sections.subagents.map((t) => t.threadId)).toEqual([child.threadId]);
    expect(sections.snoozed.map((t) => t.threadId)).toEqual([snoozedChild.threadId]);
    expect(sections.settled.map((t) => t.threadId)).toEqual([settled.threadId]);
  });

  it("keeps a fork in the main list, out of its source's children, and starts its breadcrumb at itself", () => {
    const source = thread();
    const child = thread({ parentThreadId: source.threadId, relationship: "subagent" });
    const fork = thread({ parentThreadId: source.threadId, relationship: "fork" });
    const forkChild = thread({ parentThreadId: fork.threadId, relationship: "subagent" });
    const all = new Map([source, child, fork, forkChild].map((t) => [t.threadId, t]));
    const sections = sidebarSections(all.values());
    expect(sections.main.map((t) => t.threadId)).toEqual([fork.threadId, source.threadId]);
    expect(sections.subagents.map((t) => t.threadId)).toEqual([forkChild.threadId, child.threadId]);
    expect(childrenOf(all.values(), source.threadId).map((t) => t.threadId)).toEqual([child.threadId]);
    expect(ancestorsOf(all, fork)).toEqual([]);
    expect(ancestorsOf(all, forkChild).map((t) => t.threadId)).toEqual([fork.threadId]);
  });

  it("finds a thread's children oldest first and its parents root first, stopping at a cycle", () => {
    const root = thread();
    const middle = thread({ parentThreadId: root.threadId });
    const leaf = thread({ parentThreadId: middle.threadId });
    const second = thread({ parentThreadId: root.threadId });
    const all = new Map([root, middle, leaf, second].map((t) => [t.threadId, t]));
    expect(childrenOf(all.values(), root.threadId).map((t) => t.threadId)).toEqual([middle.threadId, second.threadId]);
    expect(ancestorsOf(all, leaf).map((t) => t.threadId)).toEqual([root.threadId, middle.threadId]);
    const a = thread({ parentThreadId: "loop-b", threadId: "loop-a" });
    const b = thread({ parentThreadId: "loop-a", threadId: "loop-b" });
    expect(
      ancestorsOf(
        new Map([
          [a.threadId, a],
          [b.threadId, b],
        ]),
        a,
      ).map((t) => t.threadId),
    ).toEqual(["loop-b"]);
  });
});

describe("a thread's badge", () => {
  it("puts a person's attention first, then its own run, then children still at work", () => {
    const busyChild = thread({ status: "running" });
    expect(badgeOf(thread({ status: "running" }), [], 1)).toBe("needs attention");
    expect(badgeOf(thread({ status: "waiting" }), [], 0)).toBe("needs attention");
    expect(badgeOf(thread({ status: "running" }), [busyChild], 0)).toBe("running");
    expect(badgeOf(thread({ status: "completed" }), [busyChild], 0)).toBe("waiting on children");
    expect(badgeOf(thread({ status: "failed" }), [thread({ status: "completed" })], 0)).toBe("failed");
    expect(badgeOf(thread({ status: "idle" }), [], 0)).toBe("idle");
  });
});

describe("words for what happened", () => {
  it("says what the send policy did, and why when it did less than asked", () => {
    expect(deliveryText({ action: "steer", degraded: false, reason: "the turn is steerable" })).toBe("steered");
    expect(deliveryText({ action: "queue", degraded: true, reason: "provider cannot steer" })).toBe(
      "queued: provider cannot steer",
    );
  });

  it("formats elapsed time", () => {
    const from = "2026-12-01T10:00:00.000Z";
    expect(elapsed(from, Date.parse(from) + 12_000)).toBe("12s");
    expect(elapsed(from, Date.parse(from) + 245_000)).toBe("4m 05s");
    expect(elapsed(from, Date.parse(from) + 7_380_000)).toBe("2h 03m");
  });
});

describe("folded sections", () => {
  it("are remembered, and unreadable storage falls back to the defaults", () => {
    const store = new Map<string, string>();
    const storage = {
      getItem: (key: string) => store.get(key) ?? null,
      setItem: (key: string, value: string) => void store.set(key, value),
    };
    expect(loadOpenSections(storage)).toEqual({ snoozed: false, settled: false, subagents: true });
    saveOpenSections(storage, { snoozed: true, settled: false, subagents: false });
    expect(loadOpenSections(storage)).toEqual({ snoozed: true, settled: false, subagents: false });
    store.set("switchyard.sidebar.sections", "{not json");
    expect(loadOpenSections(storage)).toEqual({ snoozed: false, settled: false, subagents: true });
  });
});
