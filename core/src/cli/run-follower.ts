import type { RunProgress } from "./run-progress.js";
import type { ServerEventFeed } from "./server-events.js";

/** A run as `run.finished` reports it. */
export interface FinishedRun {
  readonly runId: string;
  readonly status: string;
  readonly summary: string | null;
  readonly error: { readonly code?: string; readonly message: string } | null;
  readonly terminalReason: string | null;
}

/**
 * Reads a thread's events until `runId` finishes, showing each to `progress`.
 * Resolves with the finished run, or null when `signal` aborts first (a timeout, the person
 * leaving); the run itself goes on in the server either way.
 */
export async function followRun(
  feed: ServerEventFeed,
  options: { threadId: string; runId: string; progress: RunProgress; signal: AbortSignal },
): Promise<FinishedRun | null> {
  for (;;) {
    const event = await feed.next(options.signal);
    if (event === null) return null;
    options.progress.show(event);
    if (event.type === "run.finished" && event.threadId === options.threadId && event.data.run?.runId === options.runId)
      return event.data.run as FinishedRun;
  }
}
