import { z } from "zod";
import { ORCHESTRATOR_FAILURE_CODES, type OrchestratorFailureCode } from "../../../engine/orchestrator-failure.js";

/**
 * Failures only the HTTP transport has: no valid token, a refused Host or Origin, a path or
 * method the API does not have, a server at its connection cap or whose database another
 * connection holds locked (server_busy, `details.reason: "store_busy"`), a credential holding its share of
 * the event streams (too_many_streams), and a web-UI session used from another page (cross_origin_refused). Everything an operation
 * refuses uses the orchestration failure codes MCP tools answer with, except a plugin's
 * operations (`/api/v1/plugins/…`), which may also answer that what they name does not exist
 * (not_found), that it conflicts with its state (conflict), or that the plugin's own work
 * failed (plugin_failed, its spec error code in `details.code`).
 */
export const HTTP_FAILURE_CODES = [
  "invalid_token",
  "host_not_allowed",
  "route_not_found",
  "method_not_allowed",
  "server_busy",
  "too_many_streams",
  "cross_origin_refused",
  "not_found",
  "conflict",
  "plugin_failed",
] as const;

export type HttpFailureCode = (typeof HTTP_FAILURE_CODES)[number];
export type ApiFailureCode = OrchestratorFailureCode | HttpFailureCode;

/**
 * The HTTP status of each failure code. Refusals of the caller's rights are 403, things that do
 * not exist 404, a thread, task or provider whose current state refuses the operation 409
 * (the same call may succeed later: retry or wait), and a request naming a model the provider
 * does not advertise 422 (the request itself is wrong, whatever the state).
 */
export const FAILURE_STATUS: Readonly<Record<ApiFailureCode, number>> = {
  invalid_request: 400,
  invalid_token: 401,
  capability_denied: 403,
  runtime_mode_escalation_denied: 403,
  interaction_mode_escalation_denied: 403,
  host_not_allowed: 403,
  cross_origin_refused: 403,
  thread_not_found: 404,
  task_not_found: 404,
  run_not_found: 404,
  route_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  parent_not_active: 409,
  thread_not_sendable: 409,
  thread_not_interruptible: 409,
  task_not_cancellable: 409,
  provider_unavailable: 409,
  conflict: 409,
  model_unavailable: 422,
  too_many_streams: 429,
  orchestration_error: 500,
  plugin_failed: 502,
  server_busy: 503,
};

/** The error body of every failed API call: the same `{ error: { code, message, details } }` MCP tools answer with. */
export const ApiFailureBody = z
  .object({
    error: z.object({
      code: z.enum([...ORCHESTRATOR_FAILURE_CODES, ...HTTP_FAILURE_CODES]).describe("A stable code to branch on."),
      message: z.string().describe("What was wrong and what to do, for a person or a model."),
      details: z
        .record(z.string(), z.unknown())
        .describe("The offending values (field, threadId, required capability, …)."),
    }),
  })
  .describe("A typed failure.");

/** The WWW-Authenticate challenge of every 401: a bearer token (the web UI's session is for its own page only). */
export const BEARER_CHALLENGE = `Bearer realm="switchyard", error="invalid_token"`;

/** A failure the HTTP transport answers before (or instead of) an operation: a code, a message, and the status when it differs from the code's. */
export class ApiFailure extends Error {
  constructor(
    readonly code: ApiFailureCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly status: number = FAILURE_STATUS[code],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiFailure";
  }
}
