import type { AdapterEvent, SubagentObservedEvent, TurnUsageReport as TurnUsage } from "@switchyard/spec";

/** What a harness tells about one of its own sub-agents; every field may come at any time. @experimental */
export interface NativeSubagentFacts {
  /** Its title or short description. */
  readonly title?: string;
  /** The parent's tool call that spawned it. */
  readonly parentItemId?: string;
  /** The instructions it was given. */
  readonly task?: string;
  /** Its agent type or role. */
  readonly agentType?: string;
  /** The model it runs on. */
  readonly model?: string;
  /** Its own thread or session id in the harness. */
  readonly nativeThreadId?: string;
}

/** How a native sub-agent ended. @experimental */
export interface NativeSubagentEnding {
  readonly status: "completed" | "failed";
  /** Its result (kept to {@link SUMMARY_LIMIT} characters). */
  readonly summary?: string;
  /** What it used, when the harness reports it per sub-agent. */
  readonly usage?: TurnUsage;
}

type Snapshot = Omit<SubagentObservedEvent, "type" | "turnId" | "status" | "usage">;

/** The most of a sub-agent's result kept in its `summary`. @experimental */
export const SUMMARY_LIMIT = 2_000;

/** Why an open sub-agent is closed when its turn ends first. @experimental */
export const UNFINISHED_SUBAGENT_SUMMARY = "The turn ended before this sub-agent reported a result.";

/**
 * A turn's native sub-agents, as a harness reports them, turned into the spec's events: every
 * `subagent.observed` is a full snapshot (a field once known is repeated), each child ends
 * exactly once, its transcript comes as `subagent.message` between, and a child still open when
 * the turn ends is closed as failed, since its result never came. One per turn; plugins only say
 * what their harness said.
 *
 * @experimental
 */
export class NativeSubagentBook {
  readonly #open = new Map<string, Snapshot>();
  readonly #ended = new Set<string>();
  #messages = 0;
  readonly #messageIds = new Set<string>();

  constructor(
    private readonly turnId: string,
    private readonly emit: (event: AdapterEvent) => void,
  ) {}

  /** True while the sub-agent with this id was spawned and has not ended. */
  isOpen(nativeId: string): boolean {
    return this.#open.has(nativeId);
  }

  /** The ids of the sub-agents still open. */
  get openIds(): readonly string[] {
    return [...this.#open.keys()];
  }

  /** A sub-agent started (`running`). A second call for the same id is an update. */
  spawned(nativeId: string, facts: NativeSubagentFacts = {}): void {
    if (this.#ended.has(nativeId)) return;
    this.update(nativeId, facts, true);
  }

  /**
   * New facts about a running sub-agent: reported (`running`, the whole snapshot) only when they
   * change something. Facts about an unknown or ended sub-agent are ignored.
   */
  update(nativeId: string, facts: NativeSubagentFacts, spawning = false): void {
    const known = this.#open.get(nativeId);
    if (known === undefined && !spawning) return;
    const next: Snapshot = { ...(known ?? { nativeId }), ...definedFacts(facts) };
    if (known !== undefined && sameSnapshot(known, next)) return;
    this.#open.set(nativeId, next);
    this.emit({ type: "subagent.observed", turnId: this.turnId, ...next, status: "running" });
  }

  /**
   * A piece of its transcript. Text for an unknown or ended sub-agent, empty text and an
   * `itemId` already reported are dropped.
   */
  message(nativeId: string, role: "user" | "assistant", text: string, itemId?: string): void {
    if (!this.#open.has(nativeId) || text === "") return;
    const id = itemId ?? `${nativeId}:message:${this.#messages++}`;
    // Harnesses repeat a finished part; its text is reported once.
    if (this.#messageIds.has(id)) return;
    this.#messageIds.add(id);
    this.emit({
      type: "subagent.message",
      turnId: this.turnId,
      nativeId,
      itemId: id,
      role,
      text,
    });
  }

  /** It ended. Returns false (and reports nothing) when it was not open. */
  finished(nativeId: string, ending: NativeSubagentEnding, facts: NativeSubagentFacts = {}): boolean {
    const known = this.#open.get(nativeId);
    if (known === undefined) return false;
    this.#open.delete(nativeId);
    this.#ended.add(nativeId);
    const summary = ending.summary?.slice(0, SUMMARY_LIMIT);
    this.emit({
      type: "subagent.observed",
      turnId: this.turnId,
      ...known,
      ...definedFacts(facts),
      status: ending.status,
      ...(summary !== undefined && summary !== "" ? { summary } : {}),
      ...(ending.usage !== undefined && Object.keys(ending.usage).length > 0 ? { usage: ending.usage } : {}),
    });
    return true;
  }

  /** The turn ended: every sub-agent still open failed, its result never having come. */
  closeOpen(summary: string = UNFINISHED_SUBAGENT_SUMMARY): void {
    for (const nativeId of [...this.#open.keys()]) this.finished(nativeId, { status: "failed", summary });
  }
}

function definedFacts(facts: NativeSubagentFacts): NativeSubagentFacts {
  return Object.fromEntries(
    Object.entries(facts).filter(([, value]) => typeof value === "string" && value !== ""),
  ) as NativeSubagentFacts;
}

function sameSnapshot(a: Snapshot, b: Snapshot): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => a[key as keyof Snapshot] === b[key as keyof Snapshot]);
}
