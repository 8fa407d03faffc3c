import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, query } from "../api/client.js";
import { ApiError, type ForkResult, type RemoteTask, type SessionView, type ThreadRead, type ThreadShell, type TimelineItem } from "../api/types.js";
import { threadActions, type ActionState } from "../model/thread-actions.js";
import { ancestorsOf, badgeOf, childrenOf } from "../model/thread-tree.js";
import type { Workspace } from "./workspace.js";
import { AgentsPanel } from "./agents-panel.js";
import { Composer } from "./composer.js";
import { RenameForm } from "./rename-form.js";
import { RequestCard } from "./request-card.js";
import { onLinkClick, pathOf } from "./router.js";

type View = "messages" | "activity";
const PAGE = 50;
const NEWEST = Number.MAX_SAFE_INTEGER;

interface Timeline {
  readonly threadId: string;
  readonly view: View;
  readonly items: readonly TimelineItem[];
  readonly earlierPosition: number | null;
  readonly nextPosition: number | null;
}

function merge(items: readonly TimelineItem[], more: readonly TimelineItem[]): TimelineItem[] {
  const byPosition = new Map(items.map((item) => [item.position, item]));
  for (const item of more) byPosition.set(item.position, item);
  return [...byPosition.values()].sort((a, b) => a.position - b.position);
}

/** A sub-agent the provider ran on its own (observed, no thread); children with threads have their own rows. */
function isNativeSubagent(item: TimelineItem): boolean {
  return item.kind === "subagent" && item.details.childThreadId === undefined && item.details.taskId === undefined;
}

function ItemRow(props: { readonly item: TimelineItem }) {
  const { item } = props;
  const who = item.role ?? item.kind.replace(/_/g, " ");
  return (
    <li class={`item item-${item.role ?? "activity"} kind-${item.kind}`} data-position={item.position}>
      <span class="item-who">{who}</span>
      <div class="item-text">{item.text}</div>
      {item.truncated && <span class="hint">(cut short)</span>}
    </li>
  );
}

/** A thread action's button, disabled (saying why) when the thread's state gives it nothing to do. */
function ActionButton(props: { readonly label: string; readonly state: ActionState; readonly onClick: () => void }) {
  return (
    <button type="button" onClick={props.onClick} disabled={!props.state.enabled} title={props.state.why ?? undefined}>
      {props.label}
    </button>
  );
}

