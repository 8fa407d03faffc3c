import { inject, injectable } from "tsyringe";
import {
  OrchestratorFailure,
  ORCHESTRATOR_FAILURE_CODES,
  type OrchestratorFailureCode,
} from "../../engine/orchestrator-failure.js";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { REACH_META_KEY } from "./forwarded-tools.js";
import { ReachLinkClient } from "./link-client.js";
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
 * Calls one tool of a linked environment through its link (`ReachLinkClient`: the link secret,
 * the pinned certificate, the audit) with this side's facts in `_meta`, and returns the
 * structured answer. A failure of the link itself is the link client's typed failure
 * (`provider_unavailable` reason `unreachable`, `capability_denied` reason `grant_revoked`, …);
 * a typed failure of the tool there comes back as that failure, naming the environment.
 */
@injectable()
export class ReachLinkCalls {
  constructor(
    private readonly links: ReachLinks,
    private readonly client: ReachLinkClient,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
  ) {}

  async call(
    linkName: string,
    tool: string,
    args: Record<string, unknown>,
    meta: ReachCallMeta,
    options: { signal?: AbortSignal; onProgress?: () => void } = {},
  ): Promise<Record<string, unknown>> {
    if ((await this.links.get(linkName)) === null)
      throw unknownEnvironment(
        linkName,
        (await this.links.list()).map((known) => known.name),
      );
    const result = await this.client.callTool(linkName, tool, args, {
      callerThreadId: meta.callerThreadId,
      meta: { [REACH_META_KEY]: meta },
      request: {
        // A forwarded wait blocks up to the other side's cap; progress keeps it alive.
        timeout: this.config.server.maxWaitMs + 60_000,
        resetTimeoutOnProgress: true,
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        ...(options.onProgress !== undefined ? { onprogress: () => options.onProgress!() } : {}),
      },
    });
    if (result.isError === true) throw remoteFailure(linkName, result.content);
    return (result.structuredContent ?? {}) as Record<string, unknown>;
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

function remoteFailure(linkName: string, content: unknown): OrchestratorFailure {
  const text = Array.isArray(content) ? ((content[0] as { text?: unknown } | undefined)?.text ?? "") : "";
  try {
    const parsed = JSON.parse(String(text)) as {
      error: { code: string; message: string; details?: Record<string, unknown> };
    };
    const code = (ORCHESTRATOR_FAILURE_CODES as readonly string[]).includes(parsed.error.code)
      ? (parsed.error.code as OrchestratorFailureCode)
      : "orchestration_error";
    return new OrchestratorFailure(code, `Environment ${linkName}: ${parsed.error.message}`, {
      ...(parsed.error.details ?? {}),
      environmentId: linkName,
    });
  } catch {
    return new OrchestratorFailure(
      "orchestration_error",
      `Environment ${linkName} answered with an untyped failure: ${String(text).slice(0, 300)}`,
      { environmentId: linkName },
    );
  }
}
