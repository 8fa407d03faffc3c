import { describe, expect, it } from "vitest";
import type { UsageTotals } from "../../src/api/types.js";
import {
  diffLines,
  durationText,
  firstLines,
  looksLikeDiff,
  relativeTime,
  usageText,
} from "../../src/model/item-display.js";
import { withDelta, withoutItem } from "../../src/model/live-output.js";
import { safeHref } from "../../src/model/safe-link.js";
import {
  childrenByParent,
  descendantsOf,
  groupByParent,
  ordered,
  subtreeBusy,
  subtreeThreads,
} from "../../src/model/thread-tree.js";
import { threadShell } from "./thread-fixture.js";

const usage = (overrides: Partial<UsageTotals>): UsageTotals => ({
  status: "reported",
  turns: { ended: 1, reported: 1, unknown: 0, inFlight: 0 },
  tokens: { input: 1000, output: 234, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 1234 },
  cost: { usd: 0.0123, basis: "reported", reportedUsd: 0.0123, estimatedUsd: 0, unpricedTurns: 0 },
  ...overrides,
});

describe("how items read", () => {
  it("says durations and times in a person's words, and usage without ever inventing a zero", () => {
    expect([durationText(850), durationText(4_210), durationText(125_000), durationText(3_780_000)]).toEqual([
      "850 ms",
      "4.2 s",
      "2m 05s",
      "1h 03m",
    ]);
    const now = Date.parse("2026-12-06T12:00:00.000Z");
    expect(
      [
        "2026-12-06T11:59:58.000Z",
        "2026-12-06T11:59:18.000Z",
        "2026-12-06T11:55:00.000Z",
        "2026-12-06T09:00:00.000Z",
        "2026-12-04T12:00:00.000Z",
      ].map((iso) => relativeTime(iso, now)),
    ).toEqual(["just now", "42s ago", "5m ago", "3h ago", "2d ago"]);
    expect(usageText(usage({}))).toBe("1,234 tokens · $0.0123");
    expect(
      usageText(usage({ cost: { usd: 0.5, basis: "estimated", reportedUsd: 0, estimatedUsd: 0.5, unpricedTurns: 0 } })),
    ).toBe("1,234 tokens · $0.5000 (estimated from prices)");
    expect(
      usageText(usage({ cost: { usd: null, basis: "unpriced", reportedUsd: 0, estimatedUsd: 0, unpricedTurns: 1 } })),
    ).toBe("1,234 tokens · unpriced (no price for its model)");
    expect(usageText(usage({ status: "unknown", tokens: null }))).toBe("unknown (not reported)");
    expect(usageText(usage({ status: "none", tokens: null }))).toBe("no turn ended yet");
  });

  it("folds long output and reads a diff line by line", () => {
    expect(firstLines("a\nb\nc", 2)).toEqual({ shown: "a\nb", hidden: 1 });
    expect(firstLines("a\nb", 2)).toEqual({ shown: "a\nb", hidden: 0 });
    const diff = "--- src/app.ts\n@@ -1 +1 @@\n-const a = 1;\n+const a = 2;\n same";
    expect(looksLikeDiff(diff)).toBe(true);
    expect(looksLikeDiff("- a list\n- of things")).toBe(false);
    expect(diffLines(diff).map((line) => line.kind)).toEqual(["file", "hunk", "remove", "add", "context"]);
  });

  it("opens only http(s) and mailto links, whatever the spelling", () => {
    expect(safeHref("https://example.com/a b")).toBe("https://example.com/a%20b");
    expect(safeHref("mailto:a@example.com")).toBe("mailto:a@example.com");
    for (const bad of [
      "javascript:alert(1)",
      " JavaScript:alert(1)",
      "java\nscript:alert(1)",
      "data:text/html,<script>",
      "file:///etc/passwd",
      "/api/v1/threads",
      "vbscript:x",
    ])
      expect(safeHref(bad)).toBeNull();
  });

  it("builds a reply from live pieces: a whole text at offset 0, continuations at the end, anything else ignored", () => {
    let live = withDelta([], { itemId: "m", kind: "assistant_message", offset: 0, delta: "Hello" });
    live = withDelta(live, { itemId: "m", kind: "assistant_message", offset: 5, delta: " world" });
    expect(live).toEqual([{ itemId: "m", kind: "assistant_message", text: "Hello world" }]);
    // A piece this page missed the start of is ignored; a new whole text replaces.
    expect(withDelta(live, { itemId: "m", kind: "assistant_message", offset: 3, delta: "x" })).toBe(live);
    expect(withDelta([], { itemId: "m", kind: "assistant_message", offset: 4, delta: "x" })).toEqual([]);
    expect(withDelta(live, { itemId: "m", kind: "assistant_message", offset: 0, delta: "Hi" })[0]!.text).toBe("Hi");
    expect(withoutItem(live, "m")).toEqual([]);
  });
});

