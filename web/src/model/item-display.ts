import type { TimelineItem, UsageTotals } from "../api/types.js";

/**
 * Why a failed item failed, when the server says (a child's row carries its failed turn's error:
 * a capacity or quota limit, a provider error), else null.
 */
export function failureReason(item: TimelineItem): string | null {
  if (item.status !== "failed") return null;
  const error = item.details.error as { message?: unknown } | null | undefined;
  return typeof error?.message === "string" && error.message !== "" ? error.message : null;
}

/**
 * Why each failed child of a thread failed, by child thread id, read from the thread's own rows
 * for its children (delegated tasks and router children).
 */
export function childFailureReasons(items: readonly TimelineItem[]): ReadonlyMap<string, string> {
  const reasons = new Map<string, string>();
  for (const item of items) {
    const childThreadId = item.details.childThreadId;
    const reason = item.kind === "subagent" ? failureReason(item) : null;
    if (typeof childThreadId === "string" && reason !== null) reasons.set(childThreadId, reason);
  }
  return reasons;
}

/** How many lines of a tool's output show before "Show all". */
export const OUTPUT_PREVIEW_LINES = 12;

/** The command line a command tool call ran, when its arguments name one. */
export function commandLine(item: TimelineItem): string | null {
  const input = item.details.input as { command?: unknown; cmd?: unknown } | undefined;
  const command = input?.command ?? input?.cmd;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.every((part) => typeof part === "string")) return command.join(" ");
  return item.details.toolKind === "command" && item.text !== "" ? item.text : null;
}

/** A tool call's arguments as indented JSON (a preview when the view carries only one). */
export function argumentsText(item: TimelineItem): string | null {
  if (item.details.input !== undefined) return JSON.stringify(item.details.input, null, 2);
  return typeof item.details.inputPreview === "string" ? item.details.inputPreview : null;
}

export type DiffLineKind = "file" | "hunk" | "add" | "remove" | "context";

/** A unified diff's lines, each with what it is (for colour and a screen reader's label). */
export function diffLines(diff: string): { readonly kind: DiffLineKind; readonly text: string }[] {
  return diff.split("\n").map((text) => {
    if (text.startsWith("+++") || text.startsWith("---") || text.startsWith("diff ")) return { kind: "file", text };
    if (text.startsWith("@@")) return { kind: "hunk", text };
    if (text.startsWith("+")) return { kind: "add", text };
    if (text.startsWith("-")) return { kind: "remove", text };
    return { kind: "context", text };
  });
}

/** Whether text looks like a unified diff (a file change's output). */
export function looksLikeDiff(text: string): boolean {
  return /^(---|\+\+\+|@@ |diff )/m.test(text) && /^[+-]/m.test(text);
}

/** The first lines of a long text, and how many more there are. */
export function firstLines(text: string, count: number): { readonly shown: string; readonly hidden: number } {
  const lines = text.split("\n");
  if (lines.length <= count) return { shown: text, hidden: 0 };
  return { shown: lines.slice(0, count).join("\n"), hidden: lines.length - count };
}

/** "850 ms", "4.2 s", "2m 05s", "1h 03m": how long something took. */
export function durationText(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1_000);
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** "just now", "42s ago", "5m ago", "3h ago", "2d ago", then the date: when something happened, relative to now. */
export function relativeTime(iso: string, nowMs: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((nowMs - then) / 1_000);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ago`;
  const days = Math.floor(hours / 24);
  if (days < 30) return `${days}d ago`;
  return new Date(then).toISOString().slice(0, 10);
}

/** The exact time, for a hover: "2026-12-06 14:03:21 (local)". */
export function exactTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** Tokens and dollars as far as they are known: unknown usage says so, never 0; a cost that is an estimate or has no price says that too. */
export function usageText(usage: UsageTotals): string {
  if (usage.status === "none") return "no turn ended yet";
  if (usage.status === "unknown" || usage.tokens === null) return "unknown (not reported)";
  const tokens = `${usage.tokens.total.toLocaleString("en")} tokens`;
  const basis = usage.cost.basis;
  const cost =
    usage.cost.usd === null
      ? "unpriced (no price for its model)"
      : `$${usage.cost.usd.toFixed(4)}${basis === "reported" ? "" : basis === "estimated" ? " (estimated from prices)" : ` (${basis})`}`;
  return `${tokens} · ${cost}${usage.status === "partial" ? " · some turns unknown" : ""}`;
}
