import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { inject, injectable } from "tsyringe";
import { TOKENS } from "../../di/tokens.js";
import { isOrchestratorFailure, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { hasErrorCode } from "../../spec/index.js";
import type { EventStore } from "../../store/ports.js";
import { environmentId } from "../../store/settings.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { ReachAudit } from "./reach-audit.js";
import { ReachLinks, type ReachLink } from "./reach-links.js";
import { REMOTE_CALLER_META_KEY } from "./reach-wire.js";
import { grantVerbOf } from "./tool-grant-verbs.js";
import { auditTargetOf, outcomeOf } from "./tool-call-outcome.js";
import { LinkCertificateError, pinnedFetch } from "./pinned-fetch.js";

/** Options of one call through a link. */
export interface LinkCallOptions {
  /** The thread on this side the call is made for (recorded in both audits; null for CLI and scripts). */
  readonly callerThreadId?: string | null;
  /** Passed to the MCP SDK (timeout, signal, onprogress, resetTimeoutOnProgress). */
  readonly request?: RequestOptions;
  /** More `_meta` entries for the call (a forwarded call's ceiling and delegation lineage). */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/**
 * A failure of the link itself, as the typed failure a tool caller gets: an unknown link, an
 * unreachable peer or a changed certificate (`provider_unavailable`, details.reason
 * `unreachable`, `certificate_changed`, `link_secret_unusable`), a refused link secret
 * (`capability_denied`, reason `grant_revoked`, `grant_expired`, `grant_unknown`).
 */
export function linkFailure(link: string, error: unknown): OrchestratorFailure {
  if (isOrchestratorFailure(error)) return error;
  if (error instanceof LinkCertificateError) {
    return new OrchestratorFailure("provider_unavailable", `Environment ${link} presented a TLS certificate whose SHA-256 fingerprint (${error.actual}) is not the one its link pinned (${error.expected}). Nothing was sent. If the other server really has a new certificate, remove the link and add it again (switchyard link add … --fingerprint <sha256>).`, {
      environmentId: link,
      reason: "certificate_changed",
      expectedFingerprint: error.expected,
      actualFingerprint: error.actual,
    });
  }
  if (error instanceof StreamableHTTPError && error.code === 401) {
    const rejection = /Link grant (revoked|expired)/.exec(error.message)?.[1] ?? "unknown";
    return new OrchestratorFailure("capability_denied", `Environment ${link} refused this link's secret: its grant is ${rejection === "unknown" ? "unknown there (revoked and deleted, or never issued)" : rejection}. Ask the user on that machine for a new grant (switchyard grant issue) and add the link again.`, {
      environmentId: link,
      reason: `grant_${rejection}`,
    });
  }
  if (error instanceof StreamableHTTPError) {
    return new OrchestratorFailure("provider_unavailable", `Environment ${link} answered HTTP ${error.code}: ${error.message.slice(0, 300)}`, { environmentId: link, reason: "bad_answer", status: error.code });
  }
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return new OrchestratorFailure("provider_unavailable", `Environment ${link} cannot be reached (${detail}). Check that its server runs and that this machine can reach its address; work there is unaffected.`, {
    environmentId: link,
    reason: "unreachable",
  });
}

/** An open connection to a linked environment's MCP endpoint. */
export class LinkConnection {
  constructor(
    readonly link: ReachLink,
    /** The MCP SDK client (Streamable HTTP, carrying the link secret). Calls made on it directly are not audited; prefer {@link callTool}. */
    readonly client: Client,
    private readonly localEnvironmentId: string,
    private readonly audit: ReachAudit,
    private readonly release: () => void = () => undefined,
  ) {}

  /**
   * Calls a tool on the linked environment and records it in this side's audit (link, caller
   * thread, verb, target, outcome). The tool's own typed failures come back as the result
   * (`isError`), exactly as the other side answered; a failure of the link itself (unreachable,
   * refused secret, changed certificate) is thrown as an OrchestratorFailure (see {@link linkFailure}).
   */
  async callTool(tool: string, args: Record<string, unknown>, options: LinkCallOptions = {}): Promise<CallToolResult> {
    const callerThreadId = options.callerThreadId ?? null;
    let result: CallToolResult;
    try {
      result = (await this.client.callTool(
        { name: tool, arguments: args, _meta: { ...options.meta, [REMOTE_CALLER_META_KEY]: { environmentId: this.localEnvironmentId, threadId: callerThreadId } } },
        undefined,
        options.request,
      )) as CallToolResult;
    } catch (error) {
      const failure = linkFailure(this.link.name, error);
      this.record(tool, args, null, callerThreadId, failure.code, typeof failure.details.reason === "string" ? failure.details.reason : null);
      throw failure;
    }
    const { outcome, reason } = outcomeOf(result);
    this.record(tool, args, result, callerThreadId, outcome, reason);
    return result;
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
    this.release();
  }

  private record(tool: string, args: Record<string, unknown>, result: CallToolResult | null, callerThreadId: string | null, outcome: string, reason: string | null): void {
    this.audit.record({ direction: "out", environment: this.link.name, callerThreadId, verb: grantVerbOf(tool) ?? null, tool, target: auditTargetOf(args, result), outcome, reason });
  }
}

/**
 * A's side of a link: opens MCP connections to linked environments with the link's secret
 * (read from its 0600 file, sent only in the Authorization header: never logged, never in
 * argv), pinning the other server's TLS certificate when the link has a fingerprint. The other
 * side authorizes every call against its grant.
 */
@injectable()
export class ReachLinkClient {
  constructor(
    @inject(ReachLinks) private readonly links: ReachLinks,
    @inject(ReachAudit) private readonly audit: ReachAudit,
    @inject(TOKENS.Store) private readonly store: EventStore,
  ) {}

  /**
   * Connects to the link named `name`. An unknown name is `invalid_request`; a missing or
   * replaced secret file, an unreachable peer or a changed certificate `provider_unavailable`;
   * a revoked, expired or unknown grant there `capability_denied`. Failing to connect is
   * recorded in the audit (with `forTool`, the tool it was opened for, when given).
   */
  async connect(name: string, options: { callerThreadId?: string | null; forTool?: string } = {}): Promise<LinkConnection> {
    const link = this.links.get(name);
    if (link === null) {
      throw new OrchestratorFailure("invalid_request", `No environment is linked as ${JSON.stringify(name)}. The user adds links with \`switchyard link add\`; \`switchyard link list\` shows them.`, { environmentId: name, reason: "unknown_link" });
    }
    try {
      let secret: string;
      try {
        secret = this.links.secret(name);
      } catch (error) {
        if (!hasErrorCode(error)) throw error;
        throw new OrchestratorFailure("provider_unavailable", `Link ${name} cannot be used: ${(error as unknown as Error).message}`, { environmentId: name, reason: "link_secret_unusable" });
      }
      const pinned = link.fingerprint !== null ? pinnedFetch(link.fingerprint) : null;
      const transport = new StreamableHTTPClientTransport(new URL(`${link.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${secret}` } },
        ...(pinned !== null ? { fetch: pinned } : {}),
      });
      const client = new Client({ name: "switchyard-link", version: HOST_VERSION });
      try {
        await client.connect(transport);
      } catch (error) {
        await client.close().catch(() => undefined);
        pinned?.close();
        throw linkFailure(name, error);
      }
      return new LinkConnection(link, client, environmentId(this.store), this.audit, () => pinned?.close());
    } catch (error) {
      const failure = linkFailure(name, error);
      this.audit.record({ direction: "out", environment: name, callerThreadId: options.callerThreadId ?? null, verb: options.forTool === undefined ? null : (grantVerbOf(options.forTool) ?? null), tool: options.forTool ?? null, outcome: failure.code, reason: typeof failure.details.reason === "string" ? failure.details.reason : null });
      throw failure;
    }
  }

  /** Connects, calls one tool (audited), and closes: the simplest way to forward one call. */
  async callTool(name: string, tool: string, args: Record<string, unknown>, options: LinkCallOptions = {}): Promise<CallToolResult> {
    const connection = await this.connect(name, { callerThreadId: options.callerThreadId ?? null, forTool: tool });
    try {
      return await connection.callTool(tool, args, options);
    } finally {
      await connection.close();
    }
  }
}
