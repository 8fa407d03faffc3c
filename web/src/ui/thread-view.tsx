import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, query } from "../api/client.js";
import {
  ApiError,
  type ForkResult,
  type RemoteTask,
  type RunView,
  type SessionView,
  type ThreadRead,
  type ThreadShell,
  type ThreadUsage,
  type NativeSubagent,
  type TimelineItem,
} from "../api/types.js";
import { newestAnswers } from "../model/fresh-reads.js";
import { childFailureReasons, usageText } from "../model/item-display.js";
import type { LiveItem } from "../model/live-output.js";
import { threadActions, type ActionState } from "../model/thread-actions.js";
import { ancestorsOf, badgeOf, childrenOf, elapsed, isActive } from "../model/thread-tree.js";
import type { Workspace } from "./workspace.js";
import { AgentsPanel } from "./agents-panel.js";
import { Composer } from "./composer.js";
import { RenameForm } from "./rename-form.js";
import { SnoozeMenu } from "./snooze-menu.js";
import { Markdown } from "./markdown.js";
import { RelativeTime } from "./relative-time.js";
import { RequestCard } from "./request-card.js";
import { onLinkClick, pathOf } from "./router.js";
import { TimelineEntry } from "./timeline-item.js";

type View = "messages" | "activity";
const PAGE = 50;
const NEWEST = Number.MAX_SAFE_INTEGER;
/**
 * The most items the timeline holds at once: scrolling further loads the next page and lets go
 * of the farthest one, so a 5,000-item thread never puts 5,000 cards in the page.
 */
export const TIMELINE_WINDOW = 300;

interface Timeline {
  readonly threadId: string;
  readonly view: View;
  readonly items: readonly TimelineItem[];
  /** Read before this position for older items; null at the oldest. */
  readonly earlierPosition: number | null;
  /** Read after this position for newer items the window let go of; null when it holds the newest. */
  readonly laterPosition: number | null;
}

function merge(items: readonly TimelineItem[], more: readonly TimelineItem[]): TimelineItem[] {
  const byPosition = new Map(items.map((item) => [item.position, item]));
  for (const item of more) byPosition.set(item.position, item);
  return [...byPosition.values()].sort((a, b) => a.position - b.position);
}

/** The window after older items came in at the top: the newest beyond it are let go (and read again on the way down). */
function keepOldest(
  items: readonly TimelineItem[],
  earlierPosition: number | null,
  laterPosition: number | null,
): Pick<Timeline, "items" | "earlierPosition" | "laterPosition"> {
  if (items.length <= TIMELINE_WINDOW) return { items, earlierPosition, laterPosition };
  const kept = items.slice(0, TIMELINE_WINDOW);
  return { items: kept, earlierPosition, laterPosition: kept[kept.length - 1]!.position };
}

/** The window after newer items came in at the bottom: the oldest beyond it are let go. */
function keepNewest(
  items: readonly TimelineItem[],
  earlierPosition: number | null,
  laterPosition: number | null,
): Pick<Timeline, "items" | "earlierPosition" | "laterPosition"> {
  if (items.length <= TIMELINE_WINDOW) return { items, earlierPosition, laterPosition };
  const kept = items.slice(items.length - TIMELINE_WINDOW);
  return { items: kept, earlierPosition: kept[0]!.position, laterPosition };
}

/** Text the agent is writing now: shown as it streams, replaced by the item once it completes. */
function LiveEntry(props: { readonly live: LiveItem }) {
  const { live } = props;
  if (live.kind === "reasoning") {
    return (
      <li class="item item-activity kind-reasoning streaming" data-streaming={live.itemId}>
        <details class="reasoning">
          <summary>
            <span class="item-who">reasoning</span> <span class="hint">thinking…</span>
          </summary>
          <div class="item-text plain">{live.text}</div>
        </details>
      </li>
    );
  }
  return (
    <li class="item item-assistant kind-assistant_message streaming" data-streaming={live.itemId} aria-busy="true">
      <div class="item-head">
        <span class="item-who">assistant</span>
        <span class="writing">writing…</span>
      </div>
      <Markdown class="item-text" text={live.text} />
    </li>
  );
}

