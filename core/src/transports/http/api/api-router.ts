import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { isOrchestratorFailure } from "../../../engine/orchestrator-failure.js";
import type { Logger } from "../../../logging/logger.js";
import { isStoreBusy } from "../../../util/store-busy.js";
import type { Caller } from "../../../services/caller.js";
import type { McpSessionRegistry } from "../../../services/credentials/mcp-session-registry.js";
import { ClientRequestId } from "../../../contract/fields.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { scopeRefs } from "../../scope-refs.js";
import { resolveThreadRefs } from "../../thread-refs.js";
import { BodyError, protoKeyPath, readJsonBody } from "../../request-body.js";
import { ApiFailure, BEARER_CHALLENGE, FAILURE_STATUS } from "./api-errors.js";
import type { ApiRoute } from "./api-route.js";
import type { ApiServices } from "./api-services.js";
import { buildOpenApiDocument } from "./openapi-document.js";
import { queryValues } from "./query-values.js";
import {
  checkSameOrigin,
  readPageSecret,
  readSessionCookie,
  requestOrigin,
  webSessionRefused,
} from "./web-session-cookie.js";

/** Where the API lives on the server. */
export const API_PREFIX = "/api/v1";

interface CompiledRoute {
  readonly route: ApiRoute;
  readonly pattern: RegExp;
  readonly paramNames: readonly string[];
}

/** Nobody: the caller of a public route, who may use nothing. */
const ANONYMOUS: Caller = {
  kind: "client",
  threadId: null,
  projectId: null,
  providerInstanceId: null,
  providerSessionId: null,
  requestScope: "anonymous",
  capabilities: new Set(),
  projects: [],
  ceiling: { runtimeMode: "approval-required", interactionMode: "plan" },
  transport: "api",
};

/**
 * A token-shaped string in a URL: `sy_` and at least 40 more characters of a secret (every secret
 * Switchyard makes has 43 random ones after its prefix), not inside a longer word. Ids may hold
 * `sy_` too (a derived id is base64url), and one that did must not make its thread unreachable.
 */
const TOKEN_IN_URL = /(?<![A-Za-z0-9])sy_[A-Za-z0-9_-]{40,}/;
const TOKEN_PARAMETERS = new Set(["access_token", "token", "bearer", "authorization", "api_key", "apikey"]);

function compile(route: ApiRoute): CompiledRoute {
  const paramNames: string[] = [];
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_match, name: string) => {
    paramNames.push(name);
    return "([^/]+)";
  });
  return { route, pattern: new RegExp(`^${source}$`), paramNames };
}

function issuesMessage(
  error: z.ZodError,
  location: string,
): { message: string; issues: { field: string; message: string }[] } {
  const issues = error.issues.slice(0, 5).map((issue) => ({
    field: [location, ...issue.path.map(String)].filter((part) => part !== "").join(".") || "(input)",
    message: issue.message,
  }));
  return { message: issues.map((issue) => `${issue.field}: ${issue.message}`).join("; "), issues };
}

function parsePart<T extends z.ZodType>(schema: T, value: unknown, location: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { message, issues } = issuesMessage(parsed.error, location);
  throw new ApiFailure("invalid_request", `Invalid ${location || "input"}: ${message}`, {
    field: issues[0]?.field ?? location,
    issues,
  });
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  if (length !== undefined) return Number(length) > 0;
  return req.headers["transfer-encoding"] !== undefined;
}

function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && value.split(";")[0]!.trim().toLowerCase() === "application/json";
}

/**
 * The HTTP API under `/api/v1`: a route table, one handler per operation. For every request it
 * authenticates the bearer token (before anything is read), checks the route's capability,
 * reads and validates path, query and body with the shared schemas, maps `Idempotency-Key` to
 * the operation's retry key, checks the token's projects, then calls the services and shapes
 * the answer. Failures are `{ error: { code, message, details } }` with the code's status.
 * Other transports' routes register here too (`register`), and the OpenAPI document is
 * generated from whatever is registered.
 */
