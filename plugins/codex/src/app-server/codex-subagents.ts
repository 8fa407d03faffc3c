import type { AdapterEvent } from "@switchyard/sdk";
import type { CodexEvent } from "./codex-events.js";

interface ChildThread {
  /** The host turn that spawned it: its outcome is reported there, even after that turn ended. */
  readonly hostTurnId: string;
  readonly title: string | null;
  lastText: string | null;
}

/**
 * Codex's own sub-agents (`spawn_agent`), observed: each runs in its own Codex thread on the same
 * app-server, whose notifications only report how it is doing (`subagent.observed`), never the
 * session's turn. Approvals raised inside one are attributed to the running turn.
 */
export class CodexSubagents {
  readonly #children = new Map<string, ChildThread>();

  constructor(private readonly emit: (event: AdapterEvent) => void) {}

  /** True for a Codex thread a turn of this session spawned. */
  has(threadId: string): boolean {
    return this.#children.has(threadId);
  }

  /** A turn spawned these threads: they are reported running. */
  spawned(hostTurnId: string, threadIds: readonly string[], title: string | null): void {
    for (const threadId of threadIds) {
      if (this.#children.has(threadId)) continue;
      this.#children.set(threadId, { hostTurnId, title, lastText: null });
      this.emit({
        type: "subagent.observed",
        turnId: hostTurnId,
        nativeId: threadId,
        ...(title !== null ? { title } : {}),
        status: "running",
        nativeThreadId: threadId,
      });
    }
  }

  /** A notification of a sub-agent's thread; the end of each of its turns is reported with its last message. */
  observe(event: Extract<CodexEvent, { kind: "child_message" | "child_turn_completed" }>): void {
    const child = this.#children.get(event.threadId);
    if (child === undefined) return;
    if (event.kind === "child_message") {
      child.lastText = event.text;
      return;
    }
    const summary = event.error ?? child.lastText;
    this.emit({
      type: "subagent.observed",
      turnId: child.hostTurnId,
      nativeId: event.threadId,
      ...(child.title !== null ? { title: child.title } : {}),
      status: event.status,
      ...(summary !== null ? { summary } : {}),
      nativeThreadId: event.threadId,
    });
  }
}
