import type { PendingRequest, ThreadRow } from "../api/types.js";

/** What the sidebar shows for a thread's state, in the words a person looks for. */
export type ThreadBadge =
  | "needs attention"
  | "running"
  | "waiting on children"
  | "failed"
  | "queued"
  | "idle"
  | "completed"
  | "cancelled"
  | "interrupted";

const ACTIVE = new Set(["queued", "starting", "running", "waiting"]);

/** Whether a thread has work under way (its own run, or a run waiting on a person). */
export function isActive(thread: ThreadRow): boolean {
  return ACTIVE.has(thread.status);
}

/**
 * A thread's badge: a pending question or approval (or a run waiting on one) first, since a
 * person must act; then its own run; a thread whose turn ended while children still work is
 * waiting on them.
 */
export function badgeOf(thread: ThreadRow, children: readonly ThreadRow[], pending: number): ThreadBadge {
  if (pending > 0 || thread.status === "waiting") return "needs attention";
  if (thread.status === "running" || thread.status === "starting") return "running";
  if (thread.status === "queued") return "queued";
  if (children.some(isActive)) return "waiting on children";
  if (thread.status === "failed") return "failed";
  return thread.status;
}

/** The sidebar's sections of one project: the main list, then the collapsible ones. */
export interface SidebarSections {
  readonly main: readonly ThreadRow[];
  readonly snoozed: readonly ThreadRow[];
  readonly settled: readonly ThreadRow[];
  readonly subagents: readonly ThreadRow[];
}

function newestFirst(a: ThreadRow, b: ThreadRow): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.threadId < b.threadId ? 1 : -1;
}

/**
 * Splits a project's threads into sections, each newest first: children (delegated tasks and
 * router children) leave the main list for Subagents; a fork is a conversation of its own and
 * stays in the main list; a settled thread goes to Settled and a snoozed one to Snoozed,
 * whatever its parentage.
 */
export function sidebarSections(threads: Iterable<ThreadRow>): SidebarSections {
  const main: ThreadRow[] = [];
  const snoozed: ThreadRow[] = [];
  const settled: ThreadRow[] = [];
  const subagents: ThreadRow[] = [];
  for (const thread of threads) {
    if (thread.settledAt !== undefined && thread.settledAt !== null) settled.push(thread);
    else if (thread.snoozed) snoozed.push(thread);
    else if (isChild(thread)) subagents.push(thread);
    else main.push(thread);
  }
  return {
    main: main.sort(newestFirst),
    snoozed: snoozed.sort(newestFirst),
    settled: settled.sort(newestFirst),
    subagents: subagents.sort(newestFirst),
  };
}

/** Whether a thread works for a parent (a router child or a delegated task); a fork names its source as parent but works for no one. */
export function isChild(thread: ThreadRow): boolean {
  return thread.parentThreadId !== null && thread.relationship !== "fork";
}

/** The direct children of a thread, oldest first (the order they were spawned in); its forks are not children. */
export function childrenOf(threads: Iterable<ThreadRow>, parentThreadId: string): ThreadRow[] {
  return [...threads]
    .filter((thread) => isChild(thread) && thread.parentThreadId === parentThreadId)
    .sort((a, b) => -newestFirst(a, b));
}

/** Every thread's direct children at once (what the sidebar's badges need), keyed by parent. */
export function childrenByParent(threads: Iterable<ThreadRow>): Map<string, ThreadRow[]> {
  const byParent = new Map<string, ThreadRow[]>();
  for (const thread of threads) {
    if (!isChild(thread) || thread.parentThreadId === null) continue;
    const siblings = byParent.get(thread.parentThreadId);
    if (siblings === undefined) byParent.set(thread.parentThreadId, [thread]);
    else siblings.push(thread);
  }
  return byParent;
}

/**
 * The chain of parents above a thread, root first (for the breadcrumb); stops at a fork (its
 * source is where it came from, not a parent), a cycle or a parent not loaded.
 */
