import { api, query } from "../api/client.js";
import { followEvents, type StreamState } from "../api/event-stream.js";
import type { Project, StreamFrame, ThreadRow, ThreadRowList } from "../api/types.js";
import { THREAD_PAGE, threadPageOffsets } from "../model/thread-pages.js";

/** What the workspace does with the event stream. */
export interface FeedListener {
  readonly onEvent: (event: StreamFrame) => void;
  readonly onState: (state: StreamState) => void;
  readonly onResync: () => void;
}

/**
 * The event stream, opened before anyone listens: what it reports meanwhile is held and handed
 * over, in order, to the listener when it comes (the workspace, which mounts only after the
 * session check answers).
 */
export interface EventFeed {
  listen(listener: FeedListener): void;
  /**
   * Settles when the server follows the log for this stream (its answer's headers came: every
   * event committed from then on reaches it) or its first try failed (then it reads the lists
   * again once it is back, see event-stream.ts). A list read after this misses no event.
   */
  readonly settled: Promise<void>;
  stop(): void;
}

export function openEventFeed(): EventFeed {
  let listener: FeedListener | null = null;
  const held: ((listener: FeedListener) => void)[] = [];
  const deliver = (call: (listener: FeedListener) => void) => (listener !== null ? call(listener) : held.push(call));
  let settle = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const stop = followEvents(
    (event) => deliver((to) => to.onEvent(event)),
    (state) => {
      if (state !== "connecting") {
        // For the bench's timeline (bench/web-ui.bench.js): when the threads could be asked for.
        performance.mark("switchyard:stream-settled");
        settle();
      }
      deliver((to) => to.onState(state));
    },
    () => deliver((to) => to.onResync()),
  );
  return {
    listen(next) {
      listener = next;
      for (const call of held.splice(0)) call(next);
    },
    settled,
    stop: () => {
      settle();
      stop();
    },
  };
}

export const readProjects = () => api<{ projects: Project[] }>("GET", "/projects").then((answer) => answer.projects);

/**
 * Every listed project's threads as rows (the sidebar shows rows; a thread's page reads its
 * shell when it opens). The project list says how many threads each holds, so every page is
 * asked for at once. Threads made after the read arrive by the stream.
 */
export async function readThreadRows(projects: readonly Project[]): Promise<ThreadRow[]> {
  const page = (projectId: string, offset: number) =>
    api<ThreadRowList>(
      "GET",
      `/threads${query({ projectId, includeSubagents: true, limit: THREAD_PAGE, offset, view: "row" })}`,
    );
  const lists = await Promise.all(
    projects.flatMap((project) =>
      threadPageOffsets(project.threadCount).map((offset) => page(project.projectId, offset)),
    ),
  );
  return lists.flatMap((list) => list.threads);
}

/** The page's first reads: the stream, the project list, then every project's threads. */
export interface FirstLoad {
  readonly feed: EventFeed;
  readonly projects: Promise<readonly Project[]>;
  /** Read once the project list answered and the stream settled, whichever comes last. */
  readonly rows: Promise<readonly ThreadRow[]>;
}

/**
 * Starts the first reads: the stream and the project list at once, the threads as soon as both
 * allow. Nothing waits for the app to mount.
 */
export function startFirstLoad(): FirstLoad {
  const feed = openEventFeed();
  const projects = readProjects();
  const rows = Promise.all([projects, feed.settled]).then(([listed]) => readThreadRows(listed));
  // Whoever takes the load handles its failures; until then they are not unhandled.
  projects.catch(() => undefined);
  rows.catch(() => undefined);
  return { feed, projects, rows };
}

/** The first load started beside the session check, until the workspace takes it. */
let early: FirstLoad | null = null;

/**
 * Starts the first load now, beside the page's session check: the stream, the project list
 * and the threads are needed next, and the check's round trip is spent waiting anyway.
 */
export function startFirstLoadEarly(): FirstLoad {
  early?.feed.stop();
  early = startFirstLoad();
  return early;
}

/** Drops the early load (the session check failed): its stream is closed, its reads forgotten. */
export function dropEarlyFirstLoad(): void {
  early?.feed.stop();
  early = null;
}

/**
 * The workspace's first load: the early one when there is one (its reads retried once when they
 * were refused meanwhile, its stream kept), else a new one.
 */
export function takeFirstLoad(): FirstLoad {
  const load = early;
  early = null;
  if (load === null) return startFirstLoad();
  const projects = load.projects.catch(() => readProjects());
  const rows = load.rows.catch(() =>
    Promise.all([projects, load.feed.settled]).then(([listed]) => readThreadRows(listed)),
  );
  return { feed: load.feed, projects, rows };
}
