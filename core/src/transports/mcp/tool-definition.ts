import type { z } from "zod";
import type { CredentialCapability, McpInvocationScope } from "../../services/credentials/mcp-session-registry.js";
import type { OperationServices } from "../operation-services.js";

/** MCP tool annotations (hints for clients; never trusted for security). */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** What a tool handler gets besides its input. */
export interface ToolInvocation {
  readonly scope: McpInvocationScope;
  readonly services: OperationServices;
  /** Aborted when the client cancels the call or disconnects. */
  readonly signal: AbortSignal;
  /** Sends an MCP progress notification (no-op when the client sent no progress token). */
  reportProgress(message: string): Promise<void>;
  /** The call's `_meta` (a linked environment's caller and delegation facts travel there). */
  readonly meta?: unknown;
}

/** One MCP tool: schemas, annotations, the capability it needs, and its handler. */
export interface McpToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  readonly annotations: ToolAnnotations;
  /** The credential capability the caller needs. */
  readonly requires: CredentialCapability;
  /** `linked_environments`: listed to and callable by linked environments only (their results outbox); default everyone. */
  readonly audience?: "everyone" | "linked_environments";
  handle(input: z.output<I>, invocation: ToolInvocation): Promise<z.input<O>>;
}

/** Declares a tool with its types inferred from its schemas. */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(
  definition: McpToolDefinition<I, O>,
): McpToolDefinition<I, O> {
  return definition;
}

/** Annotation presets. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
// Not idempotent: a call without a clientRequestId creates new work each time (the key is what
// makes a retry return the same work, and a client reading the hint cannot know it was sent).
export const CREATES_WORK: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};
export const CHANGES_STATE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
export const STOPS_WORK: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
};