/** A thread action's button, disabled (saying why) when the thread's state gives it nothing to do. */
function ActionButton(props: {
  readonly label: string;
  readonly state: ActionState;
  readonly onClick: () => void;
  readonly hint?: string;
  readonly quiet?: boolean;
}) {
  return (
    <button
      type="button"
      class={props.quiet === true ? "quiet" : undefined}
      onClick={props.onClick}
      disabled={!props.state.enabled}
      title={props.state.why ?? props.hint}
    >
      {props.label}
    </button>
  );
}

/** What a new fork's page says first: how its conversation travelled. */
function forkNotice(fork: ForkResult, sourceTitle: string): string {
  const how =
    fork.strategy === "native"
      ? "the provider copied the conversation"
      : `the conversation goes with its first message as context (${fork.reason})`;
  return `Forked from "${sourceTitle || "Untitled"}": ${how}. Send a message to continue.`;
}

/** A thread: breadcrumb to its parents, timeline (messages or activity, older items on scroll), composer and actions, and its Agents panel. */
export function ThreadView(props: {
  readonly threadId: string;
  readonly workspace: Workspace;
  readonly session: SessionView;
  readonly pending: ReadonlyMap<string, number>;
  /** A message the page opens with (a fork's, saying how it was made; a new thread's, saying what it runs on). */
  readonly notice: string | null;
  /** Opens another thread with a notice (a fork just made). */
  readonly onOpened: (threadId: string, notice: string) => void;
}) {
  const { workspace, threadId } = props;
  const [view, setView] = useState<View>("messages");
  const [timeline, setTimeline] = useState<Timeline | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The view is keyed by thread, so an outcome never outlives its thread. A refusal is an
  // error, never shown in the success colour.
  const [actionOutcome, setActionOutcome] = useState<{ readonly text: string; readonly failed: boolean } | null>(
    props.notice === null ? null : { text: props.notice, failed: false },
  );
  const [forking, setForking] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [nativeSubagents, setNativeSubagents] = useState<readonly NativeSubagent[]>([]);
  const [failureReasons, setFailureReasons] = useState<ReadonlyMap<string, string>>(new Map());
  const [remoteTasks, setRemoteTasks] = useState<readonly RemoteTask[]>([]);
  const [now, setNow] = useState(Date.now());
  const [runs, setRuns] = useState<readonly RunView[]>([]);
  const [usage, setUsage] = useState<ThreadUsage["subtree"] | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const loading = useRef(false);
  /** An item to keep where it was on the screen across a change of the window (its position and its distance from the top). */
  const anchor = useRef<{ readonly position: number; readonly offset: number } | null>(null);
  const stickToBottom = useRef(true);
  // Pushed changes start overlapping reads: an older answer arriving late must not undo a newer one.
  const pushedReads = useRef(newestAnswers());
  // Its shell, read when the thread opens (the lists hold rows, which lack its modes and workspace).
  const thread: ThreadShell | undefined = workspace.shells.get(threadId);
  const version = workspace.timelineVersions.get(threadId) ?? 0;
  const remoteVersion = workspace.remoteTaskVersions.get(threadId) ?? 0;
  const live = workspace.liveOutput.get(threadId) ?? [];
  const path = `/threads/${encodeURIComponent(threadId)}`;
  const readRunsAndUsage = (read: ThreadRead) => {
    setRuns(read.runs);
    if (read.usage !== undefined) setUsage(read.usage.subtree);
  };

  // The first page: the newest items.
  useEffect(() => {
    let cancelled = false;
    setTimeline(null);
    setError(null);
    stickToBottom.current = true;
    // A thread listed but not yet read whole: its shell is read beside the first page, not after it.
    if (!workspace.shells.has(threadId)) void workspace.refreshThread(threadId);
    void api<ThreadRead>("GET", `${path}${query({ view, limit: PAGE, beforePosition: NEWEST })}`)
      .then((read) => {
        if (cancelled) return;
        setTimeline({ threadId, view, items: read.items, earlierPosition: read.earlierPosition, laterPosition: null });
        readRunsAndUsage(read);
        void workspace.refreshThread(threadId);
      })
      .catch(
        (failure: unknown) => !cancelled && setError(failure instanceof ApiError ? failure.message : String(failure)),
      );
    return () => {
      cancelled = true;
    };
  }, [threadId, view]);

  // Pushed changes: read what is newer than the last item shown (and re-read the last one, which may have grown), when the window holds the newest.
  useEffect(() => {
    if (version === 0 || timeline === null || timeline.threadId !== threadId) return;
    const after = timeline.items.length > 0 ? timeline.items[timeline.items.length - 1]!.position - 1 : -1;
    const newest = pushedReads.current();
    void api<ThreadRead>("GET", `${path}${query({ view, limit: 200, afterPosition: after })}`).then((read) => {
      if (!newest()) return;
      readRunsAndUsage(read);
      setTimeline((current) => {
        if (
          current === null ||
          current.threadId !== threadId ||
          current.view !== view ||
          current.laterPosition !== null
        )
          return current;
        return { ...current, ...keepNewest(merge(current.items, read.items), current.earlierPosition, null) };
      });
    });
  }, [version]);

  // The provider's own sub-agents, reported as activity items, and why failed children failed.
  useEffect(() => {
    let cancelled = false;
    void api<ThreadRead>("GET", `${path}${query({ view: "activity", limit: 200, beforePosition: NEWEST })}`)
      .then((read) => {
        if (cancelled) return;
        setNativeSubagents(read.nativeSubagents ?? []);
        setFailureReasons(childFailureReasons(read.items));
      })
      .catch(() => !cancelled && setNativeSubagents([]));
    return () => {
      cancelled = true;
    };
  }, [threadId, version]);

  // Children in linked environments: read on opening, and again when the timeline gets one's start or result.
  useEffect(() => {
    let cancelled = false;
    void api<{ remoteTasks: RemoteTask[] }>("GET", `${path}/remote-tasks`)
      .then((read) => !cancelled && setRemoteTasks(read.remoteTasks))
      .catch(() => !cancelled && setRemoteTasks([]));
    return () => {
      cancelled = true;
    };
  }, [threadId, remoteVersion]);

  // Elapsed and relative times tick (a clock, not a poll: nothing is fetched).
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  // After a render: a changed window keeps what the person was reading in place; new items follow the bottom if they were there.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element === null) return;
    const kept = anchor.current;
    anchor.current = null;
    if (kept !== null) {
      const row = element.querySelector<HTMLElement>(`.items > li[data-position="${kept.position}"]`);
      if (row !== null) {
        element.scrollTop = row.offsetTop - kept.offset;
        return;
      }
    }
    if (stickToBottom.current) element.scrollTop = element.scrollHeight;
    // The timeline is only in the page once the thread's shell is known.
  }, [timeline, live, thread !== undefined]);

  /** Remembers the first item on screen, so a change of the window does not move what the person reads. */
  const keepAnchor = () => {
    const element = scroller.current;
    if (element === null) return;
    for (const row of element.querySelectorAll<HTMLElement>(".items > li[data-position]")) {
      if (row.offsetTop + row.offsetHeight > element.scrollTop) {
        anchor.current = { position: Number(row.dataset.position), offset: row.offsetTop - element.scrollTop };
        return;
      }
    }
  };

  const loadOlder = async () => {
    if (timeline === null || timeline.earlierPosition === null || loading.current) return;
    loading.current = true;
    try {
      const read = await api<ThreadRead>(
        "GET",
        `${path}${query({ view, limit: PAGE, beforePosition: timeline.earlierPosition })}`,
      );
      keepAnchor();
      setTimeline((current) =>
        current === null || current.threadId !== threadId
          ? current
          : {
              ...current,
              ...keepOldest(merge(read.items, current.items), read.earlierPosition, current.laterPosition),
            },
      );
    } finally {
      loading.current = false;
    }
  };

  const loadNewer = async () => {
    if (timeline === null || timeline.laterPosition === null || loading.current) return;
    loading.current = true;
    try {
      const read = await api<ThreadRead>(
        "GET",
        `${path}${query({ view, limit: PAGE, afterPosition: timeline.laterPosition })}`,
      );
      keepAnchor();
      setTimeline((current) => {
        if (current === null || current.threadId !== threadId) return current;
        const last = read.items[read.items.length - 1]?.position ?? current.laterPosition;
        return {
          ...current,
          ...keepNewest(merge(current.items, read.items), current.earlierPosition, read.hasMore ? last : null),
        };
      });
    } finally {
      loading.current = false;
    }
  };

  const onScroll = () => {
    const element = scroller.current;
    if (element === null) return;
    const fromBottom = element.scrollHeight - element.scrollTop - element.clientHeight;
    stickToBottom.current = fromBottom < 40 && timeline?.laterPosition === null;
    if (element.scrollTop < 200) void loadOlder();
    else if (fromBottom < 200) void loadNewer();
  };

  const act = async (action: "stop" | "interrupt" | "resume" | "settle" | "revive") => {
    try {
      if (action === "settle" || action === "revive")
        await api("POST", `/threads/${encodeURIComponent(threadId)}/settled`, { settled: action === "settle" });
      else await api("POST", `/threads/${encodeURIComponent(threadId)}/${action}`, {});
      setActionOutcome({
        text: {
          stop: "Stopped: the turn is interrupted and queued runs are held.",
          interrupt: "Interrupt sent.",
          resume: "Resumed.",
          settle: "Settled: it moves to the Settled section; a message revives it.",
          revive: "Revived.",
        }[action],
        failed: false,
      });
      void workspace.refreshThread(threadId);
    } catch (failure) {
      setActionOutcome({ text: failure instanceof ApiError ? failure.message : String(failure), failed: true });
    }
  };

  // Ctrl+. stops the open thread, from anywhere in the page (the composer too): the one shortcut that must work mid-sentence.
  const stopAction = useRef<() => void>(() => undefined);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "." && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        stopAction.current();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);

  const fork = async () => {
    setForking(true);
    try {
      const forked = await api<ForkResult>("POST", `/threads/${encodeURIComponent(threadId)}/fork`, {
        clientRequestId: `ui-${crypto.randomUUID()}`,
      });
      props.onOpened(forked.thread.threadId, forkNotice(forked, thread?.title ?? ""));
    } catch (failure) {
      setActionOutcome({ text: failure instanceof ApiError ? failure.message : String(failure), failed: true });
      setForking(false);
    }
  };

  if (thread === undefined) {
    return (
      <main class="thread-view" id="main">
        <p class={error !== null ? "error" : "hint"}>{error ?? "Loading thread…"}</p>
      </main>
    );
  }
  const ancestors = ancestorsOf(workspace.threads, thread);
  const source =
    thread.relationship === "fork" && thread.parentThreadId !== null
      ? (workspace.threads.get(thread.parentThreadId) ?? null)
      : null;
  const canOperate = props.session.verbs.includes("operate");
  const pendingHere = [...workspace.requests.values()]
    .filter((request) => request.threadId === threadId)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  const badge = badgeOf(
    thread,
    childrenOf(workspace.threads.values(), thread.threadId),
    props.pending.get(thread.threadId) ?? 0,
  );
  const actions = threadActions(thread, pendingHere.length);
  const latestRun = runs[0];
  stopAction.current = () => {
    if (canOperate && actions.stop.enabled) void act("stop");
    else setActionOutcome({ text: actions.stop.why ?? "Stopping needs the operate verb.", failed: false });
  };
  return (
    <div class="thread-layout">
      <main class="thread-view" id="main" aria-labelledby="thread-title">
        {ancestors.length > 0 && (
          <nav class="breadcrumb" aria-label="Parent threads">
            <ol>
              {ancestors.map((parent) => {
                const route = { page: "thread", threadId: parent.threadId } as const;
                return (
                  <li key={parent.threadId}>
                    <a href={pathOf(route)} onClick={onLinkClick(route)} data-parent-thread-id={parent.threadId}>
                      {parent.title || "Untitled"}
                    </a>
                  </li>
                );
              })}
              <li aria-current="page">{thread.title || "Untitled"}</li>
            </ol>
          </nav>
        )}
        <header class="thread-header">
          {/* The heading stays while renaming (the page is labelled by it), hidden behind the form. */}
          <h1 id="thread-title" class={renaming ? "visually-hidden" : undefined}>
            {thread.title || "Untitled"}
          </h1>
          {renaming && (
            <RenameForm
              threadId={threadId}
              title={thread.title}
              onDone={(renamed) => {
                setRenaming(false);
                if (renamed) setActionOutcome({ text: "Renamed.", failed: false });
              }}
            />
          )}
          <p class="thread-meta">
            <span class={`badge badge-${badge.replace(/ /g, "-")}`} data-thread-status>
              {badge}
            </span>
            <span>
              {thread.providerInstanceId}
              {thread.model !== null ? ` · ${thread.model}` : ""} · {thread.runtimeMode} · {thread.interactionMode}
            </span>
            <RelativeTime iso={thread.createdAt} nowMs={now} prefix="started " />
            {latestRun !== undefined && typeof latestRun.startedAt === "string" && (
              <span class="run-elapsed" data-run-elapsed title="How long its latest run has been (or was) at work">
                run {latestRun.ordinal}:{" "}
                {elapsed(
                  latestRun.startedAt,
                  typeof latestRun.endedAt === "string" ? Date.parse(latestRun.endedAt) : now,
                )}
                {isActive(thread) ? " so far" : ""}
              </span>
            )}
            {usage !== null && (
              <span
                class="tree-usage"
                data-tree-usage
                title="This thread and every agent under it: tokens as providers reported them; cost reported, else estimated from the price table, else unpriced"
              >
                tree: {usageText(usage)}
              </span>
            )}
            {thread.relationship === "attached" && (
              <span class="attached-note" data-attached>
                attached:{" "}
                {thread.attached?.client
                  ? `${thread.attached.client.name} ${thread.attached.client.version}`
                  : "an outside agent"}
                , running outside Switchyard
              </span>
            )}
            {thread.stopped === true && (
              <span class="stopped-flag" data-thread-stopped>
                stopped: nothing starts until Resume or a message
              </span>
            )}
            {source !== null && (
              <span class="forked-from">
                forked from{" "}
                <a
                  href={pathOf({ page: "thread", threadId: source.threadId })}
                  onClick={onLinkClick({ page: "thread", threadId: source.threadId })}
                  data-fork-source-id={source.threadId}
                >
                  {source.title || "Untitled"}
                </a>
              </span>
            )}
          </p>
          <div class="thread-actions" role="toolbar" aria-label="Thread actions">
            <div class="view-switch" role="group" aria-label="Timeline view">
              {(["messages", "activity"] as const).map((name) => (
                <button
                  key={name}
                  type="button"
                  aria-pressed={view === name}
                  onClick={() => setView(name)}
                  title={name === "messages" ? "What was said" : "Also tool calls, reasoning, sub-agents and requests"}
                >
                  {name === "messages" ? "Messages" : "Activity"}
                </button>
              ))}
            </div>
            {canOperate && (
              <>
                {/* What a person reaches for while it runs, apart from the quieter housekeeping. */}
                <div class="action-group primary-actions" role="group" aria-label="Run control">
                  <ActionButton
                    label="Stop"
                    state={actions.stop}
                    onClick={() => void act("stop")}
                    hint="Interrupts the turn and holds queued runs (Ctrl+.)"
                  />
                  <ActionButton
                    label="Interrupt"
                    state={actions.interrupt}
                    onClick={() => void act("interrupt")}
                    hint="Interrupts the turn; queued runs still start"
                  />
                  <ActionButton
                    label="Resume"
                    state={actions.resume}
                    onClick={() => void act("resume")}
                    hint="Starts the runs Stop held"
                  />
                </div>
                <div class="action-group secondary-actions" role="group" aria-label="Thread">
                  <button type="button" class="quiet" onClick={() => setRenaming(true)} disabled={renaming}>
                    Rename
                  </button>
                  <button
                    type="button"
                    class="quiet"
                    onClick={() => void fork()}
                    disabled={forking}
                    title="A new thread that continues this conversation"
                  >
                    Fork
                  </button>
                  {thread.settledAt ? (
                    <ActionButton
                      label="Revive"
                      state={actions.revive}
                      onClick={() => void act("revive")}
                      quiet
                      hint="Back to the main list"
                    />
                  ) : (
                    <ActionButton
                      label="Settle"
                      state={actions.settle}
                      onClick={() => void act("settle")}
                      quiet
                      hint="Its work is done: move it to Settled"
                    />
                  )}
                  <SnoozeMenu
                    threadId={threadId}
                    snoozed={thread.snoozed}
                    snoozedUntil={thread.snoozedUntil}
                    onChanged={(outcome) => {
                      setActionOutcome(outcome);
                      void workspace.refreshThread(threadId);
                    }}
                  />
                </div>
              </>
            )}
          </div>
          {actionOutcome !== null &&
            (actionOutcome.failed ? (
              <p class="error action-refused" role="alert">
                {actionOutcome.text}
              </p>
            ) : (
              <p class="outcome" role="status">
                {actionOutcome.text}
              </p>
            ))}
        </header>
        <div class="timeline" ref={scroller} onScroll={onScroll} tabIndex={0} aria-label="Timeline">
          {timeline?.earlierPosition !== null && timeline !== null && (
            <button type="button" class="load-older" onClick={() => void loadOlder()}>
              Load older items
            </button>
          )}
          {error !== null && <p class="error">{error}</p>}
          {timeline === null ? (
            <p class="hint">Loading…</p>
          ) : timeline.items.length === 0 && live.length === 0 ? (
            <p class="empty">Nothing here yet.</p>
          ) : null}
          <ol class="items">
            {timeline?.items.map((item) => (
              <TimelineEntry key={item.itemId} threadId={threadId} item={item} nowMs={now} />
            ))}
            {timeline?.laterPosition === null &&
              live
                .filter(
                  (entry) =>
                    (view === "activity" || entry.kind === "assistant_message") &&
                    !timeline.items.some((item) => item.itemId === entry.itemId),
                )
                .map((entry) => <LiveEntry key={entry.itemId} live={entry} />)}
          </ol>
          {timeline !== null && timeline.laterPosition !== null && (
            <button type="button" class="load-newer" onClick={() => void loadNewer()}>
              Load newer items
            </button>
          )}
        </div>
        {pendingHere.length > 0 && (
          <section class="thread-requests" aria-label="Waiting for you">
            {pendingHere.map((request) => (
              <RequestCard
                key={request.requestId}
                request={request}
                thread={thread}
                verbs={props.session.verbs}
                inThread
                onAnswered={() => {
                  void workspace.refreshRequests(threadId);
                  void workspace.refreshThread(threadId);
                }}
              />
            ))}
          </section>
        )}
        <Composer
          threadId={threadId}
          disabled={
            thread.relationship === "attached"
              ? "This thread's agent runs outside Switchyard (your own harness, wired with switchyard connect); message it there, or one of its sub-agents here."
              : canOperate
                ? null
                : "Sending needs the operate verb; this session's token does not have it."
          }
          onSent={() => void workspace.refreshThread(threadId)}
        />
      </main>
      <AgentsPanel
        thread={thread}
        threads={workspace.threads}
        tasks={workspace.tasks}
        lastReplies={workspace.lastReplies}
        pending={props.pending}
        nativeSubagents={nativeSubagents}
        failureReasons={failureReasons}
        remoteTasks={remoteTasks}
        nowMs={now}
        canOperate={canOperate}
      />
    </div>
  );
}