export class ApiRouter {
  private readonly compiled: CompiledRoute[] = [];
  private document: Record<string, unknown> | null = null;

  constructor(
    private readonly registry: McpSessionRegistry,
    private readonly services: ApiServices,
    private readonly logger: Logger,
    private readonly limits: { readonly maxRequestBodyBytes: number },
    routes: readonly ApiRoute[] = [],
  ) {
    for (const route of routes) this.register(route);
  }

  /** Adds a route. Its method and path, and its operationId, must be new. */
  register(route: ApiRoute): void {
    for (const { route: existing } of this.compiled) {
      if (existing.operationId === route.operationId)
        throw new Error(`API operation ${route.operationId} is registered twice.`);
      if (existing.method === route.method && existing.path === route.path)
        throw new Error(`API route ${route.method} ${route.path} is registered twice.`);
    }
    this.compiled.push(compile(route));
    this.document = null;
  }

  /** The registered routes, in registration order. */
  routes(): readonly ApiRoute[] {
    return this.compiled.map((entry) => entry.route);
  }

  /** The OpenAPI 3.1 document of the registered routes (served at /api/v1/openapi.json). */
  openApiDocument(): Record<string, unknown> {
    this.document ??= buildOpenApiDocument(this.routes());
    return this.document;
  }

  /** Whether a path belongs to the API. */
  static owns(path: string): boolean {
    return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let operationId: string | null = null;
    try {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      this.refuseTokenInUrl(url);
      const path = url.pathname.slice(API_PREFIX.length) || "/";
      const method = req.method ?? "GET";
      const matches = this.compiled
        .map((entry) => ({ entry, match: entry.pattern.exec(path) }))
        .filter((candidate) => candidate.match !== null);
      const found = matches.find((candidate) => candidate.entry.route.method === method);
      const route = found?.entry.route;
      const caller = route?.requires === null ? ANONYMOUS : await this.authenticate(req);
      if (found === undefined || route === undefined) {
        if (matches.length > 0) {
          const allow = [...new Set(matches.map((candidate) => candidate.entry.route.method))].join(", ");
          throw new ApiFailure(
            "method_not_allowed",
            `${method} is not allowed on ${API_PREFIX}${path}; use ${allow}.`,
            { method, allow },
            405,
            { allow },
          );
        }
        throw new ApiFailure(
          "route_not_found",
          `There is no ${API_PREFIX}${path}. The operations are listed in ${API_PREFIX}/openapi.json.`,
          { path: `${API_PREFIX}${path}` },
        );
      }
      operationId = route.operationId;
      const refusal = route.requires === null ? null : this.services.callers.refusalOf(caller, route.requires);
      if (refusal !== null) {
        const message =
          refusal.reason === "verb" && route.requires !== "orchestration:install"
            ? `This token lacks the ${route.requires} capability that ${route.operationId} needs.`
            : `${route.operationId}: ${refusal.message}`;
        throw new ApiFailure("capability_denied", message, { required: route.requires, reason: refusal.reason });
      }
      // A link or web URL of a thread here becomes its id before the scope check reads it.
      const input = resolveThreadRefs(await this.readInput(req, url, found.entry, found.match!), (value, field) =>
        this.services.threadLinks.threadIdOf(value, field),
      );
      await this.services.callers.requireInScope(caller, scopeRefs(input));
      const controller = new AbortController();
      const onClose = () => {
        if (!res.writableFinished) controller.abort();
      };
      res.on("close", onClose);
      const context = {
        caller,
        services: this.services,
        signal: controller.signal,
        request: req,
        response: res,
        document: () => this.openApiDocument(),
      };
      // A stream's handler writes the response itself and may return while it streams: the
      // signal then stays armed until the client goes.
      if (route.produces === "text/event-stream") {
        await route.handle(input, context);
        return;
      }
      try {
        const output = await route.handle(input, context);
        this.write(res, route.status ?? 200, route.output.parse(output));
      } finally {
        res.off("close", onClose);
      }
    } catch (error) {
      this.fail(res, error, operationId);
    }
  }

