import type { SnapshotTurn, ThreadSnapshot } from "@switchyard/sdk";
import type { v2 } from "../codex-wire.js";
import type { AppServerModeSettings } from "../shared/codex-runtime-modes.js";
import { userMessageText } from "./codex-items.js";
import type { CodexRpc } from "../shared/codex-rpc.js";

/** Reading a Codex thread's recorded turns. */
export interface CodexHistorySource {
  readonly rpc: CodexRpc;
  readonly threadId: string;
  readonly timeoutMs: number;
}

/** Every recorded turn of a thread, page by page (`thread/turns/list`, full items). */
async function* recordedTurns(source: CodexHistorySource, sortDirection?: v2.SortDirection): AsyncGenerator<v2.Turn> {
  let cursor: string | null = null;
  do {
    const page: v2.ThreadTurnsListResponse = await source.rpc.request(
      "thread/turns/list",
      {
        threadId: source.threadId,
        itemsView: "full",
        limit: 50,
        ...(sortDirection !== undefined ? { sortDirection } : {}),
        ...(cursor !== null ? { cursor } : {}),
      },
      source.timeoutMs,
    );
    yield* page.data;
    cursor = page.nextCursor;
  } while (cursor !== null);
}

/**
 * The Codex turn a host turn became, found by the host turn id every `turn/start` records on
 * its user message (`clientUserMessageId`), so it is found after a restart too. Null when the
 * thread has no such turn.
 */
export async function recordedCodexTurnId(source: CodexHistorySource, hostTurnId: string): Promise<string | null> {
  for await (const turn of recordedTurns(source)) {
    if (turn.items.some((item) => item.type === "userMessage" && item.clientId === hostTurnId)) return turn.id;
  }
  return null;
}

/** The conversation as Codex recorded it, oldest turn first. */
export async function recordedSnapshot(source: CodexHistorySource): Promise<ThreadSnapshot> {
  const turns: SnapshotTurn[] = [];
  for await (const turn of recordedTurns(source, "asc")) {
    const userText = turn.items
      .filter((item) => item.type === "userMessage")
      .map((item) => userMessageText(item))
      .join("\n");
    const assistantText = turn.items
      .filter((item) => item.type === "agentMessage")
      .map((item) => item.text)
      .join("\n");
    turns.push({ providerTurnId: turn.id, userText, assistantText });
  }
  return { turns };
}

/**
 * Threads this process let go of, until Codex says it unloaded them (`thread/closed`): Codex
 * lets one process write a thread, and a fork is resumed by another session's app-server.
 */
export class ThreadUnloads {
  readonly #waiting = new Map<string, () => void>();

  /** Settles when Codex closed the thread, or after `timeoutMs`. */
  expect(threadId: string, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.set(threadId, resolve);
      setTimeout(resolve, timeoutMs).unref();
    });
  }

  /** Codex closed a thread. */
  closed(threadId: string): void {
    this.#waiting.get(threadId)?.();
  }

  forget(threadId: string): void {
    this.#waiting.delete(threadId);
  }
}

/** How long a fork waits for Codex to unload its copy before handing it over anyway. */
const UNLOAD_WAIT_MS = 2_000;

/**
 * `thread/fork` (through `lastTurnId`, inclusive, when cutting after a turn). The copy is
 * resumed by its own session, so this process unsubscribes it at once and waits (briefly) until
 * Codex has unloaded it. Returns the copy's thread id.
 */
export async function forkRecordedThread(
  source: CodexHistorySource,
  fork: { readonly lastTurnId?: string; readonly cwd: string; readonly mode: AppServerModeSettings },
  unloads: ThreadUnloads,
): Promise<string> {
  const forked = await source.rpc.request(
    "thread/fork",
    {
      threadId: source.threadId,
      ...(fork.lastTurnId !== undefined ? { lastTurnId: fork.lastTurnId } : {}),
      cwd: fork.cwd,
      approvalPolicy: fork.mode.approvalPolicy,
      sandbox: fork.mode.sandbox,
      excludeTurns: true,
      // Unloads the copy as soon as it is unsubscribed.
      config: { thread_unload_delay_secs: 0 },
    },
    source.timeoutMs,
  );
  const forkId = forked.thread.id;
  const unloaded = unloads.expect(forkId, UNLOAD_WAIT_MS);
  const unsubscribed = await source.rpc
    .request("thread/unsubscribe", { threadId: forkId }, source.timeoutMs)
    .catch(() => null);
  if (unsubscribed?.status === "unsubscribed") await unloaded;
  unloads.forget(forkId);
  return forkId;
}
