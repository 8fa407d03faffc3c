import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import type { Logger } from "../../logging/logger.js";
import { isOrchestratorFailure, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { McpInvocationScope, McpSessionRegistry } from "../../services/credentials/mcp-session-registry.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { isStoreBusy } from "../../util/store-busy.js";
import { readJsonBody, BodyError, protoKeyPath } from "../http/request-body.js";
import type { McpToolDefinition } from "./tool-definition.js";
import type { McpToolServices } from "./tool-services.js";
import { scopeRefs } from "../scope-refs.js";
import { callerFromScope } from "./caller-from-scope.js";
import { FORWARDED_TOOLS } from "../../services/reach/forwarded-tools.js";
import { linkedCeiling, linkedGrantOf } from "./linked-caller.js";
import { LINK_SECRET_PREFIX, type ReachGrants } from "../../services/reach/reach-grants.js";
import type { ReachAudit } from "../../services/reach/reach-audit.js";
import { grantVerbOf, requestedRuntimeModes } from "../../services/reach/tool-grant-verbs.js";
import { remoteCallerFrom } from "../../services/reach/reach-wire.js";
import { auditTargetOf, outcomeOf } from "../../services/reach/tool-call-outcome.js";
import { CallsInFlight } from "./calls-in-flight.js";
import { JsonExchangeTransport } from "./json-exchange-transport.js";
import { checkPostMessages } from "./post-checks.js";
import { ClientRoots, newClientSessionId, readClientSessionId, type ClientSessionFacts } from "./client-sessions.js";

/**
 * The tools that pick a project for new work when the call names none: from a client's session,
 * its roots say which (see CallerContext.workProject), so they are asked for first.
 */
const PROJECT_INFERRING_TOOLS = new Set(["create_threads", "t3_thread_launch", "delegate_task"]);

/** Asks the calling client for its roots on the call's own stream (null: it did not answer). */
type AskRoots = (extra: ToolCallExtra) => Promise<readonly string[] | null>;

/** Whether a POST calls a project-inferring tool without naming a project (its client's roots then matter). */
function callsWithoutProject(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const call = message as { method?: unknown; params?: { name?: unknown; arguments?: { projectId?: unknown } } } | null;
    return call?.method === "tools/call" && typeof call.params?.name === "string" && PROJECT_INFERRING_TOOLS.has(call.params.name) && call.params.arguments?.projectId === undefined;
  });
}

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
function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/**
 * Refuses a message with a `__proto__` key (which the SDK would drop unseen): a tool call gets
 * the tool's typed `invalid_request` failure naming the argument, anything else a JSON-RPC
 * Invalid Request error. Returns true when it answered.
 */
function refusedProtoKey(res: ServerResponse, body: unknown): boolean {
  const path = protoKeyPath(body);
  if (path === null) return false;
  const message = body as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
  if (!Array.isArray(body) && message.method === "tools/call" && (typeof message.id === "string" || typeof message.id === "number") && path[0] === "params" && path[1] === "arguments") {
    const field = path.slice(2).join(".");
    const failure = new OrchestratorFailure("invalid_request", `Invalid arguments for ${String(message.params?.name)}: ${field}: the key "__proto__" is not allowed.`, { field });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: failureResult(failure) }));
    return true;
  }
  jsonRpcError(res, 400, -32600, `Invalid Request: the key "__proto__" (at ${path.join(".")}) is not allowed in any message.`);
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

/** `environmentId`, which every tool in FORWARDED_TOOLS takes (issue 18, item 4). */
const EnvironmentIdInput = z
  .string()
  .min(1)
  .max(200)
  .describe("Run this call in a linked environment (orchestrator_capabilities lists them: a link name, or the environment id in a link it built); default this one.");

/** A tool's input, with `environmentId` added when the tool forwards to linked environments. */
function inputOf(definition: McpToolDefinition): z.ZodType {
  if (!Object.hasOwn(FORWARDED_TOOLS, definition.name)) return definition.input;
  return (definition.input as unknown as z.ZodObject).extend({ environmentId: EnvironmentIdInput.optional() });
}