  private refuseTokenInUrl(url: URL): void {
    const named = [...url.searchParams.keys()].find((name) => TOKEN_PARAMETERS.has(name.toLowerCase()));
    if (named !== undefined || TOKEN_IN_URL.test(url.pathname + url.search)) {
      throw new ApiFailure(
        "invalid_request",
        "A token does not belong in a URL (URLs end up in logs, histories and proxies): send it as Authorization: Bearer <token>. Revoke a token that was sent this way (switchyard token revoke).",
        named !== undefined ? { parameter: named } : {},
      );
    }
  }

  private async authenticate(req: IncomingMessage): Promise<Caller> {
    const header = req.headers.authorization;
    const session = header === undefined ? readSessionCookie(req, this.services.environmentId) : null;
    if (session !== null) return this.authenticateSession(req, session);
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match === null) {
      throw this.unauthorized(
        header === undefined
          ? "Missing Authorization header: send Authorization: Bearer <token> (switchyard token issue)."
          : "Malformed Authorization header: send Authorization: Bearer <token>.",
      );
    }
    const resolved = await this.registry.resolve(match[1]!);
    if ("rejection" in resolved) {
      this.logger.info("API request refused", { reason: resolved.rejection });
      throw this.unauthorized(
        resolved.rejection === "unknown"
          ? "Unknown token."
          : `The token is ${resolved.rejection.replace("_", " ")}; issue a new one (switchyard token issue).`,
      );
    }
    return callerFromScope(resolved.scope, "api");
  }

  /**
   * The web UI's requests: the session cookie acts as the token it was signed in with (the
   * same verbs, projects and ceiling), but only with the session's page secret, at the origin
   * it signed in at; from another page's origin it is refused before that.
   */
  private async authenticateSession(req: IncomingMessage, secret: string): Promise<Caller> {
    checkSameOrigin(req, req.method !== "GET" && req.method !== "HEAD");
    const resolved = await this.services.webSessions.resolve({
      secret,
      pageSecret: readPageSecret(req),
      origin: requestOrigin(req),
    });
    if ("rejection" in resolved) {
      this.logger.info("API session refused", { reason: resolved.rejection });
      throw webSessionRefused(resolved.rejection, requestOrigin(req));
    }
    return callerFromScope(resolved.scope, "api");
  }

  private unauthorized(description: string): ApiFailure {
    return new ApiFailure("invalid_token", description, {}, 401, { "www-authenticate": BEARER_CHALLENGE });
  }

  private async readInput(
    req: IncomingMessage,
    url: URL,
    entry: CompiledRoute,
    match: RegExpExecArray,
  ): Promise<unknown> {
    const { route } = entry;
    const params: Record<string, string> = {};
    for (const [index, name] of entry.paramNames.entries()) {
      try {
        params[name] = decodeURIComponent(match[index + 1]!);
      } catch {
        throw new ApiFailure("invalid_request", `Path parameter ${name} is not valid percent-encoding.`, {
          field: `path.${name}`,
        });
      }
    }
    const fromPath = route.params ? parsePart(route.params, params, "path") : {};
    let fromQuery: Record<string, unknown> = {};
    if (route.query)
      fromQuery = parsePart(route.query, queryValues(url.searchParams, route.query), "query") as Record<
        string,
        unknown
      >;
    else if ([...url.searchParams.keys()].length > 0)
      throw new ApiFailure("invalid_request", `${route.operationId} takes no query parameters.`, { field: "query" });
    let fromBody: Record<string, unknown> = {};
    if (route.body) fromBody = parsePart(route.body, await this.readBody(req), "body") as Record<string, unknown>;
    const key = req.headers["idempotency-key"];
    if (route.inputParts === "separate") {
      if (key !== undefined)
        throw new ApiFailure("invalid_request", `${route.operationId} takes no Idempotency-Key.`, {
          field: "header.Idempotency-Key",
        });
      return parsePart(route.input, { params: fromPath, query: fromQuery, body: fromBody }, "");
    }
    const input: Record<string, unknown> = { ...fromBody, ...fromQuery, ...fromPath };
    if (key !== undefined) {
      if (route.idempotencyKey === undefined) {
        throw new ApiFailure(
          "invalid_request",
          `${route.operationId} takes no Idempotency-Key: it has no retry key (it is safe to repeat, or, for an answer, refused once answered).`,
          { field: "header.Idempotency-Key" },
        );
      }
      const value = parsePart(ClientRequestId, Array.isArray(key) ? key.join(",") : key, "header.Idempotency-Key");
      const inBody = input[route.idempotencyKey];
      if (inBody !== undefined && inBody !== value) {
        throw new ApiFailure(
          "invalid_request",
          `Idempotency-Key and body.${route.idempotencyKey} differ; they are the same retry key, so send one of them (or the same value).`,
          { field: "header.Idempotency-Key" },
        );
      }
      input[route.idempotencyKey] = value;
    }
    return parsePart(route.input, input, "");
  }

  private async readBody(req: IncomingMessage): Promise<unknown> {
    if (!hasBody(req)) return {};
    if (!isJsonContentType(req.headers["content-type"])) {
      throw new ApiFailure(
        "invalid_request",
        `Content-Type must be application/json, not ${JSON.stringify(req.headers["content-type"] ?? null)}.`,
        { field: "header.Content-Type" },
        415,
      );
    }
    let value: unknown;
    try {
      ({ value } = await readJsonBody(req, this.limits.maxRequestBodyBytes));
    } catch (error) {
      if (!(error instanceof BodyError)) throw error;
      if (error.problem === "empty") return {};
      const message = error.problem === "not_json" ? "The request body is not valid JSON." : error.message;
      throw new ApiFailure("invalid_request", message, { field: "body", problem: error.problem }, error.status);
    }
    const proto = protoKeyPath(value);
    if (proto !== null) {
      const field = ["body", ...proto].join(".");
      throw new ApiFailure("invalid_request", `Invalid body: ${field}: the key "__proto__" is not allowed.`, { field });
    }
    return value;
  }

  private write(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed || res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json",
      "cache-control": "no-store",
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  private fail(res: ServerResponse, error: unknown, operationId: string | null): void {
    let failure: ApiFailure;
    if (error instanceof ApiFailure) failure = error;
    else if (isOrchestratorFailure(error)) failure = new ApiFailure(error.code, error.message, { ...error.details });
    // Another connection holds the database locked: nothing was done, and the same request can be made again.
    else if (isStoreBusy(error))
      failure = new ApiFailure(
        "server_busy",
        (error as Error).message,
        { reason: "store_busy" },
        FAILURE_STATUS.server_busy,
        { "retry-after": "1" },
      );
    else {
      this.logger.error("API operation failed", {
        operationId,
        error: (error as Error).message,
        stack: (error as Error).stack,
      });
      failure = new ApiFailure(
        "orchestration_error",
        `${operationId ?? "The request"} failed: ${(error as Error).message}`,
      );
    }
    if (failure.status >= 500)
      this.logger.warn("API request failed", { operationId, status: failure.status, code: failure.code });
    else this.logger.debug("API request refused", { operationId, status: failure.status, code: failure.code });
    if (res.headersSent) {
      res.end();
      return;
    }
    this.write(
      res,
      failure.status ?? FAILURE_STATUS[failure.code],
      { error: { code: failure.code, message: failure.message, details: failure.details } },
      failure.headers,
    );
  }
}
