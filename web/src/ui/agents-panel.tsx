import { useEffect, useState } from "preact/hooks";
import { api, query } from "../api/client.js";
import {
  ApiError,
  type DelegatedTask,
  type NativeSubagent,
  type RemoteTask,
  type ThreadRow,
  type ThreadUsage,
} from "../api/types.js";
import { usageText } from "../model/item-display.js";
import {
  badgeOf,
  childrenOf,
  descendantsOf,
  elapsed,
  isActive,
  subtreeBusy,
  subtreeThreads,
  type ThreadNode,
} from "../model/thread-tree.js";
import { onLinkClick, pathOf } from "./router.js";
import { ChangesBox } from "./changes-box.js";

/** What the panel reads from the workspace. */
interface TreeContext {
  readonly threads: ReadonlyMap<string, ThreadRow>;
  readonly tasks: ReadonlyMap<string, DelegatedTask>;
  readonly lastReplies: ReadonlyMap<string, string>;
  readonly pending: ReadonlyMap<string, number>;
  readonly failureReasons: ReadonlyMap<string, string>;
  readonly nowMs: number;
  readonly canOperate: boolean;
  readonly onStop: (node: ThreadNode) => void;
  readonly stopping: ReadonlySet<string>;
}

/**
 * A thread's whole tree of agents: its children, their children and so on (router children and
 * delegated tasks), each with provider, model, effort, status, elapsed time, its tree's usage and
 * last reply, live; a row opens its thread and Stop stops it and everything under it. Children
 * delegated to linked environments say where they run ("on <link name>"): their thread lives
 * there, so the row shows its ids and switchyard-thread link instead of opening it.
 * Provider-native sub-agents the harness reported (no thread of their own) are rows marked
 * native, under the thread whose turn spawned them (this one's here, a delegated child's under
 * it), with provider, model, type, status and usage; Switchyard observes them, it cannot stop them.
 * A child in a worktree of its own shows its change set, to read and apply or discard. A failed
 * child says why, when its row in this thread does (a capacity or quota limit, a provider error).
 */
export function AgentsPanel(props: {
  readonly thread: ThreadRow;
  readonly threads: ReadonlyMap<string, ThreadRow>;
  readonly tasks: ReadonlyMap<string, DelegatedTask>;
  readonly lastReplies: ReadonlyMap<string, string>;
  readonly pending: ReadonlyMap<string, number>;
  readonly nativeSubagents: readonly NativeSubagent[];
  /** Why each failed child failed, by child thread id (`childFailureReasons` of this thread's rows). */
  readonly failureReasons: ReadonlyMap<string, string>;
  readonly remoteTasks: readonly RemoteTask[];
  readonly nowMs: number;
  /** The session may change things (operate): it sees Apply and Discard on a child's worktree. */
  readonly canOperate: boolean;
}) {
  const tree = descendantsOf(props.threads.values(), props.thread.threadId);
  const [stopping, setStopping] = useState<ReadonlySet<string>>(new Set());
  const [outcome, setOutcome] = useState<{ readonly text: string; readonly failed: boolean } | null>(null);
  const threadsBelow = tree.flatMap(subtreeThreads);
  // Native sub-agents: this thread's own, and those its delegated children's turns spawned.
  const nativeBelow = threadsBelow.reduce(
    (sum, thread) =>
      sum +
      (thread.delegatedTaskId !== null ? (props.tasks.get(thread.delegatedTaskId)?.nativeSubagents?.length ?? 0) : 0),
    0,
  );
  const count = threadsBelow.length + props.remoteTasks.length + props.nativeSubagents.length + nativeBelow;

  /** Stops a subtree: a delegated task is cancelled (the server stops what it delegated first); a router child is stopped after its own children. */
  const stop = async (node: ThreadNode) => {
    setStopping((set) => new Set(set).add(node.thread.threadId));
    let stopped = 0;
    try {
      const walk = async (current: ThreadNode): Promise<void> => {
        if (!subtreeBusy(current)) return;
        if (current.thread.delegatedTaskId !== null) {
          await api("POST", `/tasks/${encodeURIComponent(current.thread.delegatedTaskId)}/cancel`, {});
          stopped += subtreeThreads(current).filter((thread) => isActive(thread) || thread.queuedRuns > 0).length;
          return;
        }
        for (const child of current.children) await walk(child);
        if (isActive(current.thread) || current.thread.queuedRuns > 0) {
          await api("POST", `/threads/${encodeURIComponent(current.thread.threadId)}/stop`, {});
          stopped += 1;
        }
      };
      await walk(node);
      setOutcome({
        text: `Stopped "${node.thread.title || "Untitled"}" and what ran under it (${stopped} ${stopped === 1 ? "thread" : "threads"}).`,
        failed: false,
      });
    } catch (failure) {
      setOutcome({ text: failure instanceof ApiError ? failure.message : String(failure), failed: true });
    } finally {
      setStopping((set) => {
        const next = new Set(set);
        next.delete(node.thread.threadId);
        return next;
      });
    }
  };

  const context: TreeContext = { ...props, onStop: (node) => void stop(node), stopping };
  return (
    <aside class="agents-panel" aria-labelledby="agents-title">
      <h2 id="agents-title">Agents {count > 0 && <span class="count">{count}</span>}</h2>
      {outcome !== null && (
        <p class={outcome.failed ? "error" : "outcome"} role={outcome.failed ? "alert" : "status"} data-tree-outcome>
          {outcome.text}
        </p>
      )}
      {tree.length === 0 && props.remoteTasks.length === 0 && props.nativeSubagents.length === 0 && (
        <p class="empty">No sub-agents yet.</p>
      )}
      <ul class="agent-list agent-tree" aria-label="Agents under this thread">
        {tree.map((node) => (
          <AgentNode key={node.thread.threadId} node={node} depth={1} context={context} />
        ))}
        {props.remoteTasks.map((task) => (
          <RemoteTaskRow
            key={`${task.environment}:${task.taskId}`}
            task={task}
            nowMs={props.nowMs}
            canOperate={props.canOperate}
          />
        ))}
        {props.nativeSubagents.map((child) => (
          <NativeSubagentRow key={child.itemId} child={child} depth={1} />
        ))}
      </ul>
    </aside>
  );
}

