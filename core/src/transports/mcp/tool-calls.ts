import { z } from "zod";
import type { Logger } from "../../logging/logger.js";
import { isOrchestratorFailure, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { McpInvocationScope } from "../../services/credentials/mcp-session-registry.js";
import { isStoreBusy } from "../../util/store-busy.js";
import type { McpToolDefinition } from "./tool-definition.js";
import type { OperationServices } from "../operation-services.js";
import { scopeRefs } from "../scope-refs.js";
import { resolveThreadRefs } from "../thread-refs.js";
import { callerFromScope } from "../caller-from-scope.js";
import { FORWARDED_TOOLS } from "../../services/reach/forwarded-tools.js";
import { linkedCeiling, linkedGrantOf } from "./linked-caller.js";
import type { ReachGrants } from "../../services/reach/reach-grants.js";
import type { ReachAudit } from "../../services/reach/reach-audit.js";
import { grantVerbOf, requestedRuntimeModes } from "../../services/reach/tool-grant-verbs.js";
import { remoteCallerFrom } from "../../services/reach/reach-wire.js";
import { auditTargetOf, outcomeOf } from "../../services/reach/tool-call-outcome.js";

/**
 * A `tools/call` result as both protocol revisions carry it (the 2026-07-28 SDK adds
 * `resultType` and `_meta` itself): the structured output and its text, or a typed failure.
 */
export interface ToolCallResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A `tools/list` entry, the same on every revision. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: Record<string, unknown>;
}

/** The parts of a `tools/call` request a call reads. */
export interface ToolCallParams {
  readonly name: string;
  readonly arguments?: Record<string, unknown> | undefined;
  readonly _meta?: Record<string, unknown> | undefined;
}

/** What a call gets from the exchange that carries it, whichever revision that is. */
export interface ToolCallExchange {
  /** Aborted when the client cancels the call or leaves. */
  readonly signal: AbortSignal;
  /** Sends one `notifications/progress` for the call's token (never throws). */
  sendProgress(params: { progressToken: string | number; progress: number; message: string }): Promise<void>;
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

/** `environmentId`, which every tool in FORWARDED_TOOLS takes (issue 18, item 4). */
const EnvironmentIdInput = z
  .string()
  .min(1)
  .max(200)
  .describe(
    "Run this call in a linked environment (orchestrator_capabilities lists them: a link name, or the environment id in a link it built); default this one.",
  );

/** A tool's input, with `environmentId` added when the tool forwards to linked environments. */
function inputOf(definition: McpToolDefinition): z.ZodType {
  if (!Object.hasOwn(FORWARDED_TOOLS, definition.name)) return definition.input;
  return (definition.input as unknown as z.ZodObject).extend({ environmentId: EnvironmentIdInput.optional() });
}

interface ListedTool {
  readonly definition: McpToolDefinition;
  /** What a call's arguments are checked against (the tool's input, with `environmentId` where it forwards). */
  readonly input: z.ZodType;
  readonly listing: ToolListing;
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** A typed failure as a tool result: `isError` with `{ error: { code, message, details } }` text. */
export function failureResult(failure: OrchestratorFailure): ToolCallResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: failure.toJSON() }) }] };
}

function issuesMessage(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(arguments)"}: ${issue.message}`)
    .join("; ");
}

/**
 * The orchestrator's tools as the MCP endpoint serves them on every protocol revision: their
 * listing, and a call from its caller's scope to its typed result. Knows nothing of the wire:
 * each revision's server adapts its request context to a {@link ToolCallExchange}.
 */
export class McpToolCalls {
  private readonly tools = new Map<string, ListedTool>();
  private readonly listing: { tools: ToolListing[] };
  /** What linked environments are listed: every tool, their results outbox included. */
  private readonly linkedListing: { tools: ToolListing[] };

  constructor(
    definitions: readonly McpToolDefinition[],
    private readonly services: OperationServices,
    private readonly logger: Logger,
    private readonly reach: McpReach | null,
  ) {
    for (const definition of definitions) {
      // Every tool says what a linked environment needs to call it, so none is let through unclassified.
      if (grantVerbOf(definition.name) === undefined)
        throw new Error(
          `MCP tool ${definition.name} has no entry in TOOL_GRANT_VERBS (services/reach/tool-grant-verbs.ts): give it a grant verb, or null when linked environments may not call it.`,
        );
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
    this.listing = {
      tools: [...this.tools.values()]
        .filter((tool) => tool.definition.audience !== "linked_environments")
        .map((tool) => tool.listing),
    };
    this.linkedListing = { tools: [...this.tools.values()].map((tool) => tool.listing) };
  }

  /** Tool names, in registration order. */
  names(): string[] {
    return [...this.tools.keys()];
  }

  /** What `tools/list` answers this caller (linked environments also see their results outbox). */
  listingFor(scope: McpInvocationScope): { tools: ToolListing[] } {
    return linkedGrantOf(scope) !== null ? this.linkedListing : this.listing;
  }

  /** Answers one `tools/call` as `scope`; a call from a linked environment leaves one audit row, whatever its outcome. */
  async call(scope: McpInvocationScope, params: ToolCallParams, exchange: ToolCallExchange): Promise<ToolCallResult> {
    if (scope.kind !== "environment") return this.callAs(scope, params, exchange);
    const remote = remoteCallerFrom(params._meta);
    // The caller's ceiling on its side narrows the grant's for this call (it can never widen it).
    const callScope: McpInvocationScope = { ...scope, remote, ceiling: linkedCeiling(scope, params._meta) };
    const result = await this.callAs(callScope, params, exchange);
    this.reach!.audit.record({
      direction: "in",
      grantId: scope.grant!.id,
      environment: scope.grant!.for,
      remoteEnvironmentId: remote.environmentId,
      callerThreadId: remote.threadId,
      verb: grantVerbOf(params.name) ?? null,
      tool: params.name,
      target: auditTargetOf(params.arguments ?? {}, result),
      ...outcomeOf(result),
    });
    return result;
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
      throw new OrchestratorFailure(
        "capability_denied",
        `${toolName} is not offered to linked environments; only this machine's own clients and agents may call it.`,
        {
          grantId: grant.id,
          tool: toolName,
          reason: "tool",
        },
      );
    }
    this.reach!.grants.authorize(grant, { verb });
    for (const runtimeMode of requestedRuntimeModes(input)) this.reach!.grants.authorize(grant, { verb, runtimeMode });
  }

