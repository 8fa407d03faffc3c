import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../logging/logger.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { ApiFailure, ApiRouter } from "./api/index.js";
import { checkLoopbackRequest } from "./loopback-guard.js";
import { isLoopbackAddress, urlHost, type LoopbackListener } from "./loopback-listener.js";
import type { RequestTurns } from "./request-turns.js";
import { closeConnectionOnErrorStatus } from "./server-limits.js";
import type { ServerEndpoints } from "./server-endpoints.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function apiFailure(res: ServerResponse, failure: ApiFailure): void {
  json(
    res,
    failure.status,
    { error: { code: failure.code, message: failure.message, details: failure.details } },
    failure.headers,
  );
}

/** Starts `handle` in its turn; a failure it throws is logged and answered with `fail` (or ends a started response). */
function queued(
  turns: RequestTurns,
  res: ServerResponse,
  logger: Logger,
  what: string,
  handle: () => Promise<void>,
  fail: () => void,
): void {
  turns.enqueue(() => {
    if (res.destroyed) return;
    handle().catch((error: unknown) => {
      logger.error(`${what} request failed`, { error: (error as Error).message });
      if (!res.headersSent) fail();
      else res.end();
    });
  });
}

/**
 * The request handler of one listener: the connection cap and the loopback rules first, then
 * the path decides: the HTTP API, webhooks, /mcp, /health, else the web UI.
 */
export function requestRouter(
  listener: LoopbackListener,
  endpoints: ServerEndpoints,
  turns: RequestTurns,
  logger: Logger,
  environmentId: string,
): Handler {
  const { api, hooks, mcp, webApp } = endpoints;
  return (req, res) => {
    const cap = listener.cap;
    closeConnectionOnErrorStatus(res);
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    // The API answers every refusal in its own failure shape; /mcp and /health keep theirs.
    const isApi = ApiRouter.owns(path);
    if (cap.isOverCap(req.socket)) {
      const message = `Switchyard has ${cap.maxConnections} open connections (server.maxConnections); retry shortly.`;
      if (isApi)
        apiFailure(
          res,
          new ApiFailure("server_busy", message, { maxConnections: cap.maxConnections }, 503, { "retry-after": "1" }),
        );
      else json(res, 503, { error: "server_busy", error_description: message }, { "retry-after": "1" });
      return;
    }
    // Beyond loopback, TLS and the bearer credential stand in for the Host rule: no browser page
    // gets a TLS session to this server under its own name. Origins stay loopback-only.
    const refused = checkLoopbackRequest(req, {
      anyHostName: hooks.owns(path) || !isLoopbackAddress(listener.host),
      boundHost: urlHost(listener.host),
    });
    if (refused !== null) {
      if (isApi)
        apiFailure(
          res,
          new ApiFailure(
            refused.status === 403 ? "host_not_allowed" : "invalid_request",
            refused.description,
            {},
            refused.status,
          ),
        );
      else json(res, refused.status, { error: refused.error, error_description: refused.description });
      return;
    }
    const internalError = () => json(res, 500, { error: "internal_error" });
    if (isApi)
      queued(
        turns,
        res,
        logger,
        "API",
        () => api.handle(req, res),
        () => apiFailure(res, new ApiFailure("orchestration_error", "The request failed inside the server.")),
      );
    else if (hooks.owns(path)) queued(turns, res, logger, "webhook", () => hooks.handle(req, res, path), internalError);
    else if (path === "/mcp") queued(turns, res, logger, "MCP", () => mcp.handle(req, res), internalError);
    else if (path === "/health") json(res, 200, { status: "ok", version: HOST_VERSION, environmentId });
    // Everything else is the web UI (its client routes included).
    else webApp.handle(req, res, path);
  };
}
