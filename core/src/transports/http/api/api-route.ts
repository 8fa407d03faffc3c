import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import type { Caller } from "../../../services/caller.js";
import type { CredentialCapability } from "../../../services/credentials/mcp-session-registry.js";
import type { ApiServices } from "./api-services.js";

/** What a route handler gets besides its input. */
export interface ApiContext {
  /** The authenticated caller; on a public route, an anonymous one that may use nothing. */
  readonly caller: Caller;
  readonly services: ApiServices;
  /** Aborted when the client disconnects (for a stream, also after its handler returned). */
  readonly signal: AbortSignal;
  readonly request: IncomingMessage;
  /** For a route that writes its own response (`produces: "text/event-stream"`). */
  readonly response: ServerResponse;
  /** The API's OpenAPI document, as served now. */
  document(): Record<string, unknown>;
}

/**
 * One operation of the HTTP API: where it lives, what it needs, and its schemas. The path,
 * query and body schemas are the parts of `input` each comes from (picked from the operation's
 * contract in core/src/contract, where there is one); the router validates each part, then the whole input
 * with `input`, so both transports accept exactly the same values. The OpenAPI document is
 * generated from these schemas.
 */
export interface ApiRoute<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  readonly method: "GET" | "POST";
  /** Below `/api/v1`, with `{name}` path parameters: `/threads/{threadId}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** The resource group (an OpenAPI tag). */
  readonly tag: string;
  /** The capability the caller needs, or null for a public route (the OpenAPI document). */
  readonly requires: CredentialCapability | null;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodObject;
  /**
   * The input field an `Idempotency-Key` header fills: the operation's retry key, the same one
   * MCP callers pass as `clientRequestId`, scoped to the token the same way.
   */
  readonly idempotencyKey?: "clientRequestId";
  /**
   * How the parts reach `input`: merged into one object (default; the contract's shape, as MCP takes it), or
   * `separate`, as `{ params, query, body }` (a plugin's routes, whose parts may share names).
   */
  readonly inputParts?: "merged" | "separate";
  /** The whole input: path parameters, query and body together. */
  readonly input: I;
  readonly output: O;
  /** A name for the output schema in the document's components. */
  readonly outputName: string;
  /** The success status (default 200; 202 for work accepted and still running). */
  readonly status?: 200 | 201 | 202;
  /**
   * `text/event-stream`: the handler writes the response itself (headers included) and the
   * router only answers failures thrown before it starts writing; `output` describes one event.
   */
  readonly produces?: "application/json" | "text/event-stream";
  handle(input: z.output<I>, context: ApiContext): Promise<z.input<O> | void> | z.input<O> | void;
}

/** Declares a route with its handler's types inferred from its schemas. */
export function defineRoute<I extends z.ZodType, O extends z.ZodType>(route: ApiRoute<I, O>): ApiRoute<I, O> {
  return route;
}
