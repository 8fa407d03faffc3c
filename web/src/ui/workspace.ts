import { useCallback, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, query } from "../api/client.js";
import type { StreamState } from "../api/event-stream.js";
import type {
  DelegatedTask,
  OutputDelta,
  PendingRequest,
  Project,
  StreamFrame,
  ThreadRead,
  ThreadRow,
  ThreadShell,
} from "../api/types.js";
import { freshReads } from "../model/fresh-reads.js";
import { withDelta, withoutItem, type LiveItem } from "../model/live-output.js";
import { readProjects, readThreadRows, takeFirstLoad } from "./first-load.js";

/** Everything the screens read: projects, their threads, pending requests and tasks, kept current by the event stream. */
export interface Workspace {
  /** Until the project list is read (the threads may still be on their way: see `threadsLoaded`). */
  readonly loading: boolean;
  /** Whether the projects' threads are read (until then a project's empty list says nothing). */
  readonly threadsLoaded: boolean;
  readonly error: string | null;
  readonly projects: readonly Project[];
  /** Every thread the page knows, as its list row (a thread read whole is kept as its shell, which is a row too). */
  readonly threads: ReadonlyMap<string, ThreadRow>;
  /**
   * The shells of the threads read one by one (opened, or changed by an event): what a thread's
   * own page shows beyond its row. The lists are read as rows, about half the bytes.
   */
  readonly shells: ReadonlyMap<string, ThreadShell>;
  readonly requests: ReadonlyMap<string, PendingRequest>;
  readonly tasks: ReadonlyMap<string, DelegatedTask>;
  /** The last reply of each thread that finished a run (for the Agents panel). */
  readonly lastReplies: ReadonlyMap<string, string>;
  readonly stream: StreamState;
  /** Bumped for a thread whenever its timeline changed (items or messages pushed). */
  readonly timelineVersions: ReadonlyMap<string, number>;
  /** Text each thread's agent is writing now, streamed before its item completes (in the order it began). */
  readonly liveOutput: ReadonlyMap<string, readonly LiveItem[]>;
  /** Bumped for a thread whenever its timeline got an item or message of a task delegated to a linked environment (its start, its result). */
  readonly remoteTaskVersions: ReadonlyMap<string, number>;
  /** Re-reads one thread's shell (after an action of the UI's own). */
  refreshThread(threadId: string): Promise<void>;
  /** Re-reads one thread's pending requests. */
  refreshRequests(threadId: string): Promise<void>;
  /** Re-reads the projects (after one was added here). */
  reloadProjects(): Promise<void>;
}

function withEntry<K, V>(map: ReadonlyMap<K, V>, key: K, value: V | undefined): Map<K, V> {
  const next = new Map(map);
  if (value === undefined) next.delete(key);
  else next.set(key, value);
  return next;
}