/** What a new fork's page says first: how its conversation travelled. */
function forkNotice(fork: ForkResult, sourceTitle: string): string {
  const how = fork.strategy === "native" ? "the provider copied the conversation" : `the conversation goes with its first message as context (${fork.reason})`;
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
  const [nativeSubagents, setNativeSubagents] = useState<readonly TimelineItem[]>([]);
  const [remoteTasks, setRemoteTasks] = useState<readonly RemoteTask[]>([]);
  const [now, setNow] = useState(Date.now());
  const scroller = useRef<HTMLDivElement>(null);
  const loadingOlder = useRef(false);
  const keepFromBottom = useRef<number | null>(null);
  const stickToBottom = useRef(true);
  const thread: ThreadShell | undefined = workspace.threads.get(threadId);
  const version = workspace.timelineVersions.get(threadId) ?? 0;
  const remoteVersion = workspace.remoteTaskVersions.get(threadId) ?? 0;

  // The first page: the newest items.
  useEffect(() => {
    let cancelled = false;
    setTimeline(null);
    setError(null);
    stickToBottom.current = true;
    void api<ThreadRead>("GET", `/threads/${encodeURIComponent(threadId)}${query({ view, limit: PAGE, beforePosition: NEWEST })}`)
      .then((read) => {
        if (cancelled) return;
        setTimeline({ threadId, view, items: read.items, earlierPosition: read.earlierPosition, nextPosition: read.nextPosition });
        void workspace.refreshThread(threadId);
      })
      .catch((failure: unknown) => !cancelled && setError(failure instanceof ApiError ? failure.message : String(failure)));
    return () => {
      cancelled = true;
    };
  }, [threadId, view]);

  // Pushed changes: read what is newer than the last item shown (and re-read the last one, which may have grown).
  useEffect(() => {
    if (version === 0 || timeline === null || timeline.threadId !== threadId) return;
    const after = timeline.items.length > 0 ? timeline.items[timeline.items.length - 1]!.position - 1 : -1;
    void api<ThreadRead>("GET", `/threads/${encodeURIComponent(threadId)}${query({ view, limit: 200, afterPosition: after })}`).then((read) => {
      setTimeline((current) => (current === null || current.threadId !== threadId || current.view !== view ? current : { ...current, items: merge(current.items, read.items) }));
    });
  }, [version]);

  // The provider's own sub-agents, reported as activity items.
  useEffect(() => {
    void api<ThreadRead>("GET", `/threads/${encodeURIComponent(threadId)}${query({ view: "activity", limit: 200, beforePosition: NEWEST })}`)
      .then((read) => setNativeSubagents(read.items.filter(isNativeSubagent)))
      .catch(() => setNativeSubagents([]));
  }, [threadId, version]);

  // Children in linked environments: read on opening, and again when the timeline gets one's start or result.
  useEffect(() => {
    let cancelled = false;
    void api<{ remoteTasks: RemoteTask[] }>("GET", `/threads/${encodeURIComponent(threadId)}/remote-tasks`)
      .then((read) => !cancelled && setRemoteTasks(read.remoteTasks))
      .catch(() => !cancelled && setRemoteTasks([]));
    return () => {
      cancelled = true;
    };
  }, [threadId, remoteVersion]);

  // Elapsed times tick while children work (a clock, not a poll: nothing is fetched).
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  // After a render: older items keep what the person was reading in place; new ones follow the bottom if they were there.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element === null) return;
    if (keepFromBottom.current !== null) {
      element.scrollTop = element.scrollHeight - keepFromBottom.current;
      keepFromBottom.current = null;
    } else if (stickToBottom.current) element.scrollTop = element.scrollHeight;
    // The timeline is only in the page once the thread's shell is known.
  }, [timeline, thread !== undefined]);

  const loadOlder = async () => {
    if (timeline === null || timeline.earlierPosition === null || loadingOlder.current) return;
    loadingOlder.current = true;
    try {
      const read = await api<ThreadRead>("GET", `/threads/${encodeURIComponent(threadId)}${query({ view, limit: PAGE, beforePosition: timeline.earlierPosition })}`);
      const element = scroller.current;
      keepFromBottom.current = element === null ? null : element.scrollHeight - element.scrollTop;
      setTimeline((current) =>
        current === null || current.threadId !== threadId ? current : { ...current, items: merge(read.items, current.items), earlierPosition: read.earlierPosition },
      );
    } finally {
      loadingOlder.current = false;
    }
  };

  const onScroll = () => {
    const element = scroller.current;
    if (element === null) return;
    stickToBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
    if (element.scrollTop < 200) void loadOlder();
  };

  const act = async (action: "stop" | "interrupt" | "resume" | "settle" | "revive") => {
    try {
      if (action === "settle" || action === "revive") await api("POST", `/threads/${encodeURIComponent(threadId)}/settled`, { settled: action === "settle" });
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

  const fork = async () => {
    setForking(true);
    try {
      const forked = await api<ForkResult>("POST", `/threads/${encodeURIComponent(threadId)}/fork`, { clientRequestId: `ui-${crypto.randomUUID()}` });
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
  const source = thread.relationship === "fork" && thread.parentThreadId !== null ? (workspace.threads.get(thread.parentThreadId) ?? null) : null;
  const canOperate = props.session.verbs.includes("operate");
  const pendingHere = [...workspace.requests.values()].filter((request) => request.threadId === threadId).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  const badge = badgeOf(thread, childrenOf(workspace.threads.values(), thread.threadId), props.pending.get(thread.threadId) ?? 0);
  const actions = threadActions(thread, pendingHere.length);
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
            {thread.relationship === "attached" && (
              <span class="attached-note" data-attached>
                attached: {thread.attached?.client ? `${thread.attached.client.name} ${thread.attached.client.version}` : "an outside agent"}, running outside Switchyard
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
                <button key={name} type="button" aria-pressed={view === name} onClick={() => setView(name)}>
                  {name === "messages" ? "Messages" : "Activity"}
                </button>
              ))}
            </div>
            {canOperate && (
              <>
                <button type="button" onClick={() => setRenaming(true)} disabled={renaming}>
                  Rename
                </button>
                <button type="button" onClick={() => void fork()} disabled={forking}>
                  Fork
                </button>
                <ActionButton label="Interrupt" state={actions.interrupt} onClick={() => void act("interrupt")} />
                <ActionButton label="Stop" state={actions.stop} onClick={() => void act("stop")} />
                <ActionButton label="Resume" state={actions.resume} onClick={() => void act("resume")} />
                {thread.settledAt ? (
                  <ActionButton label="Revive" state={actions.revive} onClick={() => void act("revive")} />
                ) : (
                  <ActionButton label="Settle" state={actions.settle} onClick={() => void act("settle")} />
                )}
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
          {timeline === null ? <p class="hint">Loading…</p> : timeline.items.length === 0 ? <p class="empty">Nothing here yet.</p> : null}
          <ol class="items">
            {timeline?.items.map((item) => (
              <ItemRow key={item.itemId} item={item} />
            ))}
          </ol>
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
        remoteTasks={remoteTasks}
        nowMs={now}
      />
    </div>
  );
}
