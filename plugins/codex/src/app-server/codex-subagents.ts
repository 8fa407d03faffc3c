import type { AdapterEvent } from "@switchyard/sdk";
import type { CodexEvent } from "./codex-events.js";

interface ChildThread {
  /** The host turn that spawned it: its outcome is reported there, even after that turn ended. */
  readonly hostTurnId: string;
  /** What is known of it, repeated in each of its events (they are snapshots). */
  readonly facts: ChildFacts;
  lastText: string | null;
  /** Its messages so far, numbering its transcript items. */
  messages: number;
}

/** What a `spawn_agent` call tells of the threads it spawned. */
export interface SpawnFacts {
  /** Its prompt, shown as title and reported as task. */
  readonly title: string | null;
  /** The `spawn_agent` call's item id. */
  readonly parentItemId: string;
  /** The model asked for, when named. */
  readonly model: string | null;
}

interface ChildFacts {
  readonly title?: string;
  readonly task?: string;
  readonly parentItemId: string;
  readonly model?: string;
}

/**
 * Codex's own sub-agents (`spawn_agent`), observed: each runs in its own Codex thread on the same
 * app-server, whose notifications only report how it is doing (`subagent.observed`, a snapshot
 * each time), never the session's turn; its finished assistant messages are its transcript
 * (`subagent.message`). Approvals raised inside one are attributed to the running turn. A child
 * outlives the turn that spawned it (it can be given more work), so this belongs to the session
 * and is not the harness kit's turn-scoped `NativeSubagentBook`.
 */
export class CodexSubagents {
  readonly #children = new Map<string, ChildThread>();

  constructor(private readonly emit: (event: AdapterEvent) => void) {}

  /** True for a Codex thread a turn of this session spawned. */
  has(threadId: string): boolean {
    return this.#children.has(threadId);
  }

  /** A turn spawned these threads: they are reported running. */
  spawned(hostTurnId: string, threadIds: readonly string[], spawn: SpawnFacts): void {
    const facts: ChildFacts = {
      parentItemId: spawn.parentItemId,
      ...(spawn.title !== null ? { title: spawn.title, task: spawn.title } : {}),
      ...(spawn.model !== null ? { model: spawn.model } : {}),
    };
    for (const threadId of threadIds) {
      if (this.#children.has(threadId)) continue;
      this.#children.set(threadId, { hostTurnId, facts, lastText: null, messages: 0 });
      this.emit({
        type: "subagent.observed",
        turnId: hostTurnId,
        nativeId: threadId,
        ...facts,
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
      if (event.text !== "")
        this.emit({
          type: "subagent.message",
          turnId: child.hostTurnId,
          nativeId: event.threadId,
          itemId: `${event.threadId}:message:${child.messages++}`,
          role: "assistant",
          text: event.text,
        });
      return;
    }
    const summary = event.error ?? child.lastText;
    this.emit({
      type: "subagent.observed",
      turnId: child.hostTurnId,
      nativeId: event.threadId,
      ...child.facts,
      status: event.status,
      ...(summary !== null ? { summary } : {}),
      nativeThreadId: event.threadId,
    });
  }
}
