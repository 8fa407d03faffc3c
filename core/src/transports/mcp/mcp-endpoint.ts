import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { Logger } from "../../logging/logger.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { McpInvocationScope, McpSessionRegistry } from "../../services/credentials/mcp-session-registry.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { readJsonBody, BodyError, protoKeyPath } from "../request-body.js";
import type { McpToolDefinition } from "./tool-definition.js";
import type { OperationServices } from "../operation-services.js";
import { LINK_SECRET_PREFIX } from "../../services/reach/reach-grants.js";
import { CallsInFlight } from "./calls-in-flight.js";
import { JsonExchangeTransport } from "./json-exchange-transport.js";
import { checkPostMessages } from "./post-checks.js";
import { ClientRoots, newClientSessionId, readClientSessionId, type ClientSessionFacts } from "./client-sessions.js";
import { failureResult, McpToolCalls, type McpReach } from "./tool-calls.js";
import { ModernRequests } from "./modern-requests.js";
import { callsWithoutProject } from "./project-inferring-tools.js";
import { namesModernRevision } from "./request-revision.js";

/** Asks the calling client for its roots on the call's own stream (null: it did not answer). */
type AskRoots = (extra: ToolCallExtra) => Promise<readonly string[] | null>;

/**
 * How many free servers the endpoint keeps for JSON answers. Beyond it, a server freed by a
 * burst of concurrent calls is left to the garbage collector.
 */
const MAX_IDLE_SERVERS = 64;

/** A server for JSON answers, connected to its transport once, serving one POST at a time. */
interface PooledServer {
  readonly server: Server;
  readonly transport: JsonExchangeTransport;
  /** Whom the POST it is serving (or last served) came from. */
  scope: McpInvocationScope | null;
}

/** Limits the endpoint enforces on a request (the server config's values). */
export interface McpEndpointLimits {
  /** Larger bodies are refused with 413. */
  readonly maxRequestBodyBytes: number;
}

/** A JSON-RPC error as an HTTP answer (`id: null`: the request was not read far enough to have one). */
function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/**
 * Refuses a message with a `__proto__` key (which the SDK would drop unseen): a tool call gets
 * the tool's typed `invalid_request` failure naming the argument, anything else a JSON-RPC
 * Invalid Request error. Returns true when it answered.
 */
function refusedProtoKey(res: ServerResponse, body: unknown, modern: boolean): boolean {
  const path = protoKeyPath(body);
  if (path === null) return false;
  const message = body as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
  if (
    !Array.isArray(body) &&
    message.method === "tools/call" &&
    (typeof message.id === "string" || typeof message.id === "number") &&
    path[0] === "params" &&
    path[1] === "arguments"
  ) {
    const field = path.slice(2).join(".");
    const failure = new OrchestratorFailure(
      "invalid_request",
      `Invalid arguments for ${String(message.params?.name)}: ${field}: the key "__proto__" is not allowed.`,
      { field },
    );
    res.writeHead(200, { "content-type": "application/json" });
    // A 2026-07-28 result says what kind it is.
    res.end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: message.id,
        result: modern ? { ...failureResult(failure), resultType: "complete" } : failureResult(failure),
      }),
    );
    return true;
  }
  jsonRpcError(
    res,
    400,
    -32600,
    `Invalid Request: the key "__proto__" (at ${path.join(".")}) is not allowed in any message.`,
  );
  return true;
}

/** The ids of the requests among a POST's messages (not its notifications or responses). */
function requestIdsOf(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== "object" || message === null || !("method" in message)) continue;
    const id = (message as { id?: unknown }).id;
    if (typeof id === "string" || typeof id === "number") ids.push(id);
  }
  return ids;
}

/**
 * Whether a request asked for progress notifications. Only then is the answer an SSE stream;
 * otherwise it is one JSON body with a Content-Length, which the client sees complete the moment
 * it has the result, so its connection is free for the next call instead of it opening another.
 */
function asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}

