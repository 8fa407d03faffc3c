import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { inject, injectable } from "tsyringe";
import { isOrchestratorFailure, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { hasErrorCode } from "../../spec/index.js";
import { type EventStore, StoreToken } from "../../store/ports.js";
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
    return new OrchestratorFailure(
      "provider_unavailable",
      `Environment ${link} presented a TLS certificate whose SHA-256 fingerprint (${error.actual}) is not the one its link pinned (${error.expected}). Nothing was sent. If the other server really has a new certificate, remove the link and add it again (switchyard link add … --fingerprint <sha256>).`,
      {
        environmentId: link,
        reason: "certificate_changed",
        expectedFingerprint: error.expected,
        actualFingerprint: error.actual,
      },
    );
  }
  if (error instanceof StreamableHTTPError && error.code === 401) {
    const rejection = /Link grant (revoked|expired)/.exec(error.message)?.[1] ?? "unknown";
    return new OrchestratorFailure(
      "capability_denied",
      `Environment ${link} refused this link's secret: its grant is ${rejection === "unknown" ? "unknown there (revoked and deleted, or never issued)" : rejection}. Ask the user on that machine for a new grant (switchyard grant issue) and add the link again.`,
      {
        environmentId: link,
        reason: `grant_${rejection}`,
      },
    );
  }
  if (error instanceof StreamableHTTPError) {
    return new OrchestratorFailure(
      "provider_unavailable",
      `Environment ${link} answered HTTP ${error.code}: ${error.message.slice(0, 300)}`,
      { environmentId: link, reason: "bad_answer", status: error.code },
    );
  }
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return new OrchestratorFailure(
    "provider_unavailable",
    `Environment ${link} cannot be reached (${detail}). Check that its server runs and that this machine can reach its address; work there is unaffected.`,
    {
      environmentId: link,
      reason: "unreachable",
    },
  );
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
    let result: CallToolResult;
    try {
      result = await this.send(tool, args, options);
    } catch (error) {
      throw this.recordFailure(tool, args, options, error);
    }
    this.recordResult(tool, args, options, result);
    return result;
  }

  /** Sends one call with this side's caller in `_meta`; records nothing and throws the SDK's own error (the pool decides whether to retry). */
  send(tool: string, args: Record<string, unknown>, options: LinkCallOptions = {}): Promise<CallToolResult> {
    const caller = { environmentId: this.localEnvironmentId, threadId: options.callerThreadId ?? null };
    return this.client.callTool(
      { name: tool, arguments: args, _meta: { ...options.meta, [REMOTE_CALLER_META_KEY]: caller } },
      undefined,
      options.request,
    ) as Promise<CallToolResult>;
  }

  /** Records a call's answer (the tool's own outcome, typed failures included) in this side's audit. */
  recordResult(tool: string, args: Record<string, unknown>, options: LinkCallOptions, result: CallToolResult): void {
    const { outcome, reason } = outcomeOf(result);
    this.record(tool, args, result, options.callerThreadId ?? null, outcome, reason);
  }

  /** Records a failure of the link itself in this side's audit and returns it typed. */
  recordFailure(
    tool: string,
    args: Record<string, unknown>,
    options: LinkCallOptions,
    error: unknown,
  ): OrchestratorFailure {
    const failure = linkFailure(this.link.name, error);
    this.record(
      tool,
      args,
      null,
      options.callerThreadId ?? null,
      failure.code,
      typeof failure.details.reason === "string" ? failure.details.reason : null,
    );
    return failure;
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
    this.release();
  }

  private record(
    tool: string,
    args: Record<string, unknown>,
    result: CallToolResult | null,
    callerThreadId: string | null,
    outcome: string,
    reason: string | null,
  ): void {
    this.audit.record({
      direction: "out",
      environment: this.link.name,
      callerThreadId,
      verb: grantVerbOf(tool) ?? null,
      tool,
      target: auditTargetOf(args, result),
      outcome,
      reason,
    });
  }
}

/** One pooled connection of a link: who it was opened as, and the calls now using it. */
interface PooledConnection {
  /** The link's id, URL, pinned fingerprint and secret hash it was opened with: any change means another connection. */
  readonly identity: string;
  readonly connection: Promise<LinkConnection>;
  inFlight: number;
  /** Left the pool (the link changed, the connection failed, the host stops): closed once its last call ends. */
  retired: boolean;
  closing: Promise<void> | null;
}

