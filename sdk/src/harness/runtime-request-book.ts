import {
  SwitchyardError,
  type AdapterEvent,
  type ApprovalRequest,
  type RuntimeRequestResponse,
  type UserInputRequest,
} from "@switchyard/spec";

/** How a runtime request ended, as the session that opened it sees it. @public */
export type RuntimeRequestOutcome =
  /** The host answered with a decision or answers. */
  | { readonly kind: "answered"; readonly response: Exclude<RuntimeRequestResponse, { kind: "dismiss" }> }
  /**
   * Declined without an answer: the host dismissed it, the turn ended, the session closed, or
   * the harness withdrew it. Tell the harness "cancel".
   */
  | { readonly kind: "cancelled"; readonly resolution: "cancelled" | "expired"; readonly dismissed: boolean };

/** A request still waiting for the host. @public */
export interface OpenRuntimeRequest<TNative> {
  readonly requestId: string;
  readonly turnId: string;
  readonly request: ApprovalRequest | UserInputRequest;
  /** Whatever the session needs to answer the harness (a JSON-RPC id, a tool call id…). */
  readonly native: TNative;
}

interface Entry<TNative> extends OpenRuntimeRequest<TNative> {
  settle(outcome: RuntimeRequestOutcome): void;
}

/**
 * The runtime requests (approvals and questions) a session opened, and their one resolution
 * each. The semantics are the spec's, the same for every provider:
 * - an answer resolves `answered`;
 * - `dismiss` resolves `cancelled` (the harness is told to cancel);
 * - the end of a turn cancels that turn's requests (`cancelled`), and the end of the session
 *   cancels or expires the rest;
 * - every request gets exactly one `runtime_request.resolved`.
 * @public
 */
export class RuntimeRequestBook<TNative = undefined> {
  readonly #open = new Map<string, Entry<TNative>>();
  #counter = 0;

  constructor(
    private readonly emit: (event: AdapterEvent) => void,
    /** Prefix of request ids, unique within the session (`codex-request`). */
    private readonly idPrefix = "request",
  ) {}

  /**
   * Opens a request in a turn and reports `runtime_request.opened`. The promise settles once,
   * with the host's answer or a cancellation. `origin.subagentNativeId` names the provider's own
   * sub-agent that asks through the root session, when one does.
   */
  open(
    turnId: string,
    request: ApprovalRequest | UserInputRequest,
    native: TNative,
    origin: { readonly subagentNativeId?: string } = {},
  ): { readonly requestId: string; readonly outcome: Promise<RuntimeRequestOutcome> } {
    const requestId = `${turnId}:${this.idPrefix}:${++this.#counter}`;
    let resolve!: (outcome: RuntimeRequestOutcome) => void;
    const outcome = new Promise<RuntimeRequestOutcome>((r) => (resolve = r));
    this.#open.set(requestId, {
      requestId,
      turnId,
      request,
      native,
      settle: (result) => {
        if (!this.#open.delete(requestId)) return;
        resolve(result);
        this.emit({
          type: "runtime_request.resolved",
          turnId,
          requestId,
          resolution: result.kind === "answered" ? "answered" : result.resolution,
        });
      },
    });
    this.emit({
      type: "runtime_request.opened",
      turnId,
      requestId,
      request,
      ...(origin.subagentNativeId !== undefined ? { subagentNativeId: origin.subagentNativeId } : {}),
    });
    return { requestId, outcome };
  }

  /** Answers a request from the host. Throws `not_found` for an unknown one and `invalid_input` for a wrong kind of answer. */
  respond(requestId: string, response: RuntimeRequestResponse): void {
    const entry = this.#open.get(requestId);
    if (entry === undefined) {
      throw new SwitchyardError(
        "not_found",
        `No pending runtime request "${requestId}" in this session; it may have been answered or cancelled.`,
        { requestId },
      );
    }
    if (response.kind === "dismiss") {
      entry.settle({ kind: "cancelled", resolution: "cancelled", dismissed: true });
      return;
    }
    if (response.kind !== entry.request.kind) {
      const wanted = entry.request.kind === "approval" ? "a decision" : "answers";
      throw new SwitchyardError(
        "invalid_input",
        `Runtime request "${requestId}" is ${entry.request.kind === "approval" ? "an approval" : "a question"}; answer it with ${wanted}.`,
        {
          requestId,
          kind: response.kind,
        },
      );
    }
    entry.settle({ kind: "answered", response });
  }

  /** Cancels one request the harness withdrew or resolved itself. */
  cancel(requestId: string, resolution: "cancelled" | "expired" = "cancelled"): void {
    this.#open.get(requestId)?.settle({ kind: "cancelled", resolution, dismissed: false });
  }

  /** Cancels every request of a turn (its end), or every request (`turnId` null: the session ends). */
  cancelTurn(turnId: string | null, resolution: "cancelled" | "expired" = "cancelled"): void {
    for (const entry of [...this.#open.values()]) {
      if (turnId === null || entry.turnId === turnId) entry.settle({ kind: "cancelled", resolution, dismissed: false });
    }
  }

  /** The open requests (of one turn, when given). */
  pending(turnId?: string): OpenRuntimeRequest<TNative>[] {
    return [...this.#open.values()].filter((entry) => turnId === undefined || entry.turnId === turnId);
  }

  /** The first open request whose native handle matches. */
  find(
    predicate: (native: TNative, request: OpenRuntimeRequest<TNative>) => boolean,
  ): OpenRuntimeRequest<TNative> | undefined {
    return [...this.#open.values()].find((entry) => predicate(entry.native, entry));
  }
}