interface ListedTool {
  readonly definition: McpToolDefinition;
  /** What a call's arguments are checked against (the tool's input, with `environmentId` where it forwards). */
  readonly input: z.ZodType;
  readonly listing: {
    name: string;
    title: string;
    description: string;
    inputSchema: Record<string, unknown>;
    outputSchema: Record<string, unknown>;
    annotations: Record<string, unknown>;
  };
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

/**
 * What lets linked environments in: link secrets resolve to grants (read afresh per request), and
 * their calls are audited. Only resolve and authorize are reachable: nothing here issues, widens
 * or revokes a grant.
 */
export interface McpReach {
  readonly grants: Pick<ReachGrants, "resolve" | "authorize">;
  readonly audit: ReachAudit;
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

/** A typed failure as a tool result: `isError` with `{ error: { code, message, details } }` text. */
export function failureResult(failure: OrchestratorFailure): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: failure.toJSON() }) }] };
}

function issuesMessage(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(arguments)"}: ${issue.message}`)
    .join("; ");
}

/**
 * The authenticated MCP endpoint (Streamable HTTP). Stateless: every POST resolves its bearer
 * token to an invocation scope, and no session outlives a request, so a client keeps working
 * across a Switchyard restart without re-initializing a session. A POST answered with one JSON
 * body goes to a pooled server on a {@link JsonExchangeTransport}; one that asks for progress
 * gets its own server on the SDK's transport, which streams it.
 */
