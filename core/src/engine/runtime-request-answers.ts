import type { RuntimeRequestResponse } from "../spec/index.js";
import type { RuntimeRequestRecord } from "../store/records.js";
import { derive } from "../util/ids.js";
import type { CommandContext } from "./command-context.js";
import { EFFECT, type RequestRespondPayload } from "./effects.js";
import { OrchestratorFailure } from "./orchestrator-failure.js";

/**
 * Records the answer to a pending runtime request and queues its delivery to the provider. The
 * request settles when the provider confirms (or expires when its session is gone).
 */
export async function answerRuntimeRequest(
  ctx: CommandContext,
  requestId: string,
  response: RuntimeRequestResponse,
): Promise<RuntimeRequestRecord> {
  const request = await ctx.get("runtimeRequest", requestId);
  if (request === null)
    throw new OrchestratorFailure("invalid_request", `Runtime request ${requestId} does not exist.`, { requestId });
  if (request.status !== "pending" || request.response !== null) {
    throw new OrchestratorFailure(
      "invalid_request",
      `Runtime request ${requestId} is already ${request.response !== null && request.status === "pending" ? "answered" : request.status}.`,
      { requestId },
    );
  }
  if (response.kind === "approval" && request.kind !== "approval")
    throw new OrchestratorFailure(
      "invalid_request",
      `Runtime request ${requestId} is a question; answer it with answers, not a decision.`,
    );
  if (response.kind === "user_input" && request.kind !== "user_input")
    throw new OrchestratorFailure(
      "invalid_request",
      `Runtime request ${requestId} is an approval; answer it with a decision.`,
    );
  const answered = ctx.put("runtimeRequest", { ...request, response });
  ctx.effect({
    id: derive.effect(EFFECT.requestRespond, request.id),
    lane: request.threadId,
    type: EFFECT.requestRespond,
    payload: { requestId: request.id } satisfies RequestRespondPayload,
  });
  return answered;
}