/** A failure that says the connection itself broke (not the other side's answer): worth one fresh connection. */
function isUnreachable(failure: OrchestratorFailure): boolean {
  return failure.code === "provider_unavailable" && failure.details.reason === "unreachable";
}

/**
 * Whether a call may be sent again when its connection broke: the other side may have carried it
 * out before the answer was lost, so only a read, a hand-over of results (acknowledged and
 * received once) or a call keyed by `clientRequestId` (a delegation finds the same task) is.
 */
function safeToResend(tool: string, args: Record<string, unknown>): boolean {
  return grantVerbOf(tool) === "read" || tool === "delegated_task_results" || typeof args.clientRequestId === "string";
}

/**
 * A's side of a link: opens MCP connections to linked environments with the link's secret
 * (read from its 0600 file, sent only in the Authorization header: never logged, never in
 * argv), pinning the other server's TLS certificate when the link has a fingerprint. The other
 * side authorizes every call against its grant.
 *
 * `callTool` keeps one connected MCP client per link (one container-wide instance of this
 * class), so a forwarded call costs one request there, not the MCP handshake's four. The pooled
 * client is keyed by the link's id, URL, fingerprint and secret hash, all read afresh for every
 * call: `link remove` and a new `link add` under the same name, or a replaced secret file, never
 * reuse the old connection. The pinned fetch checks the certificate on every new TLS connection
 * the pooled client opens.
 */
@injectable()
export class ReachLinkClient {
  private readonly pool = new Map<string, PooledConnection>();
  private closed = false;

  constructor(
    @inject(ReachLinks) private readonly links: ReachLinks,
    @inject(ReachAudit) private readonly audit: ReachAudit,
    @inject(StoreToken) private readonly store: EventStore,
  ) {}

  /**
   * Connects to the link named `name` (a connection of the caller's own, outside the pool). An
   * unknown name is `invalid_request`; a missing or replaced secret file, an unreachable peer or
   * a changed certificate `provider_unavailable`; a revoked, expired or unknown grant there
   * `capability_denied`. Failing to connect is recorded in the audit (with `forTool`, the tool
   * it was opened for, when given).
   */
  async connect(
    name: string,
    options: { callerThreadId?: string | null; forTool?: string } = {},
  ): Promise<LinkConnection> {
    try {
      const { link, secret } = await this.credentialsOf(name);
      return await this.open(link, secret);
    } catch (error) {
      throw this.connectFailure(name, options, error);
    }
  }

  /**
   * Calls one tool on the link (audited once, whatever happened) over the link's pooled
   * connection. When a reused connection turns out broken (the peer restarted, a kept-alive
   * socket was cut), it is dropped and a call that is safe to repeat (a read, a hand-over of
   * results, a delegation keyed by clientRequestId) is sent once more on a fresh one; any other
   * call fails `unreachable`, as it would on a fresh connection, and the next call reconnects.
   */
  async callTool(
    name: string,
    tool: string,
    args: Record<string, unknown>,
    options: LinkCallOptions = {},
  ): Promise<CallToolResult> {
    if (this.closed) return this.callOnce(name, tool, args, options);
    for (let attempt = 0; ; attempt += 1) {
      const { entry, reused } = await this.pooled(name, {
        callerThreadId: options.callerThreadId ?? null,
        forTool: tool,
      });
      let connection: LinkConnection;
      try {
        connection = await entry.connection;
      } catch (error) {
        this.release(name, entry, true);
        throw this.connectFailure(name, { callerThreadId: options.callerThreadId ?? null, forTool: tool }, error);
      }
      try {
        const result = await connection.send(tool, args, options);
        this.release(name, entry, false);
        connection.recordResult(tool, args, options, result);
        return result;
      } catch (error) {
        // Any failure of the link itself retires the connection: the next call opens a fresh one.
        this.release(name, entry, true);
        const failure = linkFailure(name, error);
        if (
          reused &&
          attempt === 0 &&
          isUnreachable(failure) &&
          safeToResend(tool, args) &&
          options.request?.signal?.aborted !== true
        )
          continue;
        throw connection.recordFailure(tool, args, options, error);
      }
    }
  }