export class McpEndpoint {
  private readonly tools = new Map<string, ListedTool>();
  private readonly listing: { tools: ListedTool["listing"][] };
  /** What linked environments are listed: every tool, their results outbox included. */
  private readonly linkedListing: { tools: ListedTool["listing"][] };
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
    private readonly services: McpToolServices,
    private readonly logger: Logger,
    private readonly serverName: string,
    private readonly limits: McpEndpointLimits,
    private readonly reach: McpReach | null = null,
  ) {
    for (const definition of definitions) {
      // Every tool says what a linked environment needs to call it, so none is let through unclassified.
      if (grantVerbOf(definition.name) === undefined) throw new Error(`MCP tool ${definition.name} has no entry in TOOL_GRANT_VERBS (services/reach/tool-grant-verbs.ts): give it a grant verb, or null when linked environments may not call it.`);
      const input = inputOf(definition);
      this.tools.set(definition.name, {
        definition,
        input,
        listing: {
          name: definition.name,
          title: definition.title,
          description: definition.description,
          inputSchema: jsonSchema(input, "input"),
          outputSchema: jsonSchema(definition.output, "output"),
          annotations: { title: definition.title, ...definition.annotations },
        },
      });
    }
    this.listing = { tools: [...this.tools.values()].filter((tool) => tool.definition.audience !== "linked_environments").map((tool) => tool.listing) };
    this.linkedListing = { tools: [...this.tools.values()].map((tool) => tool.listing) };
  }

  /** Tool names, in registration order. */
  toolNames(): string[] {
    return [...this.tools.keys()];
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
    const scope = this.resolveScope(match[1]!, res);
    if (scope === null) return;
    if (req.method !== "POST") {
      jsonRpcError(res, 405, -32000, "Method not allowed: this endpoint is stateless; use POST.", { allow: "POST" });
      return;
    }
    // Checked before the body is read, so a body that would be refused is never buffered.
    if (!isJsonContentType(req.headers["content-type"])) {
      jsonRpcError(res, 415, -32000, `Unsupported Media Type: Content-Type must be application/json, not ${JSON.stringify(req.headers["content-type"] ?? null)}.`);
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
    if (text.includes("__proto__") && refusedProtoKey(res, body)) return;
    if (Array.isArray(body) && body.length === 0) {
      // JSON-RPC 2.0: an empty batch is one Invalid Request error, not an empty (or no) reply.
      jsonRpcError(res, 400, -32600, "Invalid Request: the batch is empty; send at least one JSON-RPC message.");
      return;
    }
    // A client token's session (the id this endpoint gave it at initialize): who it is, its roots.
    const session = scope.kind === "client" ? readClientSessionId(req.headers["mcp-session-id"]) : null;
    const callScope = scope.kind === "client" ? this.attach(scope, session) : scope;
    // A client that declared roots and has not told them yet is asked on the call's own stream.
    const rootsNeeded = session !== null && session.roots && callScope.attachment?.roots === null && callsWithoutProject(body);
    if (!asksForProgress(body) && !rootsNeeded) {
      await this.answerJson(callScope, session, req, res, body);
      return;
    }
    // A call that wants progress (or its client's roots) is answered as an SSE stream, by the SDK's own transport.
    let transport: StreamableHTTPServerTransport;
    const askRoots: AskRoots | null =
      session === null
        ? null
        : (extra) => this.clientRoots.ask(scope.credentialId, session.nonce, (request) => transport.send(request, { relatedRequestId: extra.requestId }), extra.signal);
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
  private async answerJson(scope: McpInvocationScope, session: ClientSessionFacts | null, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const checked = checkPostMessages(req, body);
    if ("refusal" in checked) {
      jsonRpcError(res, checked.refusal.status, checked.refusal.code, checked.refusal.message);
      return;
    }
    // A client's answer to a roots/list this endpoint asked goes to the call that waits for it.
    if (scope.kind === "client" && this.clientRoots.take(scope.credentialId, session?.nonce ?? null, checked.messages)) {
      res.writeHead(202).end();
      return;
    }
    this.callsInFlight.cancelNamed(scope.credentialId, checked.messages);
    // The client left while its body was read: no server is taken for no one.
    if (res.destroyed) return;
    const pooled = this.idleServers.pop() ?? (await this.pooledServer());
    pooled.scope = scope;
    const extra = { requestInfo: { headers: req.headers } };
    const forget = this.callsInFlight.register(scope.credentialId, requestIdsOf(checked.messages), (id, notification) => pooled.transport.cancel(id, notification, extra));
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
    const headers: Record<string, string> = checked.initializing && scope.kind === "client" ? { "mcp-session-id": newClientSessionId(checked.messages[0]!) } : {};
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
  private resolveScope(bearer: string, res: ServerResponse): McpInvocationScope | null {
    if (this.reach !== null && bearer.startsWith(LINK_SECRET_PREFIX)) {
      const resolved = this.reach.grants.resolve(bearer);
      if ("grant" in resolved) return environmentScope(resolved.grant, this.registry.environmentId);
      this.logger.info("MCP request refused", { reason: `link_${resolved.rejection}`, grantId: resolved.grantId ?? null });
      // A revoked or expired grant's call is a call across environments too; an unknown secret names no one.
      if (resolved.grantId !== undefined) {
        this.reach.audit.record({ direction: "in", grantId: resolved.grantId, environment: resolved.for ?? null, tool: null, outcome: "capability_denied", reason: resolved.rejection });
      }
      this.unauthorized(res, resolved.rejection === "unknown" ? "Unknown link secret" : `Link grant ${resolved.rejection}`);
      return null;
    }
    const resolved = this.registry.resolve(bearer);
    if ("rejection" in resolved) {
      this.logger.info("MCP request refused", { reason: resolved.rejection });
      this.unauthorized(res, resolved.rejection === "unknown" ? "Unknown token" : `Token ${resolved.rejection.replace("_", " ")}`);
      return null;
    }
    return resolved.scope;
  }

  /**
   * Holds a linked environment's call to its grant before the handler runs: the tool's verb
   * (TOOL_GRANT_VERBS), and every runtime mode it asks for against the grant's ceiling. Projects,
   * threads and tasks are held to the grant's projects by the scope check every call gets.
   */
  private authorizeEnvironment(scope: McpInvocationScope, toolName: string, input: unknown): void {
    const grant = scope.grant!;
    const verb = grantVerbOf(toolName);
    if (verb === null || verb === undefined) {
      throw new OrchestratorFailure("capability_denied", `${toolName} is not offered to linked environments; only this machine's own clients and agents may call it.`, {
        grantId: grant.id,
        tool: toolName,
        reason: "tool",
      });
    }
    this.reach!.grants.authorize(grant, { verb });
    for (const runtimeMode of requestedRuntimeModes(input)) this.reach!.grants.authorize(grant, { verb, runtimeMode });
  }

  /** A server whose handlers act as `scopeOf()` says, read as each request starts. */
  private createServer(scopeOf: () => McpInvocationScope, askRoots: AskRoots | null = null): Server {
    const server = new Server({ name: this.serverName, version: HOST_VERSION }, { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: this.validator });
    server.setRequestHandler(ListToolsRequestSchema, () => (linkedGrantOf(scopeOf()) !== null ? this.linkedListing : this.listing));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      let scope = scopeOf();
      const roots = scope.attachment?.roots ?? null;
      if (askRoots !== null && scope.attachment !== undefined && roots === null && callsWithoutProject({ method: "tools/call", params: request.params })) {
        scope = { ...scope, attachment: { ...scope.attachment, roots: await askRoots(extra) } };
      }
      if (scope.kind !== "environment") return this.callTool(scope, request, extra);
      // One audit row per call from a linked environment, whatever its outcome.
      const remote = remoteCallerFrom(request.params._meta);
      // The caller's ceiling on its side narrows the grant's for this call (it can never widen it).
      const callScope: McpInvocationScope = { ...scope, remote, ceiling: linkedCeiling(scope, request.params._meta) };
      const result = await this.callTool(callScope, request, extra);
      this.reach!.audit.record({
        direction: "in",
        grantId: scope.grant!.id,
        environment: scope.grant!.for,
        remoteEnvironmentId: remote.environmentId,
        callerThreadId: remote.threadId,
        verb: grantVerbOf(request.params.name) ?? null,
        tool: request.params.name,
        target: auditTargetOf(request.params.arguments ?? {}, result),
        ...outcomeOf(result),
      });
      return result;
    });
    return server;
  }

  private async callTool(scope: McpInvocationScope, request: CallToolRequest, extra: ToolCallExtra): Promise<CallToolResult> {
    {
      const linked = linkedGrantOf(scope) !== null;
      const tool = this.tools.get(request.params.name);
      if (tool === undefined || (tool.definition.audience === "linked_environments" && !linked)) {
        return failureResult(new OrchestratorFailure("invalid_request", `Unknown tool "${request.params.name}". Call tools/list for the available tools.`));
      }
      const parsed = tool.input.safeParse(request.params.arguments ?? {});
      if (!parsed.success) {
        return failureResult(new OrchestratorFailure("invalid_request", `Invalid arguments for ${tool.definition.name}: ${issuesMessage(parsed.error)}`));
      }
      if (!scope.capabilities.has(tool.definition.requires)) {
        return failureResult(
          new OrchestratorFailure("capability_denied", `This credential lacks the ${tool.definition.requires} capability that ${tool.definition.name} needs.`, {
            required: tool.definition.requires,
          }),
        );
      }
      const progressToken = request.params._meta?.progressToken;
      let progress = 0;
      const reportProgress = async (message: string) => {
        if (progressToken === undefined) return;
        progress += 1;
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, message } }).catch(() => undefined);
      };
      try {
        if (scope.kind === "environment") this.authorizeEnvironment(scope, tool.definition.name, parsed.data);
        // A call for a linked environment goes there whole (the other side holds it to its grant
        // and checks its threads and tasks); its answer is the other side's.
        const args = parsed.data as Record<string, unknown>;
        if (linked && args.environmentId !== undefined && args.environmentId !== this.services.environmentId) {
          // A grant is for this environment only: it is never passed on to another one.
          throw new OrchestratorFailure("capability_denied", `A linked environment's call runs here only; environmentId ${JSON.stringify(args.environmentId)} is not this environment (${this.services.environmentId}).`, {
            reason: "not_forwarded",
            environmentId: args.environmentId,
          });
        }
        const link = linked ? null : this.services.reach.destination(tool.definition.name, args);
        if (link !== null) {
          const forwarded = await this.services.reach.forward(callerFromScope(scope), tool.definition.name, args, link, { signal: extra.signal, onProgress: () => void reportProgress(`waiting on ${link}`) });
          const structured = tool.definition.output.parse(forwarded) as Record<string, unknown>;
          return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
        }
        const { environmentId: _here, ...local } = args;
        // A project-scoped token (or grant) is checked before the tool reads anything.
        this.services.callers.requireInScope(callerFromScope(scope), scopeRefs(local));
        const output = await tool.definition.handle(local, { scope, services: this.services, signal: extra.signal, reportProgress, meta: request.params._meta });
        const structured = tool.definition.output.parse(output) as Record<string, unknown>;
        return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
      } catch (error) {
        if (isOrchestratorFailure(error)) return failureResult(error);
        if (isStoreBusy(error)) {
          // Nothing was done; the same call can be made again (idempotent ones by clientRequestId).
          this.logger.warn("MCP tool refused: the database is locked by another connection", { tool: tool.definition.name });
          return failureResult(new OrchestratorFailure("orchestration_error", `${tool.definition.name} was not done: ${(error as Error).message}`, { reason: "store_busy", retryable: true }));
        }
        this.logger.error("MCP tool failed", { tool: tool.definition.name, error: (error as Error).message, stack: (error as Error).stack });
        return failureResult(new OrchestratorFailure("orchestration_error", `${tool.definition.name} failed: ${(error as Error).message}`));
      }
    }
  }
}

type CallToolRequest = z.infer<typeof CallToolRequestSchema>;
type ToolCallExtra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];