/** A router child's tree usage, read from GET /usage (a delegated task carries its own). */
function useTreeUsage(thread: ThreadRow, task: DelegatedTask | undefined) {
  const [usage, setUsage] = useState<ThreadUsage["subtree"] | null>(null);
  const known = task?.usage !== undefined;
  useEffect(() => {
    if (known) return;
    let cancelled = false;
    void api<ThreadUsage>("GET", `/usage${query({ threadId: thread.threadId })}`)
      .then((read) => !cancelled && setUsage(read.subtree))
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
    // Usage changes when a turn ends: re-read then.
  }, [thread.threadId, thread.status, thread.latestRunId, known]);
  return task?.usage?.subtree ?? usage;
}

function AgentNode(props: { readonly node: ThreadNode; readonly depth: number; readonly context: TreeContext }) {
  const { node, context } = props;
  const child = node.thread;
  const task = child.delegatedTaskId !== null ? context.tasks.get(child.delegatedTaskId) : undefined;
  const badge = badgeOf(
    child,
    childrenOf(context.threads.values(), child.threadId),
    context.pending.get(child.threadId) ?? 0,
  );
  const reply = task?.summary ?? task?.latestTerminalSummary ?? context.lastReplies.get(child.threadId) ?? null;
  const failed = child.status === "failed" || task?.status === "failed";
  const reason = failed ? (context.failureReasons.get(child.threadId) ?? null) : null;
  const usage = useTreeUsage(child, task);
  const route = { page: "thread", threadId: child.threadId } as const;
  const busy = subtreeBusy(node);
  const [open, setOpen] = useState(true);
  const below = subtreeThreads(node).length - 1;
  return (
    <li class={`agent-node depth-${Math.min(props.depth, 4)}`}>
      <div class="agent-row" data-child-thread-id={child.threadId} data-depth={props.depth}>
        <div class="agent-heading">
          {node.children.length > 0 && (
            <button
              type="button"
              class="tree-toggle"
              aria-expanded={open}
              aria-label={`${open ? "Hide" : "Show"} the ${below} agents under ${child.title || "Untitled"}`}
              onClick={() => setOpen(!open)}
            >
              <span aria-hidden="true">{open ? "▾" : "▸"}</span>
            </button>
          )}
          <a href={pathOf(route)} onClick={onLinkClick(route)}>
            <span class="agent-title">{child.title || "Untitled"}</span>
            <span class={`badge badge-${badge.replace(/ /g, "-")}`}>{badge}</span>
          </a>
          {context.canOperate && busy && (
            <button
              type="button"
              class="stop-subtree"
              disabled={context.stopping.has(child.threadId)}
              onClick={() => context.onStop(node)}
              aria-label={`Stop ${child.title || "Untitled"}${below > 0 ? ` and the ${below} agents under it` : ""}`}
              title="Stops this agent and everything it started"
            >
              Stop
            </button>
          )}
        </div>
        <dl class="agent-facts">
          <dt>Provider</dt>
          <dd>{child.providerInstanceId}</dd>
          <dt>Model</dt>
          <dd>{child.model ?? "default"}</dd>
          <dt>Effort</dt>
          <dd>{child.effort ?? "default"}</dd>
          <dt>Elapsed</dt>
          <dd>{elapsed(child.createdAt, isActive(child) ? context.nowMs : Date.parse(child.updatedAt))}</dd>
          <dt>Usage</dt>
          <dd title="Its whole tree: its own turns and its sub-agents'" data-usage>
            {usage !== null ? usageText(usage) : "reading…"}
          </dd>
          <dt>Kind</dt>
          <dd>{child.delegatedTaskId !== null ? "delegated task" : "router child"}</dd>
        </dl>
        {reason !== null && (
          <p class="failure-reason" data-failure-reason>
            Failed: {reason}
          </p>
        )}
        {/* A failed task's summary is often just its error: said once, as the reason. */}
        {reply !== null && !(reason !== null && reply.includes(reason)) && <p class="last-reply">{reply}</p>}
        {task?.changes != null && (
          <ChangesBox
            threadId={child.threadId}
            workspace={task.changes}
            canOperate={context.canOperate}
            childActive={isActive(child)}
          />
        )}
      </div>
      {(node.children.length > 0 || (task?.nativeSubagents ?? []).length > 0) && open && (
        <ul class="agent-children">
          {node.children.map((grandchild) => (
            <AgentNode key={grandchild.thread.threadId} node={grandchild} depth={props.depth + 1} context={context} />
          ))}
          {(task?.nativeSubagents ?? []).map((native) => (
            <NativeSubagentRow key={native.itemId} child={native} depth={props.depth + 1} />
          ))}
        </ul>
      )}
    </li>
  );
}