export function useWorkspace(onSignedOut: () => void): Workspace {
  const [loading, setLoading] = useState(true);
  const [threadsLoaded, setThreadsLoaded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [projects, setProjects] = useState<readonly Project[]>([]);
  const [threads, setThreads] = useState<ReadonlyMap<string, ThreadRow>>(new Map());
  const [shells, setShells] = useState<ReadonlyMap<string, ThreadShell>>(new Map());
  /** The threads whose shells the page holds: a resync reads them again (events were missed meanwhile). */
  const heldShells = useRef(new Set<string>());
  const [requests, setRequests] = useState<ReadonlyMap<string, PendingRequest>>(new Map());
  const [tasks, setTasks] = useState<ReadonlyMap<string, DelegatedTask>>(new Map());
  const [lastReplies, setLastReplies] = useState<ReadonlyMap<string, string>>(new Map());
  const [timelineVersions, setTimelineVersions] = useState<ReadonlyMap<string, number>>(new Map());
  const [remoteTaskVersions, setRemoteTaskVersions] = useState<ReadonlyMap<string, number>>(new Map());
  const [liveOutput, setLiveOutput] = useState<ReadonlyMap<string, readonly LiveItem[]>>(new Map());
  const [stream, setStream] = useState<StreamState>("connecting");
  const knownProjects = useRef(new Set<string>());
  // Setters and refs are stable, so the readers are made once; each answers with a read started
  // after the latest request for its key (see fresh-reads.ts).
  const [readers] = useState(() => {
    const reloadProjects = freshReads<"projects">(async () => {
      try {
        const { projects: listed } = await api<{ projects: Project[] }>("GET", "/projects");
        knownProjects.current = new Set(listed.map((project) => project.projectId));
        setProjects(listed);
      } catch {
        // The lists stay as they were; the next event or reload tries again.
      }
    });
    const refreshThread = freshReads<string>(async (threadId) => {
      try {
        const result = await api<ThreadRead>(
          "GET",
          `/threads/${encodeURIComponent(threadId)}${query({ limit: 1, beforePosition: Number.MAX_SAFE_INTEGER })}`,
        );
        setThreads((map) => withEntry(map, threadId, result.thread));
        heldShells.current.add(threadId);
        setShells((map) => withEntry(map, threadId, result.thread));
        // A thread in a project added elsewhere (another tab, the CLI): projects have no events of their own.
        if (!knownProjects.current.has(result.thread.projectId)) void reloadProjects("projects");
        const latest = result.runs[0];
        if (latest?.summary) setLastReplies((map) => withEntry(map, threadId, latest.summary!));
      } catch {
        // A thread this session may not read (another project) stays out of the list.
      }
    });
    const refreshRequests = freshReads<string>(async (threadId) => {
      try {
        const { requests: listed } = await api<{ requests: PendingRequest[] }>(
          "GET",
          `/threads/${encodeURIComponent(threadId)}/pending-requests`,
        );
        setRequests((map) => {
          const next = new Map([...map].filter(([, request]) => request.threadId !== threadId));
          for (const request of listed) if (request.status === "pending") next.set(request.requestId, request);
          return next;
        });
      } catch {
        // Refused or gone: nothing to show.
      }
    });
    const refreshTask = freshReads<string>(async (taskId) => {
      try {
        const task = await api<DelegatedTask>("GET", `/tasks/${encodeURIComponent(taskId)}`);
        setTasks((map) => withEntry(map, taskId, task));
      } catch {
        // A task of a thread this session cannot see.
      }
    });
    return { reloadProjects: () => reloadProjects("projects"), refreshThread, refreshRequests, refreshTask };
  });
  const { reloadProjects, refreshThread, refreshRequests, refreshTask } = readers;

  const onDelta = useCallback((frame: OutputDelta) => {
    setLiveOutput((map) => withEntry(map, frame.threadId, withDelta(map.get(frame.threadId) ?? [], frame.data)));
  }, []);

  const onEvent = useCallback(
    (event: StreamFrame) => {
      if (event.type === "output.delta") return onDelta(event);
      const data = event.data;
      switch (event.type) {
        case "thread.created":
        case "thread.settled":
        case "thread.snoozed":
        case "run.started":
          void refreshThread(event.threadId);
          break;
        case "thread.renamed":
          // The event carries the new title: no read needed, and a thread not listed here stays out.
          if (typeof data.title === "string") {
            const title = data.title;
            setThreads((map) => {
              const known = map.get(event.threadId);
              return known === undefined ? map : withEntry(map, event.threadId, { ...known, title });
            });
            setShells((map) => {
              const known = map.get(event.threadId);
              return known === undefined ? map : withEntry(map, event.threadId, { ...known, title });
            });
          }
          break;
        case "run.finished": {
          const summary = (data.run as { summary?: unknown } | undefined)?.summary;
          if (typeof summary === "string") setLastReplies((map) => withEntry(map, event.threadId, summary));
          // Whatever was still streaming is in the log now (or was dropped with its turn).
          setLiveOutput((map) => (map.has(event.threadId) ? withEntry(map, event.threadId, undefined) : map));
          void refreshThread(event.threadId);
          break;
        }
        case "message":
        case "item": {
          const itemId = (data.item as { itemId?: unknown } | undefined)?.itemId;
          // The item streamed so far is complete: the timeline shows it from the log now.
          if (typeof itemId === "string") {
            setLiveOutput((map) => {
              const live = map.get(event.threadId);
              if (live === undefined || !live.some((entry) => entry.itemId === itemId)) return map;
              const rest = withoutItem(live, itemId);
              return withEntry(map, event.threadId, rest.length === 0 ? undefined : rest);
            });
          }
          setTimelineVersions((map) => withEntry(map, event.threadId, (map.get(event.threadId) ?? 0) + 1));
          // A remote child's row changes only with these (its start, its result): the panel re-reads them then, not on every item.
          if ((data.item as { details?: { origin?: unknown } } | undefined)?.details?.origin === "remote_task") {
            setRemoteTaskVersions((map) => withEntry(map, event.threadId, (map.get(event.threadId) ?? 0) + 1));
          }
          break;
        }
        case "task.updated": {
          // The event carries the task under `task` (its id, parent and child thread).
          const task = (data.task ?? {}) as { taskId?: unknown; childThreadId?: unknown };
          if (typeof task.taskId === "string") void refreshTask(task.taskId);
          if (typeof task.childThreadId === "string") void refreshThread(task.childThreadId);
          break;
        }
        case "workspace.updated": {
          // A child's own worktree changed (new commits, an apply or discard, by anyone): the
          // event carries the whole view, which replaces the one on the child's task.
          const workspace = data.workspace as DelegatedTask["changes"];
          if (workspace === undefined) break;
          setTasks((map) => {
            for (const [taskId, task] of map)
              if (task.childThreadId === event.threadId) return withEntry(map, taskId, { ...task, changes: workspace });
            return map;
          });
          break;
        }
        case "request.opened":
        case "request.answered":
        case "request.closed": {
          const threadId = typeof data.threadId === "string" ? data.threadId : event.threadId;
          void refreshRequests(threadId);
          void refreshThread(threadId);
          break;
        }
      }
    },
    [refreshThread, refreshRequests, refreshTask, onDelta],
  );

  // A layout effect: the stream and the lists start as the workspace mounts, not a frame later
  // after its first paint ("Loading…"), which a loaded machine delays by tens of milliseconds;
  // usually they started earlier still, beside the session check (first-load.ts).
  useLayoutEffect(() => {
    let cancelled = false;
    const first = takeFirstLoad();
    const showProjects = (listed: readonly Project[]) => {
      knownProjects.current = new Set(listed.map((project) => project.projectId));
      setProjects(listed);
      // The page around the lists can show now: the project list says which projects hold threads.
      setLoading(false);
    };
    /**
     * Reads the lists. The first read's threads are asked for only once the stream follows the
     * log (first-load.ts), so no change falls between them; events that came meanwhile were
     * applied first and are kept over the rows. A resync's read is newer than what the page holds.
     */
    const load = async (resync: boolean) => {
      try {
        const listed = resync ? await readProjects() : await first.projects;
        if (cancelled) return;
        showProjects(listed);
        const rows = resync ? await readThreadRows(listed) : await first.rows;
        if (cancelled) return;
        const loaded = new Map(rows.map((thread) => [thread.threadId, thread] as const));
        setThreads((map) => (resync ? new Map([...map, ...loaded]) : new Map([...loaded, ...map])));
        setThreadsLoaded(true);
        // A resync's rows are newer than the shells held: those are read again, not left stale.
        if (resync) for (const threadId of heldShells.current) void refreshThread(threadId);
        // Questions and approvals wait in threads whose run is waiting.
        for (const thread of loaded.values()) if (thread.status === "waiting") void refreshRequests(thread.threadId);
        for (const thread of loaded.values())
          if (thread.delegatedTaskId !== null) void refreshTask(thread.delegatedTaskId);
      } catch (failure) {
        if (!cancelled) {
          setError((failure as Error).message);
          setLoading(false);
        }
      }
    };
    first.feed.listen({
      onEvent,
      onState: (state) => {
        setStream(state);
        if (state === "closed") void api("GET", "/ui/session").catch(() => onSignedOut());
      },
      onResync: () => void load(true),
    });
    void load(false);
    return () => {
      cancelled = true;
      first.feed.stop();
    };
  }, [onEvent, onSignedOut, refreshRequests, refreshTask]);

  return {
    loading,
    threadsLoaded,
    error,
    projects,
    threads,
    shells,
    requests,
    tasks,
    lastReplies,
    stream,
    timelineVersions,
    liveOutput,
    remoteTaskVersions,
    refreshThread,
    refreshRequests,
    reloadProjects,
  };
}