describe("the tree of agents", () => {
  const root = threadShell({ threadId: "root" });
  const child = threadShell({
    threadId: "child",
    parentThreadId: "root",
    relationship: "subagent",
    status: "completed",
    createdAt: "2026-12-01T10:00:01.000Z",
  });
  const grandchild = threadShell({
    threadId: "grandchild",
    parentThreadId: "child",
    relationship: "subagent",
    status: "running",
  });
  const sibling = threadShell({
    threadId: "sibling",
    parentThreadId: "root",
    relationship: "subagent",
    status: "completed",
    createdAt: "2026-12-01T10:00:02.000Z",
    updatedAt: "2026-12-01T09:00:00.000Z",
  });
  const fork = threadShell({ threadId: "fork", parentThreadId: "root", relationship: "fork" });

  it("nests children and grandchildren, oldest first, without forks, and knows which subtrees have work under way", () => {
    const tree = descendantsOf([root, child, grandchild, sibling, fork], "root");
    expect(tree.map((node) => [node.thread.threadId, node.children.map((c) => c.thread.threadId)])).toEqual([
      ["child", ["grandchild"]],
      ["sibling", []],
    ]);
    expect(subtreeThreads(tree[0]!).map((thread) => thread.threadId)).toEqual(["grandchild", "child"]);
    expect([subtreeBusy(tree[0]!), subtreeBusy(tree[1]!)]).toEqual([true, false]);
    // A cycle ends the walk instead of looping.
    const looped = threadShell({ threadId: "root", parentThreadId: "grandchild", relationship: "subagent" });
    expect(
      subtreeThreads(descendantsOf([looped, child, grandchild], "root")[0]!).map((thread) => thread.threadId),
    ).toEqual(["grandchild", "child"]);
  });

  it("groups Subagents under their parents, orders by activity, and finds every thread's children in one pass", () => {
    const all = new Map([root, child, grandchild, sibling].map((thread) => [thread.threadId, thread]));
    expect(
      groupByParent([grandchild, child, sibling], all).map((group) => [
        group.parent?.threadId,
        group.children.map((c) => c.threadId),
      ]),
    ).toEqual([
      ["child", ["grandchild"]],
      ["root", ["child", "sibling"]],
    ]);
    const later = threadShell({ threadId: "later", updatedAt: "2026-12-02T10:00:00.000Z" });
    expect(ordered([sibling, later], "activity").map((thread) => thread.threadId)).toEqual(["later", "sibling"]);
    expect(ordered([sibling, later], "newest").map((thread) => thread.threadId)).toEqual(["sibling", "later"]);
    expect(
      [...childrenByParent([root, child, grandchild, sibling, fork]).entries()].map(([parent, children]) => [
        parent,
        children.map((c) => c.threadId),
      ]),
    ).toEqual([
      ["root", ["child", "sibling"]],
      ["child", ["grandchild"]],
    ]);
  });
});