/** `application/json` with any parameters (`; charset=utf-8`), compared as a media type. */
function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && value.split(";")[0]!.trim().toLowerCase() === "application/json";
}

/** A linked environment's scope: the grant's projects and ceiling; read and operate, never approve. */
function environmentScope(grant: NonNullable<McpInvocationScope["grant"]>, environmentId: string): McpInvocationScope {
  return {
    credentialId: grant.id,
    kind: "environment",
    environmentId,
    threadId: null,
    projectId: null,
    providerInstanceId: null,
    providerSessionId: null,
    capabilities: new Set(["orchestration:read", "orchestration:operate"]),
    label: `grant for ${grant.for}`,
    projects: grant.projects,
    // A grant bounds the runtime mode only; the interaction mode is left to the work itself.
    ceiling: { runtimeMode: grant.maxRuntimeMode, interactionMode: "default" },
    grant,
  };
}

/**
 * The authenticated MCP endpoint (Streamable HTTP), serving the 2026-07-28 revision beside the
 * 2025 ones (2025-11-25, 2025-06-18, 2025-03-26), chosen per request as the 2026 revision says:
 * a request that carries the per-request `_meta` envelope (or names a 2026 protocol version in
 * its header) is the 2026 revision's, served by {@link ModernRequests}; any other is a 2025
 * client's, served here. Every POST resolves its bearer token to an invocation scope first,
 * whatever its revision, and no session outlives a request, so a client keeps working across a
 * Switchyard restart without re-initializing a session.
 *
 * A 2025 POST answered with one JSON body goes to a pooled server on a
 * {@link JsonExchangeTransport}; one that asks for progress gets its own server on the SDK's
 * transport, which streams it.
 */
export class McpEndpoint {
  private readonly toolCalls: McpToolCalls;
  private readonly modern: ModernRequests;
  /**
   * One JSON Schema validator for every server (pooled, or built for a streamed call). Otherwise
   * the SDK builds a fresh Ajv instance per Server: the largest share of the endpoint's CPU per
   * request under bench/mcp-load.bench.js, for a validator only elicitation results ever use.
   */
  private readonly validator = new AjvJsonSchemaValidator();
  /** Servers for JSON answers that serve no one now, most recently freed last. */
  private readonly idleServers: PooledServer[] = [];
  private readonly callsInFlight = new CallsInFlight();
  private readonly clientRoots = new ClientRoots();

  constructor(
    definitions: readonly McpToolDefinition[],
    private readonly registry: McpSessionRegistry,
    services: OperationServices,
    private readonly logger: Logger,
    private readonly serverName: string,
    private readonly limits: McpEndpointLimits,
    private readonly reach: McpReach | null = null,
  ) {
    this.toolCalls = new McpToolCalls(definitions, services, logger, reach);
    this.modern = new ModernRequests(this.toolCalls, serverName, logger);
  }

  /** Tool names, in registration order. */
  toolNames(): string[] {
    return this.toolCalls.names();
  }

  /** Ends the 2026-07-28 requests in flight (the 2025 ones end with their connections). */
  async close(): Promise<void> {
    await this.modern.close();
  }