  private async callAs(
    scope: McpInvocationScope,
    params: ToolCallParams,
    exchange: ToolCallExchange,
  ): Promise<ToolCallResult> {
    const linked = linkedGrantOf(scope) !== null;
    const tool = this.tools.get(params.name);
    if (tool === undefined || (tool.definition.audience === "linked_environments" && !linked)) {
      return failureResult(
        new OrchestratorFailure(
          "invalid_request",
          `Unknown tool "${params.name}". Call tools/list for the available tools.`,
        ),
      );
    }
    const parsed = tool.input.safeParse(params.arguments ?? {});
    if (!parsed.success) {
      return failureResult(
        new OrchestratorFailure(
          "invalid_request",
          `Invalid arguments for ${tool.definition.name}: ${issuesMessage(parsed.error)}`,
        ),
      );
    }
    if (!scope.capabilities.has(tool.definition.requires)) {
      return failureResult(
        new OrchestratorFailure(
          "capability_denied",
          `This credential lacks the ${tool.definition.requires} capability that ${tool.definition.name} needs.`,
          {
            required: tool.definition.requires,
          },
        ),
      );
    }
    const progressToken = params._meta?.progressToken;
    let progress = 0;
    const reportProgress = async (message: string) => {
      if (typeof progressToken !== "string" && typeof progressToken !== "number") return;
      progress += 1;
      await exchange.sendProgress({ progressToken, progress, message });
    };
    try {
      if (scope.kind === "environment") this.authorizeEnvironment(scope, tool.definition.name, parsed.data);
      // A call for a linked environment goes there whole (the other side holds it to its grant
      // and checks its threads and tasks); its answer is the other side's.
      const args = parsed.data as Record<string, unknown>;
      if (linked && args.environmentId !== undefined && args.environmentId !== this.services.environmentId) {
        // A grant is for this environment only: it is never passed on to another one.
        throw new OrchestratorFailure(
          "capability_denied",
          `A linked environment's call runs here only; environmentId ${JSON.stringify(args.environmentId)} is not this environment (${this.services.environmentId}).`,
          {
            reason: "not_forwarded",
            environmentId: args.environmentId,
          },
        );
      }
      const link = linked ? null : await this.services.reach.destination(tool.definition.name, args);
      if (link !== null) {
        const forwarded = await this.services.reach.forward(callerFromScope(scope), tool.definition.name, args, link, {
          signal: exchange.signal,
          onProgress: () => void reportProgress(`waiting on ${link}`),
        });
        const structured = tool.definition.output.parse(forwarded) as Record<string, unknown>;
        return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
      }
      const { environmentId: _here, ...named } = args;
      // A link or web URL of a thread here becomes its id before the scope check reads it.
      const local = resolveThreadRefs(named, (value, field) =>
        this.services.threadLinks.threadIdOf(value, field),
      ) as Record<string, unknown>;
      // A project-scoped token (or grant) is checked before the tool reads anything.
      await this.services.callers.requireInScope(callerFromScope(scope), scopeRefs(local));
      const output = await tool.definition.handle(local, {
        scope,
        services: this.services,
        signal: exchange.signal,
        reportProgress,
        meta: params._meta,
      });
      const structured = tool.definition.output.parse(output) as Record<string, unknown>;
      return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (error) {
      if (isOrchestratorFailure(error)) return failureResult(error);
      if (isStoreBusy(error)) {
        // Nothing was done; the same call can be made again (idempotent ones by clientRequestId).
        this.logger.warn("MCP tool refused: the database is locked by another connection", {
          tool: tool.definition.name,
        });
        return failureResult(
          new OrchestratorFailure(
            "orchestration_error",
            `${tool.definition.name} was not done: ${(error as Error).message}`,
            { reason: "store_busy", retryable: true },
          ),
        );
      }
      this.logger.error("MCP tool failed", {
        tool: tool.definition.name,
        error: (error as Error).message,
        stack: (error as Error).stack,
      });
      return failureResult(
        new OrchestratorFailure("orchestration_error", `${tool.definition.name} failed: ${(error as Error).message}`),
      );
    }
  }
}
