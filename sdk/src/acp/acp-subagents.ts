import type * as acp from "@agentclientprotocol/sdk/unstable";

/**
 * An agent's own sub-agents, as ACP's draft subagent sessions report them (`/unstable`
 * `subagent_update`, negotiated by `sessionCapabilities.subagents` and the client's
 * `subagents` capability). Switchyard only observes them (`subagent.observed`): it never
 * messages, cancels or loads a child session, and its own sub-agents stay orchestrator-owned
 * threads. Child traffic (`session/update` under the child's session id) is not part of the
 * parent's conversation: of an announced child, its model (`config_option_update`) and its
 * assistant text (`subagent.message`, the last one its summary) are kept; the rest, and every
 * other session's, is dropped.
 */

/** How an observed sub-agent is doing, in `subagent.observed` terms. @experimental */
export type ObservedSubagentStatus = "running" | "completed" | "failed";

/** One sub-agent as known so far (the patches merged). @experimental */
export interface ObservedSubagent {
  /** The child's ACP session id. */
  readonly nativeId: string;
  /** Its display title, else its description (the role or task the parent gave it). */
  readonly title?: string;
  /** Its description: the task the parent gave it (codex-acp sends the spawn message). */
  readonly task?: string;
  /** The model it runs on, from its own session's `model` config option. */
  readonly model?: string;
  /** Its state, or null while the agent has not said (or cannot tell). */
  readonly status: ObservedSubagentStatus | null;
}

/**
 * A state snapshot as a status: working or waiting for the user is `running`; idle after
 * `end_turn` (or an unreported stop, or one cut short by a limit) is `completed`; idle after a
 * refusal, a cancel or an error is `failed`. `unknown`, a cleared state and future states say
 * nothing.
 *
 * @experimental
 */
export function observedStatusOf(state: acp.StateUpdate | null | undefined): ObservedSubagentStatus | null {
  if (state === null || state === undefined) return null;
  switch (state.state) {
    case "running":
    case "requires_action":
      return "running";
    case "idle": {
      const stopReason = (state as { stopReason?: unknown }).stopReason;
      if (stopReason === undefined || stopReason === null) return "completed";
      return stopReason === "end_turn" || stopReason === "max_tokens" || stopReason === "max_turn_requests"
        ? "completed"
        : "failed";
    }
    default:
      return null;
  }
}

interface KnownSubagent {
  title: string | null;
  description: string | null;
  model: string | null;
  status: ObservedSubagentStatus | null;
}

/**
 * The sub-agents a session's agent announced, each patch merged as the draft says: an omitted
 * field keeps its value, `null` clears it. Children outlive a turn (an idle child can be given
 * more work), so this belongs to the session, not to a turn.
 *
 * @experimental
 */
export class ObservedSubagents {
  readonly #known = new Map<string, KnownSubagent>();

  /** Merges one `subagent_update` and returns the child as it now stands. */
  apply(update: acp.SubagentUpdate): ObservedSubagent {
    const known = this.#known.get(update.sessionId) ?? { title: null, description: null, model: null, status: null };
    if (update.title !== undefined) known.title = update.title;
    if (update.description !== undefined) known.description = update.description;
    if (update.state !== undefined) known.status = observedStatusOf(update.state);
    this.#known.set(update.sessionId, known);
    return snapshotOf(update.sessionId, known);
  }

  /** True when the agent announced a child with this session id. */
  has(childSessionId: string): boolean {
    return this.#known.has(childSessionId);
  }

  /**
   * The model an announced child's own session reports, merged: the child as it now stands, or
   * null for a session the agent never announced as a child (its traffic is not ours).
   */
  applyModel(childSessionId: string, model: string): ObservedSubagent | null {
    const known = this.#known.get(childSessionId);
    if (known === undefined) return null;
    known.model = model;
    return snapshotOf(childSessionId, known);
  }
}

function snapshotOf(nativeId: string, known: KnownSubagent): ObservedSubagent {
  const title = known.title ?? known.description;
  return {
    nativeId,
    ...(title !== null && title.length > 0 ? { title } : {}),
    ...(known.description !== null && known.description.length > 0 ? { task: known.description } : {}),
    ...(known.model !== null && known.model.length > 0 ? { model: known.model } : {}),
    status: known.status,
  };
}
