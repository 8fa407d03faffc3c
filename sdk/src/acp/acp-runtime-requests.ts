import type * as acp from "@agentclientprotocol/sdk/unstable";
import type {
  AdapterEvent,
  ApprovalRequest,
  PluginLogger,
  RuntimeRequestResponse,
  UserInputRequest,
} from "@switchyard/spec";
import { RuntimeRequestBook, type RuntimeRequestOutcome } from "../harness/index.js";
import type { SerialQueue } from "./acp-connection.js";
import { elicitationApproval, elicitationQuestions, elicitationResponse } from "./acp-elicitation.js";
import { automaticOutcome, outcomeForDecision, permissionApproval } from "./acp-permissions.js";
import type { AcpTurn } from "./acp-turn.js";

const CANCELLED: RuntimeRequestOutcome = { kind: "cancelled", resolution: "cancelled", dismissed: false };

/** Who asks: the agent's own sub-agent (its session id) when the request came under a child's session. */
export interface RequestOrigin {
  readonly subagentNativeId?: string;
}

/**
 * What an ACP agent asks the person (`session/request_permission`, `elicitation/create`, a
 * flavor's extension), kept in the kit's {@link RuntimeRequestBook}. Opening and answering run
 * in the session's queue, so `runtime_request.*` stay in order with the turn's updates; a
 * request the agent withdraws (its abort signal) is cancelled, and a runtime mode that answers
 * for itself never asks.
 */
export class AcpRuntimeRequests {
  readonly book: RuntimeRequestBook<undefined>;

  constructor(
    emit: (event: AdapterEvent) => void,
    private readonly queue: SerialQueue,
    /** The running turn, if any. */
    private readonly activeTurn: () => AcpTurn | null,
    /** True once nothing can be asked any more (the session closed, the agent died). */
    private readonly gone: () => boolean,
    private readonly logger: PluginLogger,
  ) {
    this.book = new RuntimeRequestBook<undefined>(emit, "request");
  }

  /** Opens a request in `turnId` (`origin`: the agent's own sub-agent that asks); a turn that is no longer running gets `cancelled`. */
  open(
    turnId: string,
    request: ApprovalRequest | UserInputRequest,
    signal?: AbortSignal,
    origin: RequestOrigin = {},
  ): Promise<RuntimeRequestOutcome> {
    if (this.gone()) return Promise.resolve(CANCELLED);
    // The task hands the outcome out wrapped: a promise returned as is would hold the queue until the answer.
    const opened = this.queue.call((): { outcome: Promise<RuntimeRequestOutcome> } => {
      const turn = this.activeTurn();
      if (turn === null || turn.turnId !== turnId || turn.terminated) return { outcome: Promise.resolve(CANCELLED) };
      const { requestId, outcome } = this.book.open(turnId, request, undefined, origin);
      if (signal !== undefined) {
        const withdraw = () => void this.queue.run(() => this.book.cancel(requestId));
        if (signal.aborted) withdraw();
        else {
          signal.addEventListener("abort", withdraw, { once: true });
          void outcome.then(() => signal.removeEventListener("abort", withdraw));
        }
      }
      return { outcome };
    });
    return opened.then((handle) => handle.outcome);
  }

  /** The host's answer (a dismissal cancels; typed errors for an unknown request or a wrong kind of answer). */
  respond(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    return this.queue.call(() => this.book.respond(requestId, response));
  }

  /** `session/request_permission`: answered by the runtime mode when it allows, else by the host. */
  async answerPermission(
    params: acp.RequestPermissionRequest,
    signal: AbortSignal,
    origin: RequestOrigin = {},
  ): Promise<acp.RequestPermissionResponse> {
    const turn = this.activeTurn();
    if (turn === null || turn.terminated) {
      this.logger.warn("Permission request outside a turn answered cancelled", {
        toolCallId: params.toolCall.toolCallId,
      });
      return { outcome: { outcome: "cancelled" } };
    }
    const automatic = automaticOutcome(turn.runtimeMode, params.toolCall.kind, params.options);
    if (automatic !== null) return { outcome: automatic };
    const outcome = await this.open(turn.turnId, permissionApproval(params), signal, origin);
    if (outcome.kind === "cancelled" || outcome.response.kind !== "approval")
      return { outcome: { outcome: "cancelled" } };
    if (outcome.response.decision === "decline") turn.declineTool(params.toolCall.toolCallId);
    return { outcome: outcomeForDecision(outcome.response.decision, params.options) };
  }

  /** `elicitation/create`: a form becomes questions, a URL an approval. */
  async answerElicitation(
    params: acp.CreateElicitationRequest,
    signal: AbortSignal,
    origin: RequestOrigin = {},
  ): Promise<acp.CreateElicitationResponse> {
    const turn = this.activeTurn();
    if (turn === null || turn.terminated) return { action: "cancel" };
    const request = params.mode === "url" ? elicitationApproval(params) : elicitationQuestions(params);
    const outcome = await this.open(turn.turnId, request, signal, origin);
    return outcome.kind === "cancelled" ? { action: "cancel" } : elicitationResponse(params, outcome.response);
  }
}
