import type { PluginLogger, RuntimeRequestBook } from "@switchyard/sdk";
import type { ServerRequest, ServerRequestParams, v2 } from "../codex-wire.js";
import { appServerModeSettings } from "../shared/codex-runtime-modes.js";
import { approvalRequestOf, approvalResponseOf, isToolCallApproval, type ApprovalMethod } from "./codex-approvals.js";
import type { CodexTurn } from "./codex-turn.js";

/** What answering Codex's requests needs from the session. */
export interface CodexServerRequestDeps {
  readonly logger: PluginLogger;
  /** The session's runtime requests; the native handle is the JSON-RPC id of Codex's request. */
  readonly requests: RuntimeRequestBook<string | number>;
  /** The running turn a request belongs to (of this thread, or of a sub-agent it spawned), if any. */
  turnForRequest(threadId: string, codexTurnId: string | null): CodexTurn | null;
  /** Whether `threadId` is one of the session's own sub-agents (its requests name that child). */
  isSubagentThread(threadId: string): boolean;
  /** Reports a warning once per session. */
  warnOnce(message: string): void;
}

/**
 * Answers the requests `codex app-server` sends the client. Approvals become runtime requests
 * (unless the turn's runtime mode accepts them itself) and wait for the host's answer; a
 * dismissal, the turn's end or the session's end answer Codex `cancel`. Structured questions
 * and dynamic tools are not offered, so they get a refusal Codex can go on with.
 */
export class CodexServerRequests {
  constructor(private readonly deps: CodexServerRequestDeps) {}

  /** The answer to one server request. */
  handle(request: ServerRequest): Promise<unknown> {
    switch (request.method) {
      case "item/commandExecution/requestApproval":
      case "item/fileChange/requestApproval":
      case "item/permissions/requestApproval":
        return this.#approval(
          request.method,
          request.params,
          request.id,
          request.params.threadId,
          request.params.turnId,
        );
      case "mcpServer/elicitation/request": {
        const params = request.params;
        if (isToolCallApproval(params) || params.mode === "url")
          return this.#approval(request.method, params, request.id, params.threadId, params.turnId);
        this.deps.warnOnce(
          `Declined a form elicitation from MCP server "${params.serverName}": this driver does not take structured questions.`,
        );
        return Promise.resolve({
          action: "cancel",
          content: null,
          _meta: null,
        } satisfies v2.McpServerElicitationRequestResponse);
      }
      case "item/tool/requestUserInput":
        this.deps.warnOnce(
          "Codex asked a structured question (request_user_input); this driver does not take them, so it got no answers.",
        );
        return Promise.resolve({ answers: {} } satisfies v2.ToolRequestUserInputResponse);
      case "item/tool/call":
        return Promise.resolve({
          contentItems: [{ type: "inputText", text: "Switchyard registers no dynamic tools." }],
          success: false,
        } satisfies v2.DynamicToolCallResponse);
      default:
        return Promise.reject(new Error(`Switchyard does not handle ${request.method}.`));
    }
  }

  async #approval<M extends ApprovalMethod>(
    method: M,
    params: ServerRequestParams<M>,
    rpcId: string | number,
    threadId: string,
    codexTurnId: string | null,
  ): Promise<unknown> {
    const turn = this.deps.turnForRequest(threadId, codexTurnId);
    if (turn === null) {
      this.deps.logger.warn("An approval request outside a running turn was cancelled", { method });
      return approvalResponseOf(method, params, "cancel");
    }
    const mode = appServerModeSettings(turn.runtimeMode);
    if (mode.autoAcceptAll || (mode.autoAcceptFileChanges && method === "item/fileChange/requestApproval")) {
      return approvalResponseOf(method, params, "accept");
    }
    const itemId = (params as { itemId?: unknown }).itemId;
    const fileChange = typeof itemId === "string" ? turn.fileChange(itemId) : undefined;
    // A spawned sub-agent's thread asks through ours: the request names that child (its native
    // id is its thread id).
    const { outcome } = this.deps.requests.open(
      turn.hostTurnId,
      approvalRequestOf(method, params, fileChange !== undefined ? { fileChange } : {}),
      rpcId,
      this.deps.isSubagentThread(threadId) ? { subagentNativeId: threadId } : {},
    );
    const settled = await outcome;
    if (settled.kind === "cancelled" || settled.response.kind !== "approval")
      return approvalResponseOf(method, params, "cancel");
    const { decision } = settled.response;
    // Codex reports a declined call as failed; the ledger reports it as declined.
    if (decision === "decline" && typeof itemId === "string") turn.ledger.declineTool(itemId);
    return approvalResponseOf(method, params, decision);
  }
}
