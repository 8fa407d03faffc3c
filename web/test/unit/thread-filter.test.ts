import { describe, expect, it } from "vitest";
import {
  isFiltering,
  matchesFilter,
  NO_FILTER,
  providersOf,
  statusFilterOf,
  STATUS_FILTERS,
} from "../../src/model/thread-filter.js";
import type { ThreadBadge } from "../../src/model/thread-tree.js";
import { threadShell } from "./thread-fixture.js";

describe("the sidebar's filters", () => {
  const planner = threadShell({ threadId: "planner", title: "Plan the release", providerInstanceId: "codex" });
  const reviewer = threadShell({ threadId: "reviewer", title: "Review the diff", providerInstanceId: "claude" });

  it("passes everything when nothing is chosen", () => {
    expect(isFiltering(NO_FILTER)).toBe(false);
    expect(matchesFilter(planner, "completed", NO_FILTER)).toBe(true);
  });

  it("combines the title fragment, the status and the provider", () => {
    const filter = { text: " plan ", status: "completed" as const, provider: "codex" };
    expect(isFiltering(filter)).toBe(true);
    expect(matchesFilter(planner, "completed", filter)).toBe(true);
    expect(matchesFilter(planner, "running", filter)).toBe(false);
    expect(matchesFilter(reviewer, "completed", { ...filter, text: "" })).toBe(false);
    expect(matchesFilter(reviewer, "completed", { ...filter, text: "", provider: "claude" })).toBe(true);
  });

  it("groups the badges a person means by each status choice", () => {
    const passing = (value: string) =>
      (
        [
          "needs attention",
          "running",
          "waiting on children",
          "failed",
          "queued",
          "idle",
          "completed",
          "cancelled",
          "interrupted",
        ] as ThreadBadge[]
      ).filter((badge) => matchesFilter(planner, badge, { ...NO_FILTER, status: statusFilterOf(value) }));
    expect(passing("active")).toEqual(["needs attention", "running", "waiting on children", "queued"]);
    expect(passing("stopped")).toEqual(["cancelled", "interrupted"]);
    expect(passing("failed")).toEqual(["failed"]);
    // An unknown value (an old bookmark, a typo) means no status filter, not an empty list.
    expect(statusFilterOf("nonsense")).toBe("any");
    expect(passing("nonsense")).toHaveLength(9);
    expect(new Set(STATUS_FILTERS.map((choice) => choice.value)).size).toBe(STATUS_FILTERS.length);
  });

  it("offers the providers the threads run on, once each, sorted", () => {
    expect(providersOf([planner, reviewer, threadShell({ providerInstanceId: "codex" })])).toEqual(["claude", "codex"]);
  });
});