  private unauthorized(res: ServerResponse, description: string): void {
    res.writeHead(401, {
      "content-type": "application/json",
      "www-authenticate": `Bearer realm="switchyard", error="invalid_token", error_description="${description}"`,
    });
    res.end(JSON.stringify({ error: "invalid_token", error_description: description }));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match === null) {
      this.unauthorized(res, header === undefined ? "Missing Authorization header" : "Malformed Authorization header");
      return;
    }
    const scope = await this.resolveScope(match[1]!, res);
    if (scope === null) return;
    if (req.method !== "POST") {
      jsonRpcError(res, 405, -32000, "Method not allowed: this endpoint is stateless; use POST.", { allow: "POST" });
      return;
    }
    // Checked before the body is read, so a body that would be refused is never buffered.
    if (!isJsonContentType(req.headers["content-type"])) {
      jsonRpcError(
        res,
        415,
        -32000,
        `Unsupported Media Type: Content-Type must be application/json, not ${JSON.stringify(req.headers["content-type"] ?? null)}.`,
      );
      return;
    }
    let body: unknown;
    let text: string;
    try {
      ({ value: body, text } = await readJsonBody(req, this.limits.maxRequestBodyBytes));
    } catch (error) {
      if (!(error instanceof BodyError)) throw error;
      // The client is gone (or was cut off by the request timeout): there is no one to answer.
      if (error.problem === "cut_off" || res.destroyed) return;
      // -32700 Parse error for bytes that are not JSON, -32600 Invalid Request for no message at all.
      const code = error.problem === "not_json" ? -32700 : error.problem === "too_large" ? -32000 : -32600;
      jsonRpcError(res, error.status, code, error.message);
      return;
    }
    const modern = namesModernRevision(req.headers["mcp-protocol-version"], body);
    if (text.includes("__proto__") && refusedProtoKey(res, body, modern)) return;
    if (modern) {
      await this.modern.serve(scope, req, res, body);
      return;
    }
    if (Array.isArray(body) && body.length === 0) {
      // JSON-RPC 2.0: an empty batch is one Invalid Request error, not an empty (or no) reply.
      jsonRpcError(res, 400, -32600, "Invalid Request: the batch is empty; send at least one JSON-RPC message.");
      return;
    }
    // A client token's session (the id this endpoint gave it at initialize): who it is, its roots.
    const session = scope.kind === "client" ? readClientSessionId(req.headers["mcp-session-id"]) : null;
    const callScope = scope.kind === "client" ? this.attach(scope, session) : scope;
    // A client that declared roots and has not told them yet is asked on the call's own stream.
    const rootsNeeded =
      session !== null && session.roots && callScope.attachment?.roots === null && callsWithoutProject(body);
    if (!asksForProgress(body) && !rootsNeeded) {
      await this.answerJson(callScope, session, req, res, body);
      return;
    }
    // A call that wants progress (or its client's roots) is answered as an SSE stream, by the SDK's own transport.
    let transport: StreamableHTTPServerTransport;
    const askRoots: AskRoots | null =
      session === null
        ? null
        : (extra) =>
            this.clientRoots.ask(
              scope.credentialId,
              session.nonce,
              (request) => transport.send(request, { relatedRequestId: extra.requestId }),
              extra.signal,
            );
    const server = this.createServer(() => callScope, askRoots);
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: false });
    const end = () => {
      void transport.close();
      void server.close();
    };
    // Cancelled, the stream ends as when the client leaves: closing the server aborts its handlers.
    const forget = this.callsInFlight.register(scope.credentialId, requestIdsOf(body), end);
    res.on("close", () => {
      forget();
      end();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /**
   * Answers a POST with one JSON body, on a pooled server: the SDK transport's checks, then its
   * messages to a server that is not serving anyone else, whose handlers act as `scope`.
   */
  private async answerJson(
    scope: McpInvocationScope,
    session: ClientSessionFacts | null,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<void> {
    const checked = checkPostMessages(req, body);
    if ("refusal" in checked) {
      jsonRpcError(res, checked.refusal.status, checked.refusal.code, checked.refusal.message);
      return;
    }
    // A client's answer to a roots/list this endpoint asked goes to the call that waits for it.
    if (
      scope.kind === "client" &&
      this.clientRoots.take(scope.credentialId, session?.nonce ?? null, checked.messages)
    ) {
      res.writeHead(202).end();
      return;
    }
    this.callsInFlight.cancelNamed(scope.credentialId, checked.messages);
    // The client left while its body was read: no server is taken for no one.
    if (res.destroyed) return;
    const pooled = this.idleServers.pop() ?? (await this.pooledServer());
    pooled.scope = scope;
    const extra = { requestInfo: { headers: req.headers } };
    const forget = this.callsInFlight.register(scope.credentialId, requestIdsOf(checked.messages), (id, notification) =>
      pooled.transport.cancel(id, notification, extra),
    );
    res.on("close", () => {
      forget();
      // The client left before its answer: closing the server aborts its handlers (their
      // signal), as closing a server built for the request would. A cancelled call's handler
      // may still be winding down on it. Otherwise the server is free again, except after an
      // initialize, which leaves the client's capabilities on it.
      if (pooled.transport.busy || pooled.transport.cancelledAny) void pooled.server.close();
      else if (!checked.initializing && this.idleServers.length < MAX_IDLE_SERVERS) this.idleServers.push(pooled);
    });
    // A client token's session gets an id naming it (and what it said it is), which it sends with
    // every later request: its delegations then share one attached thread.
    const headers: Record<string, string> =
      checked.initializing && scope.kind === "client"
        ? { "mcp-session-id": newClientSessionId(checked.messages[0]!) }
        : {};
    pooled.transport.deliver(checked.messages, res, extra, headers);
  }

  /** A client's scope with the session its call comes from (its roots, when it told them before). */
  private attach(scope: McpInvocationScope, session: ClientSessionFacts | null): McpInvocationScope {
    return {
      ...scope,
      attachment: {
        credentialId: scope.credentialId,
        mcpSessionId: session?.nonce ?? null,
        client: session?.client ?? null,
        roots: session === null ? null : (this.clientRoots.remembered(scope.credentialId, session.nonce) ?? null),
      },
    };
  }

  private async pooledServer(): Promise<PooledServer> {
    const transport = new JsonExchangeTransport();
    const pooled: PooledServer = { server: this.createServer(() => pooled.scope!), transport, scope: null };
    await pooled.server.connect(transport);
    return pooled;
  }

  /** The scope a bearer credential stands for (a token, or a link secret's grant), or null after answering 401. */
  private async resolveScope(bearer: string, res: ServerResponse): Promise<McpInvocationScope | null> {
    if (this.reach !== null && bearer.startsWith(LINK_SECRET_PREFIX)) {
      const resolved = await this.reach.grants.resolve(bearer);
      if ("grant" in resolved) return environmentScope(resolved.grant, this.registry.environmentId);
      this.logger.info("MCP request refused", {
        reason: `link_${resolved.rejection}`,
        grantId: resolved.grantId ?? null,
      });
      // A revoked or expired grant's call is a call across environments too; an unknown secret names no one.
      if (resolved.grantId !== undefined) {
        this.reach.audit.record({
          direction: "in",
          grantId: resolved.grantId,
          environment: resolved.for ?? null,
          tool: null,
          outcome: "capability_denied",
          reason: resolved.rejection,
        });
      }
      this.unauthorized(
        res,
        resolved.rejection === "unknown" ? "Unknown link secret" : `Link grant ${resolved.rejection}`,
      );
      return null;
    }
    const resolved = await this.registry.resolve(bearer);
    if ("rejection" in resolved) {
      this.logger.info("MCP request refused", { reason: resolved.rejection });
      this.unauthorized(
        res,
        resolved.rejection === "unknown" ? "Unknown token" : `Token ${resolved.rejection.replace("_", " ")}`,
      );
      return null;
    }
    return resolved.scope;
  }

  /** A 2025 revision's server whose handlers act as `scopeOf()` says, read as each request starts. */
  private createServer(scopeOf: () => McpInvocationScope, askRoots: AskRoots | null = null): Server {
    const server = new Server(
      { name: this.serverName, version: HOST_VERSION },
      { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: this.validator },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => this.toolCalls.listingFor(scopeOf()));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      let scope = scopeOf();
      const roots = scope.attachment?.roots ?? null;
      if (
        askRoots !== null &&
        scope.attachment !== undefined &&
        roots === null &&
        callsWithoutProject({ method: "tools/call", params: request.params })
      ) {
        scope = { ...scope, attachment: { ...scope.attachment, roots: await askRoots(extra) } };
      }
      return this.toolCalls.call(scope, request.params, {
        signal: extra.signal,
        sendProgress: (params) =>
          extra.sendNotification({ method: "notifications/progress", params }).catch(() => undefined),
      });
    });
    return server;
  }
}

type ToolCallExtra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];