export function ancestorsOf(threads: ReadonlyMap<string, ThreadRow>, thread: ThreadRow): ThreadRow[] {
  const chain: ThreadRow[] = [];
  const seen = new Set([thread.threadId]);
  let parentId = isChild(thread) ? thread.parentThreadId : null;
  while (parentId !== null && !seen.has(parentId)) {
    const parent = threads.get(parentId);
    if (parent === undefined) break;
    chain.unshift(parent);
    seen.add(parentId);
    parentId = isChild(parent) ? parent.parentThreadId : null;
  }
  return chain;
}

/** Pending requests per thread. */
export function pendingByThread(requests: Iterable<PendingRequest>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests)
    if (request.status === "pending") counts.set(request.threadId, (counts.get(request.threadId) ?? 0) + 1);
  return counts;
}

/** "12s", "4m 05s", "2h 03m": how long a thread has been (or was) at work. */
export function elapsed(fromIso: string, toMs: number): string {
  const seconds = Math.max(0, Math.floor((toMs - Date.parse(fromIso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** What the send policy did, in words: "steered", or with why when it did less ("queued: provider cannot steer"). */
export function deliveryText(result: {
  readonly action: string;
  readonly degraded: boolean;
  readonly reason: string | null;
}): string {
  const done =
    (
      {
        start: "started",
        queue: "queued",
        steer: "steered",
        restart: "restarted",
        interrupt_then_queue_first: "interrupted, then queued first",
      } as Record<string, string>
    )[result.action] ?? result.action;
  return result.degraded && result.reason !== null && result.reason !== "" ? `${done}: ${result.reason}` : done;
}

/** A thread and its children, grandchildren… (router children and delegated tasks; never forks). */
export interface ThreadNode {
  readonly thread: ThreadRow;
  readonly children: readonly ThreadNode[];
}

/** The tree of a thread's descendants, each level oldest first; stops at a cycle or at 32 levels. */
export function descendantsOf(threads: Iterable<ThreadRow>, rootId: string): ThreadNode[] {
  const byParent = new Map<string, ThreadRow[]>();
  for (const thread of threads) {
    if (!isChild(thread) || thread.parentThreadId === null) continue;
    const siblings = byParent.get(thread.parentThreadId) ?? [];
    siblings.push(thread);
    byParent.set(thread.parentThreadId, siblings);
  }
  const seen = new Set([rootId]);
  const build = (parentId: string, depth: number): ThreadNode[] =>
    depth > 32
      ? []
      : (byParent.get(parentId) ?? [])
          .filter((child) => !seen.has(child.threadId) && seen.add(child.threadId) !== undefined)
          .sort((a, b) => -newestFirst(a, b))
          .map((child) => ({ thread: child, children: build(child.threadId, depth + 1) }));
  return build(rootId, 0);
}

/** Every thread of a subtree, deepest first (the order a stop goes in: children before their parent). */
export function subtreeThreads(node: ThreadNode): ThreadRow[] {
  return [...node.children.flatMap(subtreeThreads), node.thread];
}

/** Whether anything in a subtree runs or waits to run (what Stop would stop). */
export function subtreeBusy(node: ThreadNode): boolean {
  return subtreeThreads(node).some((thread) => isActive(thread) || (thread.queuedRuns > 0 && thread.stopped !== true));
}

/** Subagents grouped under their parents: each parent (newest child first) with its children. */
export function groupByParent(
  children: readonly ThreadRow[],
  threads: ReadonlyMap<string, ThreadRow>,
): { readonly parentId: string; readonly parent: ThreadRow | null; readonly children: readonly ThreadRow[] }[] {
  const groups = new Map<string, ThreadRow[]>();
  for (const child of children) {
    const parentId = child.parentThreadId ?? "";
    groups.set(parentId, [...(groups.get(parentId) ?? []), child]);
  }
  return [...groups.entries()].map(([parentId, members]) => ({
    parentId,
    parent: threads.get(parentId) ?? null,
    children: members,
  }));
}

/** How the sidebar orders a section: by when a thread was made, or by its latest activity. */
export type SidebarOrder = "newest" | "activity";

/** Orders threads for the sidebar (sidebarSections gives them newest first). */
export function ordered(threads: readonly ThreadRow[], order: SidebarOrder): readonly ThreadRow[] {
  if (order === "newest") return threads;
  return [...threads].sort((a, b) =>
    a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : newestFirst(a, b),
  );
}
