import { inject, injectable } from "tsyringe";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TOKENS } from "../../di/tokens.js";
import { isOrchestratorFailure, OrchestratorFailure, ORCHESTRATOR_FAILURE_CODES, type OrchestratorFailureCode } from "../../engine/orchestrator-failure.js";
import { HOST_VERSION } from "../../util/host-version.js";
import type { SwitchyardConfig } from "../../config/config-schema.js";
import { REACH_META_KEY } from "./forwarded-tools.js";
import { ReachLinks } from "./reach-links.js";

/** What a forwarded call tells the other side about who asks here (its `_meta`). */
export interface ReachCallMeta {
  /** This environment's id. */
  readonly environmentId: string;
  /** The calling thread here (an agent's), or null for a client. */
  readonly callerThreadId: string | null;
  /** The caller's mode ceiling here; the other side intersects it with the grant's. */
  readonly ceiling: { readonly runtimeMode: string; readonly interactionMode: string };
  /** For a delegation: the parent here, which the child there carries as its foreign lineage. */
  readonly delegation?: ForeignParent;
}

/** A child's parent in another environment, with the budgets that travel with it. */
export interface ForeignParent {
  readonly environmentId: string;
  readonly threadId: string;
  readonly runId: string;
  readonly rootThreadId: string;
  /** The child's depth in the whole tree (the parent's depth + 1). */
  readonly depth: number;
  /** The delegating side's `budgets.maxDelegationDepth`: the stricter of both sides holds. */
  readonly maxDepth: number;
}

/**
 * Calls tools of linked environments: an MCP client of the other server's endpoint, presenting
 * the link's secret as its bearer credential. A call that cannot reach the other server is
 * `provider_unavailable` (reason `peer_unreachable`), one it refuses at the door (a revoked,
 * expired or unknown grant) `capability_denied` (reason `grant_refused`), and a typed failure
 * of the tool there comes back as that failure, naming the environment.
 */
@injectable()
export class ReachLinkCalls {
  constructor(
    private readonly links: ReachLinks,
    @inject(TOKENS.Config) private readonly config: SwitchyardConfig,
  ) {}

  async call(linkName: string, tool: string, args: Record<string, unknown>, meta: ReachCallMeta, options: { signal?: AbortSignal; onProgress?: () => void } = {}): Promise<Record<string, unknown>> {
    const link = this.links.get(linkName);
    if (link === null) throw unknownEnvironment(linkName, this.links.list().map((known) => known.name));
    const secret = this.links.secret(linkName);
    const transport = new StreamableHTTPClientTransport(new URL(`${link.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } });
    const client = new Client({ name: "switchyard-link", version: HOST_VERSION });
    try {
      try {
        await client.connect(transport);
      } catch (error) {
        throw transportFailure(linkName, error);
      }
      let result;
      try {
        result = await client.callTool({ name: tool, arguments: args, _meta: { [REACH_META_KEY]: meta } }, undefined, {
          // A forwarded wait blocks up to the other side's cap; progress keeps it alive.
          timeout: this.config.server.maxWaitMs + 60_000,
          resetTimeoutOnProgress: true,
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
          ...(options.onProgress !== undefined ? { onprogress: () => options.onProgress!() } : {}),
        });
      } catch (error) {
        throw transportFailure(linkName, error);
      }
      if (result.isError === true) throw remoteFailure(linkName, result.content);
      return (result.structuredContent ?? {}) as Record<string, unknown>;
    } finally {
      await client.close().catch(() => undefined);
    }
  }
}

/** `capability_denied` for an environmentId that names no link. */
export function unknownEnvironment(name: string, linked: readonly string[]): OrchestratorFailure {
  return new OrchestratorFailure(
    "capability_denied",
    `No linked environment is named ${JSON.stringify(name)}${linked.length > 0 ? `; linked: ${linked.join(", ")}` : "; none is linked"}. orchestrator_capabilities lists them; the user links one with \`switchyard link add\`.`,
    { reason: "unknown_environment", environmentId: name, linkedEnvironments: [...linked] },
  );
}

function transportFailure(linkName: string, error: unknown): OrchestratorFailure {
  if (isOrchestratorFailure(error)) return error;
  const status = error instanceof StreamableHTTPError ? error.code : undefined;
  if (status === 401 || status === 403) {
    return new OrchestratorFailure("capability_denied", `Environment ${linkName} refused this link's credential (its grant was revoked, expired or never existed there). Ask the user there for a new grant.`, {
      reason: "grant_refused",
      environmentId: linkName,
    });
  }
  if ((error as Error).name === "AbortError") return new OrchestratorFailure("orchestration_error", `The call to environment ${linkName} was cancelled.`, { reason: "cancelled", environmentId: linkName });
  return new OrchestratorFailure("provider_unavailable", `Environment ${linkName} cannot be reached now (${(error as Error).message.slice(0, 200)}). Try again later with the same clientRequestId: a retry finds work this call may have started there.`, {
    reason: "peer_unreachable",
    environmentId: linkName,
  });
}

function remoteFailure(linkName: string, content: unknown): OrchestratorFailure {
  const text = Array.isArray(content) ? ((content[0] as { text?: unknown } | undefined)?.text ?? "") : "";
  try {
    const parsed = JSON.parse(String(text)) as { error: { code: string; message: string; details?: Record<string, unknown> } };
    const code = (ORCHESTRATOR_FAILURE_CODES as readonly string[]).includes(parsed.error.code) ? (parsed.error.code as OrchestratorFailureCode) : "orchestration_error";
    return new OrchestratorFailure(code, `Environment ${linkName}: ${parsed.error.message}`, { ...(parsed.error.details ?? {}), environmentId: linkName });
  } catch {
    return new OrchestratorFailure("orchestration_error", `Environment ${linkName} answered with an untyped failure: ${String(text).slice(0, 300)}`, { environmentId: linkName });
  }
}