/** A native sub-agent's usage: a part of its parent's turn, which the totals already count. */
function nativeUsageText(usage: NativeSubagent["usage"]): string {
  if (usage === null) return "not reported";
  const cost = usage.costUsd === null ? "" : ` · $${usage.costUsd.toFixed(4)}`;
  return `${usage.tokens.total.toLocaleString("en")} tokens${cost} (part of its parent's turn)`;
}

/** A provider-native sub-agent: observed under the turn that spawned it, no thread, no Stop of its own. */
function NativeSubagentRow(props: { readonly child: NativeSubagent; readonly depth: number }) {
  const { child } = props;
  return (
    <li
      class={`agent-row native depth-${Math.min(props.depth, 4)}`}
      data-native-subagent={child.itemId}
      data-depth={props.depth}
    >
      <div class="agent-heading">
        <span class="agent-title">{child.title || "Sub-agent"}</span>
        <span class={`badge badge-${child.status}`}>{child.status}</span>
        <span
          class="badge badge-native"
          title="The provider's own sub-agent: Switchyard observes it, it does not own it"
        >
          native
        </span>
      </div>
      <dl class="agent-facts">
        <dt>Provider</dt>
        <dd>{child.providerInstanceId ?? "unknown"}</dd>
        <dt>Model</dt>
        <dd>{child.model ?? "not reported"}</dd>
        <dt>Type</dt>
        <dd>{child.agentType ?? "not reported"}</dd>
        <dt>Usage</dt>
        <dd data-native-usage>{nativeUsageText(child.usage)}</dd>
        <dt>Kind</dt>
        <dd>the provider's own sub-agent (observed; no thread)</dd>
      </dl>
      {child.task !== null && <p class="hint native-task">{child.task}</p>}
      {child.summary !== null && <p class="last-reply">{child.summary}</p>}
    </li>
  );
}

/** A child on a linked environment: where it runs, its status there, its ids and link (it is not a thread here). */
function RemoteTaskRow(props: { readonly task: RemoteTask; readonly nowMs: number; readonly canOperate: boolean }) {
  const { task } = props;
  const active = task.status === "queued" || task.status === "running" || task.status === "waiting";
  const [stopped, setStopped] = useState<string | null>(null);
  const cancel = async () => {
    try {
      await api("POST", `/tasks/${encodeURIComponent(task.taskId)}/cancel`, {});
      setStopped(`Stop sent to ${task.environment}.`);
    } catch (failure) {
      setStopped(failure instanceof ApiError ? failure.message : String(failure));
    }
  };
  return (
    <li class="agent-row remote" data-remote-task-id={task.taskId} data-environment={task.environment}>
      <div class="agent-heading">
        <span class="agent-title">{task.title || "Untitled"}</span>
        <span class={`badge badge-${task.status}`} title={task.problem?.message}>
          {task.status}
        </span>
        {props.canOperate && active && (
          <button
            type="button"
            class="stop-subtree"
            onClick={() => void cancel()}
            aria-label={`Stop ${task.title || "Untitled"} on ${task.environment}`}
          >
            Stop
          </button>
        )}
      </div>
      <p class="agent-where">on {task.environment}</p>
      <dl class="agent-facts">
        <dt>Provider</dt>
        <dd>{task.providerInstanceId ?? "unknown"}</dd>
        <dt>Model</dt>
        <dd>{task.model ?? "default"}</dd>
        <dt>Elapsed</dt>
        <dd>
          {elapsed(task.createdAt, active || task.finishedAt === null ? props.nowMs : Date.parse(task.finishedAt))}
        </dd>
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
      {stopped !== null && <p class="hint">{stopped}</p>}
      {task.summary !== null && <p class="last-reply">{task.summary}</p>}
    </li>
  );
}
