import type { DelegatedTask, RemoteTask, ThreadShell, TimelineItem, UsageTotals } from "../api/types.js";
import { badgeOf, childrenOf, elapsed, isActive } from "../model/thread-tree.js";
import { onLinkClick, pathOf } from "./router.js";
import { ChangesBox } from "./changes-box.js";

/**
 * The children of a thread (delegated tasks and router children) with provider, model,
 * effort, status, elapsed time, usage and last reply, live; each row opens the child.
 * Children delegated to linked environments say where they run ("on <link name>"): their thread
 * lives there, so the row shows its ids and switchyard-thread link instead of opening it.
 * Provider-native sub-agents the harness reported (no thread of their own) are plain rows.
 * A child in a worktree of its own shows its change set, to read and apply or discard.
 */
export function AgentsPanel(props: {
  readonly thread: ThreadShell;
  readonly threads: ReadonlyMap<string, ThreadShell>;
  readonly tasks: ReadonlyMap<string, DelegatedTask>;
  readonly lastReplies: ReadonlyMap<string, string>;
  readonly pending: ReadonlyMap<string, number>;
  readonly nativeSubagents: readonly TimelineItem[];
  readonly remoteTasks: readonly RemoteTask[];
  readonly nowMs: number;
  /** The session may change things (operate): it sees Apply and Discard on a child's worktree. */
  readonly canOperate: boolean;
}) {
  const children = childrenOf(props.threads.values(), props.thread.threadId);
  return (
    <aside class="agents-panel" aria-labelledby="agents-title">
      <h2 id="agents-title">Agents</h2>
      {children.length === 0 && props.remoteTasks.length === 0 && props.nativeSubagents.length === 0 && <p class="empty">No sub-agents yet.</p>}
      <ul class="agent-list">
        {children.map((child) => {
          const task = child.delegatedTaskId !== null ? props.tasks.get(child.delegatedTaskId) : undefined;
          const badge = badgeOf(child, childrenOf(props.threads.values(), child.threadId), props.pending.get(child.threadId) ?? 0);
          const reply = task?.summary ?? task?.latestTerminalSummary ?? props.lastReplies.get(child.threadId) ?? null;
          const route = { page: "thread", threadId: child.threadId } as const;
          return (
            <li key={child.threadId} class="agent-row" data-child-thread-id={child.threadId}>
              <a href={pathOf(route)} onClick={onLinkClick(route)}>
                <span class="agent-title">{child.title || "Untitled"}</span>
                <span class={`badge badge-${badge.replace(/ /g, "-")}`}>{badge}</span>
              </a>
              <dl class="agent-facts">
                <dt>Provider</dt>
                <dd>{child.providerInstanceId}</dd>
                <dt>Model</dt>
                <dd>{child.model ?? "default"}</dd>
                <dt>Effort</dt>
                <dd>{child.effort ?? "default"}</dd>
                <dt>Elapsed</dt>
                <dd>{elapsed(child.createdAt, isActive(child) ? props.nowMs : Date.parse(child.updatedAt))}</dd>
                <dt>Usage</dt>
                <dd title="The child's whole tree: its own turns and its sub-agents'">{task?.usage !== undefined ? usageText(task.usage.subtree) : "on the child's tree (GET /api/v1/usage)"}</dd>
                <dt>Kind</dt>
                <dd>{child.delegatedTaskId !== null ? "delegated task" : "router child"}</dd>
              </dl>
              {reply !== null && <p class="last-reply">{reply}</p>}
              {task?.changes != null && <ChangesBox threadId={child.threadId} workspace={task.changes} canOperate={props.canOperate} childActive={isActive(child)} />}
            </li>
          );
        })}
        {props.remoteTasks.map((task) => (
          <RemoteTaskRow key={`${task.environment}:${task.taskId}`} task={task} nowMs={props.nowMs} />
        ))}
        {props.nativeSubagents.map((item) => (
          <li key={item.itemId} class="agent-row native" data-native-subagent={item.itemId}>
            <span class="agent-title">{item.text || "Sub-agent"}</span>
            <span class="hint">the provider's own sub-agent ({item.status}); no thread</span>
          </li>
        ))}
      </ul>
    </aside>
  );
}

/** A child on a linked environment: where it runs, its status there, its ids and link (it is not a thread here). */
function RemoteTaskRow(props: { readonly task: RemoteTask; readonly nowMs: number }) {
  const { task } = props;
  const active = task.status === "queued" || task.status === "running" || task.status === "waiting";
  return (
    <li class="agent-row remote" data-remote-task-id={task.taskId} data-environment={task.environment}>
      <div class="agent-heading">
        <span class="agent-title">{task.title || "Untitled"}</span>
        <span class={`badge badge-${task.status}`} title={task.problem?.message}>
          {task.status}
        </span>
      </div>
      <p class="agent-where">on {task.environment}</p>
      <dl class="agent-facts">
        <dt>Provider</dt>
        <dd>{task.providerInstanceId ?? "unknown"}</dd>
        <dt>Model</dt>
        <dd>{task.model ?? "default"}</dd>
        <dt>Elapsed</dt>
        <dd>{elapsed(task.createdAt, active || task.finishedAt === null ? props.nowMs : Date.parse(task.finishedAt))}</dd>
        <dt>Task</dt>
        <dd>{task.taskId}</dd>
        <dt>Thread</dt>
        <dd>
          <code class="thread-link">{task.childThreadLink}</code>
        </dd>
        <dt>Kind</dt>
        <dd>delegated task on a linked environment</dd>
      </dl>
      {task.problem !== null && (
        <p class="hint remote-problem">
          No status from {task.environment} ({task.problem.reason}): {task.problem.message}
        </p>
      )}
      {task.summary !== null && <p class="last-reply">{task.summary}</p>}
    </li>
  );
}

/** Tokens and dollars as far as they are known; unknown usage says so, never 0. */
export function usageText(usage: UsageTotals): string {
  if (usage.status === "none") return "no turn ended yet";
  if (usage.status === "unknown" || usage.tokens === null) return "unknown (not reported)";
  const tokens = `${usage.tokens.total.toLocaleString("en")} tokens`;
  const cost = usage.cost.usd === null ? "unpriced" : `$${usage.cost.usd.toFixed(4)}${usage.cost.basis === "reported" ? "" : ` (${usage.cost.basis})`}`;
  return `${tokens} · ${cost}${usage.status === "partial" ? " · some turns unknown" : ""}`;
}
