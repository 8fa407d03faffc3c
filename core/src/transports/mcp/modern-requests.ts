import type { IncomingMessage, ServerResponse } from "node:http";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ListToolsResult,
  type McpHttpHandler,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { toNodeHandler, type NodeMcpRequestHandler } from "@modelcontextprotocol/node";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import type { Logger } from "../../logging/logger.js";
import type { McpInvocationScope } from "../../services/credentials/mcp-session-registry.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { clientSessionOfEnvelope, rootFolders, type ClientSessionFacts } from "./client-sessions.js";
import type { McpToolCalls, ToolCallResult } from "./tool-calls.js";
import { callsWithoutProject } from "./project-inferring-tools.js";

/** The key of the one input request this endpoint ever embeds: the client's roots. */
const ROOTS_INPUT = "roots";

/** What the endpoint hands the 2026-07-28 server through the SDK's pass-through `authInfo`. */
interface ModernAuthExtra {
  readonly scope: McpInvocationScope;
  /** Why the request's `inputResponses` is not a map of answers, when it is not. */
  readonly malformedInputResponses: string | undefined;
}

/**
 * The 2026-07-28 revision of the /mcp endpoint: requests that carry the per-request `_meta`
 * envelope (protocol version, client info and capabilities) instead of a session set up by
 * `initialize`. Served by the MCP TypeScript SDK's v2 entry (`createMcpHandler`, strict: 2025
 * traffic never reaches it, the endpoint's own legacy path answers that), which validates the
 * envelope and the `Mcp-Method`/`Mcp-Name` headers, answers `server/discover` and
 * `subscriptions/listen`, and stamps `resultType`, cache fields and the server's identity on
 * every result. A fresh low-level `Server` per request acts as the request's caller, whose
 * credential the endpoint resolved before; its tools are the same {@link McpToolCalls} the
 * 2025 revisions call.
 *
 * Cancellation is the revision's own: the client closes the request's response stream (or its
 * connection), which aborts the handler's signal. Progress goes on that stream, which the SDK
 * opens as SSE at the first notification. A client's session, which this revision does not
 * have, is its token and the client name it declares on every request
 * ({@link clientSessionOfEnvelope}); its roots, when it declares them, are asked for with an
 * `input_required` result, per call (roots are deprecated in this revision, and a name is
 * not a session to remember them for).
 */
export class ModernRequests {
  private readonly handler: McpHttpHandler;
  private readonly serveNode: NodeMcpRequestHandler;
  /** Shared by every server: the SDK otherwise builds an Ajv instance per `Server`, which elicitation alone would use. */
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(
    private readonly toolCalls: McpToolCalls,
    private readonly serverName: string,
    logger: Logger,
  ) {
    this.handler = createMcpHandler(
      ({ authInfo }) => this.createServer(authInfo?.extra as unknown as ModernAuthExtra),
      {
        legacy: "reject",
        onerror: (error) => logger.debug("MCP 2026-07-28 request refused or failed", { error: error.message }),
      },
    );
    this.serveNode = toNodeHandler(this.handler, {
      onerror: (error) => logger.error("MCP 2026-07-28 request failed", { error: error.message, stack: error.stack }),
    });
  }

  /** Answers one POST, already authenticated as `scope`, whose body the endpoint has read. */
  async serve(scope: McpInvocationScope, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    // The SDK passes authInfo through untouched: the handlers act as the scope, not as the token.
    const auth = {
      token: "",
      clientId: scope.credentialId,
      scopes: [...scope.capabilities],
      extra: {
        scope,
        malformedInputResponses: malformedInputResponses(body),
      } satisfies ModernAuthExtra as unknown as Record<string, unknown>,
    };
    await this.serveNode(Object.assign(req, { auth }), res, body);
  }

  /** Ends the requests in flight (their handlers' signals abort). */
  async close(): Promise<void> {
    await this.handler.close();
  }

  private createServer({ scope, malformedInputResponses }: ModernAuthExtra): Server {
    const server = new Server(
      { name: this.serverName, version: HOST_VERSION },
      { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: this.validator },
    );
    // Object schemas from zod (ToolListing's inputSchema says only that it is an object).
    server.setRequestHandler("tools/list", () => this.toolCalls.listingFor(scope) as ListToolsResult);
    server.setRequestHandler("tools/call", async (request, ctx) => {
      if (malformedInputResponses !== undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, malformedInputResponses);
      const callScope = scope.kind === "client" ? attach(scope, ctx) : scope;
      const facts = callScope.attachment;
      if (
        facts !== undefined &&
        facts.roots === null &&
        declaresRoots(ctx) &&
        callsWithoutProject({ method: "tools/call", params: request.params })
      ) {
        const answer = inputResponse(ctx.mcpReq.inputResponses, ROOTS_INPUT);
        // Asked once per call: a client that answers otherwise (or declines) gets the call without its roots.
        if (answer.kind === "missing")
          return inputRequired({ inputRequests: { [ROOTS_INPUT]: { method: "roots/list" } } });
        const roots = answer.kind === "roots" ? rootFolders({ roots: answer.roots }) : [];
        return this.callTool({ ...callScope, attachment: { ...facts, roots } }, request.params, ctx);
      }
      return this.callTool(callScope, request.params, ctx);
    });
    return server;
  }

  private callTool(
    scope: McpInvocationScope,
    params: Parameters<McpToolCalls["call"]>[1],
    ctx: ServerContext,
  ): Promise<ToolCallResult> {
    return this.toolCalls.call(scope, params, {
      signal: ctx.mcpReq.signal,
      sendProgress: (progress) =>
        ctx.mcpReq.notify({ method: "notifications/progress", params: progress }).catch(() => undefined),
    });
  }
}

/**
 * A retried request's `inputResponses` is a map of input-request keys to the client's answers.
 * The SDK lifts the field out of the params before any handler runs and reads any other shape
 * (null, a number) as "no answers", so such a client would silently be asked again; the revision
 * makes a protocol-level input error a JSON-RPC error, so the endpoint reads the field on the
 * body and the call is refused with Invalid params naming it.
 */
function malformedInputResponses(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const params = (body as { params?: unknown }).params;
  if (typeof params !== "object" || params === null || !("inputResponses" in params)) return undefined;
  const responses = (params as { inputResponses: unknown }).inputResponses;
  if (responses === undefined) return undefined;
  const isObject = (value: unknown): boolean => typeof value === "object" && value !== null && !Array.isArray(value);
  if (isObject(responses) && Object.values(responses as object).every(isObject)) return undefined;
  return `inputResponses must be an object mapping each input request's key to the client's answer (an object); got ${JSON.stringify(responses)}`;
}

function envelopeOf(ctx: ServerContext): Record<string, unknown> {
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined) ?? {};
}

function declaresRoots(ctx: ServerContext): boolean {
  const capabilities = envelopeOf(ctx)[CLIENT_CAPABILITIES_META_KEY] as { roots?: unknown } | undefined;
  return typeof capabilities?.roots === "object" && capabilities.roots !== null;
}

/** A client's scope with the session its request names (by its token and declared client name). */
function attach(scope: McpInvocationScope, ctx: ServerContext): McpInvocationScope {
  const session: ClientSessionFacts | null = clientSessionOfEnvelope(envelopeOf(ctx)[CLIENT_INFO_META_KEY]);
  return {
    ...scope,
    attachment: {
      credentialId: scope.credentialId,
      mcpSessionId: session?.nonce ?? null,
      client: session?.client ?? null,
      roots: null,
    },
  };
}