  /** Closes every pooled connection (the host stops; one still in use closes when its call ends); later calls connect for themselves and close again. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.pool.entries()];
    for (const [name, entry] of entries) this.retire(name, entry);
    await Promise.allSettled(entries.map(([, entry]) => entry.closing ?? Promise.resolve()));
  }

  /** Connects, calls one tool (audited), and closes. */
  private async callOnce(
    name: string,
    tool: string,
    args: Record<string, unknown>,
    options: LinkCallOptions,
  ): Promise<CallToolResult> {
    const connection = await this.connect(name, { callerThreadId: options.callerThreadId ?? null, forTool: tool });
    try {
      return await connection.callTool(tool, args, options);
    } finally {
      await connection.close();
    }
  }

  /** The link's pooled connection for one call (counted in flight), opened when there is none for the link as it now is. */
  private async pooled(
    name: string,
    options: { callerThreadId: string | null; forTool: string },
  ): Promise<{ entry: PooledConnection; reused: boolean }> {
    let credentials: { link: ReachLink; secret: string };
    try {
      credentials = await this.credentialsOf(name);
    } catch (error) {
      throw this.connectFailure(name, options, error);
    }
    const { link, secret } = credentials;
    const identity = [
      link.id,
      link.url,
      link.fingerprint ?? "",
      createHash("sha256").update(secret).digest("hex"),
    ].join("\n");
    const current = this.pool.get(name);
    if (current !== undefined && current.identity === identity) {
      current.inFlight += 1;
      return { entry: current, reused: true };
    }
    if (current !== undefined) this.retire(name, current);
    const entry: PooledConnection = {
      identity,
      connection: this.open(link, secret),
      inFlight: 1,
      retired: false,
      closing: null,
    };
    // A failed opening is reported to the call that waits for it; no one else waits unhandled.
    entry.connection.catch(() => undefined);
    this.pool.set(name, entry);
    return { entry, reused: false };
  }

  /** Ends one call's use of a pooled connection; `broken` takes the connection out of the pool. */
  private release(name: string, entry: PooledConnection, broken: boolean): void {
    entry.inFlight -= 1;
    if (broken) this.retire(name, entry);
    else this.closeIfIdle(entry);
  }

  /** Takes a connection out of the pool; it closes when no call uses it any more (a long wait on it is not cut). */
  private retire(name: string, entry: PooledConnection): void {
    if (this.pool.get(name) === entry) this.pool.delete(name);
    entry.retired = true;
    this.closeIfIdle(entry);
  }

  private closeIfIdle(entry: PooledConnection): void {
    if (!entry.retired || entry.inFlight > 0 || entry.closing !== null) return;
    entry.closing = entry.connection.then(
      (connection) => connection.close(),
      () => undefined,
    );
  }

  /** The link named `name` and its secret, read afresh (an unknown link `invalid_request`, an unusable secret file `provider_unavailable`). */
  private async credentialsOf(name: string): Promise<{ link: ReachLink; secret: string }> {
    const link = await this.links.get(name);
    if (link === null) {
      throw new OrchestratorFailure(
        "invalid_request",
        `No environment is linked as ${JSON.stringify(name)}. The user adds links with \`switchyard link add\`; \`switchyard link list\` shows them.`,
        { environmentId: name, reason: "unknown_link" },
      );
    }
    try {
      return { link, secret: await this.links.secret(name) };
    } catch (error) {
      if (!hasErrorCode(error)) throw error;
      throw new OrchestratorFailure(
        "provider_unavailable",
        `Link ${name} cannot be used: ${(error as unknown as Error).message}`,
        { environmentId: name, reason: "link_secret_unusable" },
      );
    }
  }

  /** Opens an MCP connection to the link with its secret (and its pinned certificate); throws the typed link failure. */
  private async open(link: ReachLink, secret: string): Promise<LinkConnection> {
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
      throw linkFailure(link.name, error);
    }
    return new LinkConnection(link, client, environmentId(this.store), this.audit, () => pinned?.close());
  }

  /** A failure to connect, typed and recorded in the audit. */
  private connectFailure(
    name: string,
    options: { callerThreadId?: string | null; forTool?: string },
    error: unknown,
  ): OrchestratorFailure {
    const failure = linkFailure(name, error);
    // A name that is no link is the caller's mistake, not a call across environments.
    if (failure.details.reason === "unknown_link") return failure;
    this.audit.record({
      direction: "out",
      environment: name,
      callerThreadId: options.callerThreadId ?? null,
      verb: options.forTool === undefined ? null : (grantVerbOf(options.forTool) ?? null),
      tool: options.forTool ?? null,
      outcome: failure.code,
      reason: typeof failure.details.reason === "string" ? failure.details.reason : null,
    });
    return failure;
  }
}
