import type { ThreadRow } from "../api/types.js";
import type { ThreadBadge } from "./thread-tree.js";

/** The sidebar's status choices, in the badge words a person sees on each row. */
export const STATUS_FILTERS = [
  { value: "any", label: "Any status", badges: null },
  { value: "active", label: "At work", badges: ["needs attention", "running", "waiting on children", "queued"] },
  { value: "attention", label: "Needs attention", badges: ["needs attention"] },
  { value: "running", label: "Running", badges: ["running", "waiting on children", "queued"] },
  { value: "completed", label: "Completed", badges: ["completed"] },
  { value: "failed", label: "Failed", badges: ["failed"] },
  { value: "stopped", label: "Stopped", badges: ["cancelled", "interrupted"] },
  { value: "idle", label: "Idle", badges: ["idle"] },
] as const satisfies readonly { value: string; label: string; badges: readonly ThreadBadge[] | null }[];

export type StatusFilter = (typeof STATUS_FILTERS)[number]["value"];

/** What the sidebar shows: a title fragment, a status choice, a provider instance (null: any). */
export interface ThreadFilter {
  readonly text: string;
  readonly status: StatusFilter;
  readonly provider: string | null;
}

export const NO_FILTER: ThreadFilter = { text: "", status: "any", provider: null };

export function isFiltering(filter: ThreadFilter): boolean {
  return filter.text.trim() !== "" || filter.status !== "any" || filter.provider !== null;
}

export function statusFilterOf(value: string): StatusFilter {
  return STATUS_FILTERS.find((choice) => choice.value === value)?.value ?? "any";
}

/** Whether a thread, showing `badge`, passes every part of the filter. */
export function matchesFilter(thread: ThreadRow, badge: ThreadBadge, filter: ThreadFilter): boolean {
  const needle = filter.text.trim().toLowerCase();
  if (needle !== "" && !thread.title.toLowerCase().includes(needle)) return false;
  if (filter.provider !== null && thread.providerInstanceId !== filter.provider) return false;
  const badges: readonly ThreadBadge[] | null = STATUS_FILTERS.find((choice) => choice.value === filter.status)!.badges;
  return badges === null || badges.includes(badge);
}

/** The provider instances the listed threads run on, for the provider choice (sorted). */
export function providersOf(threads: Iterable<ThreadRow>): string[] {
  return [...new Set([...threads].map((thread) => thread.providerInstanceId))].sort();
}
