import { hash, randomBytes } from "node:crypto";
import { inject, injectable } from "tsyringe";
import type { InteractionMode, McpEndpointGrant, RuntimeMode } from "../../spec/index.js";
import { isStoreBusy } from "../../util/store-busy.js";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import type { McpGrantIssuer, ProviderSessionScope } from "../../engine/mcp-grant-issuer.js";
import { TOKEN_PREFIX, type Logger, LoggerToken } from "../../logging/logger.js";
import { type EventStore, StoreToken } from "../../store/ports.js";
import { environmentId } from "../../store/settings.js";
import { AttemptsTable } from "../../store/tables/attempts.js";
import { type CredentialRow, McpCredentialsTable, type NewCredential } from "../../store/tables/mcp-credentials.js";
import { type Clock, ClockToken } from "../../util/clock.js";
import { orchestrationInstructions } from "../orchestration-instructions.js";
import type { ReachGrant } from "./reach-grant.js";
import { CredentialCache } from "./credential-cache.js";

/**
 * What a credential allows. `operate` (send, create, interrupt, stop, answer questions),
 * `approve` (answer approvals) and `install` (server-wide installs: the ACP Registry's install
 * jobs) each include `read`; none includes another. Only client tokens can hold `approve` or
 * `install`: a provider session's credential (an agent's) never does, since approvals are not
 * routed to agents and an install changes what the whole server runs.
 */
export type CredentialCapability =
  "orchestration:read" | "orchestration:operate" | "orchestration:approve" | "orchestration:install";

/** The broadest runtime and interaction modes a caller's work may have. */
export interface ModeCeiling {
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
}

/** The projects a client token may use: their ids, or every project (`"*"`). */
export type ProjectScope = readonly string[] | "*";

/**
 * A client token without a recorded ceiling or project list (issued before tokens had them, or
 * issued in code without one) keeps what it was issued with: every project, the broadest modes.
 */
export const UNRESTRICTED_CEILING: ModeCeiling = { runtimeMode: "full-access", interactionMode: "default" };

/** Who is calling and what they may do, resolved from a bearer token for each MCP request. */
export interface McpInvocationScope {
  readonly credentialId: string;
  /**
   * A provider session (an agent in a Switchyard thread), an outside client (CLI, script), or a
   * linked environment presenting a grant's link secret (`grant` is then set).
   */
  readonly kind: "provider_session" | "client" | "environment";
  readonly environmentId: string;
  readonly threadId: string | null;
  readonly projectId: string | null;
  readonly providerInstanceId: string | null;
  readonly providerSessionId: string | null;
  readonly capabilities: ReadonlySet<CredentialCapability>;
  readonly label: string | null;
  /** The projects a client token may use; `"*"` for provider sessions. */
  readonly projects: ProjectScope;
  /** A client token's mode ceiling; null for a provider session (its run's modes are its ceiling). */
  readonly ceiling: ModeCeiling | null;
  /** For a linked environment: the grant its secret stands for, read at this request. */
  readonly grant?: ReachGrant;
  /** For a linked environment: who it says is calling (unverified claims, kept for the audit). */
  readonly remote?: RemoteCaller;
  /** For a client token `switchyard connect` issued: the harness and the project folder it was connected for. */
  readonly connection?: ClientConnection;
  /** For a client token's MCP call: the outside agent session it comes from (set by the endpoint per call). */
  readonly attachment?: ClientAttachment;
}

/** What a client token `switchyard connect` issued says about its connection. */
export interface ClientConnection {
  /** The harness it wired (`codex`, `claude`…). */
  readonly harness: string;
  /** The folder of a project-scope connection (`--project`), else null. */
  readonly projectDir: string | null;
}

/**
 * The outside agent session a client token's MCP call comes from: the MCP session the client
 * keeps (null for a client without one: the token is then the session), what it said it is at
 * `initialize`, and its roots (folders), when it declared them and answered `roots/list`. All of
 * it is the client's claim: it picks the session's attached thread and the project to work in,
 * never what the token may do.
 */
export interface ClientAttachment {
  /** The client token the session calls with (the endpoint's, not a claim). */
  readonly credentialId: string;
  readonly mcpSessionId: string | null;
  readonly client: { readonly name: string; readonly version: string } | null;
  readonly roots: readonly string[] | null;
}

/** What `issueClientToken` is asked for (see there). */
export interface ClientTokenRequest {
  readonly ttlMs: number;
  readonly capabilities: readonly CredentialCapability[];
  readonly label?: string | null;
  readonly projects?: ProjectScope;
  readonly ceiling?: ModeCeiling;
  /** The connection `switchyard connect` issues it for (its project folder is where its work goes by default). */
  readonly connection?: ClientConnection;
  /** Held by one command while it runs and revoked when it ends (listed only on request). */
  readonly ephemeral?: boolean;
}

/** A client token just issued: the only time its secret is shown. */
export interface IssuedClientToken {
  id: string;
  token: string;
  expiresAt: string;
  capabilities: CredentialCapability[];
  projects: ProjectScope;
  ceiling: ModeCeiling;
}

/** What a linked environment says about its caller: its environment id and the calling thread there. */
export interface RemoteCaller {
  readonly environmentId: string | null;
  readonly threadId: string | null;
}

/** Why a token was refused (logged, never shown with the token). */
export type CredentialRejection = "unknown" | "expired" | "idle_expired" | "revoked";

/** A credential as listed (never its token). */
export interface CredentialSummary {
  readonly id: string;
  readonly kind: McpInvocationScope["kind"];
  readonly label: string | null;
  readonly capabilities: readonly CredentialCapability[];
  /** The projects a client token may use (`"*"`: all). */
  readonly projects: ProjectScope;
  /** A client token's mode ceiling; null for a provider session. */
  readonly ceiling: ModeCeiling | null;
  readonly threadId: string | null;
  readonly providerSessionId: string | null;
  readonly expiresAt: string;
  readonly lastUsedAt: string;
  readonly revokedAt: string | null;
  /** A client token one command holds while it runs (the CLI's own); `token list` hides these. */
  readonly ephemeral: boolean;
}

/** The endpoint provider sessions are pointed at, known once the HTTP server listens. */
export interface McpEndpointInfo {
  readonly url: string;
  readonly serverName: string;
  readonly maxWaitMs: number;
  /** How to start the stdio bridge (`switchyard mcp-bridge`) for harnesses without HTTP MCP. */
  readonly bridge: { readonly command: string; readonly args: readonly string[] };
}

/** A credential row as {@link McpSessionRegistry.resolve} checks it: its data read and its scope built once. */
interface ReadCredential {
  readonly row: CredentialRow;
  readonly data: CredentialData;
  readonly scope: McpInvocationScope;
}

interface CredentialData {
  environmentId: string;
  projectId: string | null;
  providerInstanceId: string | null;
  capabilities: CredentialCapability[];
  label: string | null;
  idleMs: number | null;
  /** Client tokens only; absent in rows written before tokens had project lists. */
  projects?: string[] | "*";
  /** Client tokens only; absent in rows written before tokens had ceilings. */
  ceiling?: ModeCeiling;
  /** Client tokens `switchyard connect` issued; absent on every other credential. */
  connection?: ClientConnection;
  /** Client tokens a command issues for itself and revokes when it ends; absent otherwise. */
  ephemeral?: true;
}

/** What a stored credential may do, read pessimistically where it matters: a provider session never approves. */
function capabilitiesOf(kind: McpInvocationScope["kind"], data: CredentialData): CredentialCapability[] {
  return kind === "provider_session"
    ? data.capabilities.filter(
        (capability) => capability === "orchestration:read" || capability === "orchestration:operate",
      )
    : data.capabilities;
}

function projectsOf(kind: McpInvocationScope["kind"], data: CredentialData): ProjectScope {
  return kind === "client" && data.projects !== undefined ? data.projects : "*";
}

function ceilingOf(kind: McpInvocationScope["kind"], data: CredentialData): ModeCeiling | null {
  return kind === "client" ? (data.ceiling ?? UNRESTRICTED_CEILING) : null;
}

/**
 * How stale a credential's stored last use may get before a request writes it again: a tenth of
 * its idle limit (what the provider session manager's own touches allow too), at most a second.
 */
function touchGranularityMs(idleMs: number | null): number {
  return idleMs === null ? 1_000 : Math.min(1_000, Math.floor(idleMs / 10));
}

/** A stored credential's data and the scope it stands for, read from its row. */
function readCredential(row: CredentialRow): ReadCredential {
  const data = JSON.parse(row.data) as CredentialData;
  const scope: McpInvocationScope = {
    credentialId: row.id,
    kind: row.kind,
    environmentId: data.environmentId,
    threadId: row.thread_id,
    projectId: data.projectId,
    providerInstanceId: data.providerInstanceId,
    providerSessionId: row.provider_session_id,
    capabilities: new Set(capabilitiesOf(row.kind, data)),
    label: data.label,
    projects: projectsOf(row.kind, data),
    ceiling: ceilingOf(row.kind, data),
    ...(row.kind === "client" && data.connection !== undefined ? { connection: data.connection } : {}),
  };
  return { row, data, scope };
}

function hashToken(token: string): string {
  // One-shot: on every MCP request, a Hash object per token cost three times the digest.
  return hash("sha256", token, "hex");
}

/**
 * Issues and resolves MCP bearer credentials. Only a SHA-256 hash of each token is stored;
 * provider-session credentials are scoped to environment, thread, provider instance and
 * session, expire after a maximum lifetime or when idle (a session whose turn is running is
 * never idle), and are revoked with their session.
 */
@injectable()
export class McpSessionRegistry implements McpGrantIssuer {
  private endpoint: McpEndpointInfo | null = null;
  /** Resolved credentials by token hash. */
  private cache: CredentialCache<ReadCredential> | null = null;
  private readonly table: McpCredentialsTable;
  private readonly attempts: AttemptsTable;

  constructor(
    @inject(StoreToken) private readonly store: EventStore,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {
    this.table = new McpCredentialsTable(store);
    this.attempts = new AttemptsTable(store);
  }

  /**
   * Sets the endpoint that grants point at: once the HTTP listener is bound and before the
   * host reopens any session; null once the server stops taking requests.
   */
  setEndpoint(endpoint: McpEndpointInfo | null): void {
    this.endpoint = endpoint;
  }

  get environmentId(): string {
    return environmentId(this.store);
  }

  /** A new credential: its token, and the row to store (the caller writes it). */
  private newCredential(
    kind: McpInvocationScope["kind"],
    data: CredentialData,
    ttlMs: number,
    scope: { threadId: string | null; providerSessionId: string | null },
  ): { id: string; token: string; expiresAt: number; row: NewCredential } {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const id = `cred_${randomBytes(8).toString("hex")}`;
    const now = this.clock.nowMs();
    const expiresAt = now + ttlMs;
    const row = {
      id,
      tokenHash: hashToken(token),
      kind,
      providerSessionId: scope.providerSessionId,
      threadId: scope.threadId,
      data: JSON.stringify(data),
      expiresAt,
      issuedAt: now,
    };
    return { id, token, expiresAt, row };
  }

  /** Issues the credential of a provider session (before the session opens). */
  async issue(scope: ProviderSessionScope): Promise<McpEndpointGrant | null> {
    if (this.endpoint === null) return null;
    const { token, row } = this.newCredential(
      "provider_session",
      {
        environmentId: this.environmentId,
        projectId: scope.projectId,
        providerInstanceId: scope.providerInstanceId,
        capabilities: ["orchestration:read", "orchestration:operate"],
        label: null,
        idleMs: this.config.server.credentialIdleMs,
      },
      this.config.server.credentialMaxLifetimeMs,
      { threadId: scope.threadId, providerSessionId: scope.providerSessionId },
    );
    // A session opens while commands run: its row waits for the one under way to commit.
    await this.store.writeAsync(() => this.table.insert(row));
    const endpoint = this.endpoint;
    if (endpoint === null) return null; // the server stopped taking requests meanwhile
    return {
      serverName: endpoint.serverName,
      url: endpoint.url,
      token,
      // Above the longest blocking wait, so the harness never gives up before the server answers.
      toolTimeoutMs: endpoint.maxWaitMs * 2 + 30_000,
      blockingToolNames: ["delegate_task", "t3_thread_wait"],
      directToolNames: ["t3_thread_wait"],
      instructions: orchestrationInstructions(endpoint.serverName),
      stdioBridge: {
        command: endpoint.bridge.command,
        args: [...endpoint.bridge.args],
        env: { SWITCHYARD_MCP_URL: endpoint.url, SWITCHYARD_MCP_TOKEN: token },
      },
    };
  }

  /**
   * Issues a client token (CLI, scripts, other machines). The token is returned once. It may
   * use `projects` (default every project) and never exceed `ceiling` (default the broadest
   * modes; `switchyard token issue` always passes one): work it creates without naming modes
   * gets the ceiling's modes, and it cannot change a thread whose modes are broader.
   */
  issueClientToken(options: ClientTokenRequest): IssuedClientToken {
    const { row, issued } = this.clientToken(options);
    // Synchronous, as its callers are (the CLI's own host, `connect`, tests' set-up): refused
    // (store_async_transaction_open) should one ever run beside a command of this store.
    this.table.insertNow(row);
    return issued;
  }

  /**
   * {@link issueClientToken} for a caller in a process whose engine may be running a command (a
   * serving host): the write waits its turn among the store's transactions instead of being
   * refused beside one.
   */
  async issueClientTokenAsync(options: ClientTokenRequest): Promise<IssuedClientToken> {
    const { row, issued } = this.clientToken(options);
    await this.store.writeAsync(() => this.table.insert(row));
    return issued;
  }

  private clientToken(options: ClientTokenRequest): { row: NewCredential; issued: IssuedClientToken } {
    const requested = new Set(options.capabilities);
    if (
      requested.has("orchestration:operate") ||
      requested.has("orchestration:approve") ||
      requested.has("orchestration:install")
    )
      requested.add("orchestration:read");
    // A fixed order, so listings and receipts read the same whichever order they were asked in.
    const capabilities = (
      ["orchestration:read", "orchestration:operate", "orchestration:approve", "orchestration:install"] as const
    ).filter((capability) => requested.has(capability));
    const projects = options.projects === undefined || options.projects === "*" ? "*" : [...new Set(options.projects)];
    const ceiling = options.ceiling ?? UNRESTRICTED_CEILING;
    const issued = this.newCredential(
      "client",
      {
        environmentId: this.environmentId,
        projectId: null,
        providerInstanceId: null,
        capabilities,
        label: options.label ?? null,
        idleMs: null,
        projects,
        ceiling: { runtimeMode: ceiling.runtimeMode, interactionMode: ceiling.interactionMode },
        ...(options.connection !== undefined
          ? { connection: { harness: options.connection.harness, projectDir: options.connection.projectDir } }
          : {}),
        ...(options.ephemeral === true ? { ephemeral: true as const } : {}),
      },
      options.ttlMs,
      { threadId: null, providerSessionId: null },
    );
    return {
      row: issued.row,
      issued: {
        id: issued.id,
        token: issued.token,
        expiresAt: new Date(issued.expiresAt).toISOString(),
        capabilities,
        projects,
        ceiling,
      },
    };
  }

  private credentials(): CredentialCache<ReadCredential> {
    this.cache ??= new CredentialCache(() => this.store.dataVersion());
    return this.cache;
  }

  /** After a write that may change any credential: none is answered from memory until read again. */
  private forgetResolved(): void {
    this.cache?.clear();
  }

  /**
   * Resolves a bearer token to its scope, refreshing its idle clock; or says why not. A token
   * in use is read from the database once, then from memory while no write can have changed it
   * (see {@link CredentialCache}); an unknown token is looked up every time.
   */
  async resolve(token: string): Promise<{ scope: McpInvocationScope } | { rejection: CredentialRejection }> {
    const tokenHash = hashToken(token);
    const cache = this.credentials();
    let credential = cache.get(tokenHash);
    if (credential === undefined) {
      const readAt = cache.generation();
      const row = await this.table.byTokenHash(tokenHash);
      if (row === null) return { rejection: "unknown" };
      credential = readCredential(row);
      cache.set(tokenHash, credential, readAt);
    }
    return this.check(credential);
  }

  /**
   * Resolves a credential by id, with the same checks as {@link resolve}: what a browser
   * session (which stores the id of the token it was signed in with, never the token) acts as.
   * Also says when the credential expires, which a session never outlives.
   */
  async resolveById(
    credentialId: string,
  ): Promise<{ scope: McpInvocationScope; expiresAtMs: number } | { rejection: CredentialRejection }> {
    const row = await this.table.byId(credentialId);
    if (row === null) return { rejection: "unknown" };
    const touchedBefore = row.last_used_at;
    const resolved = await this.check(readCredential(row));
    // This copy is not the cached one: a cached copy of the same credential would read an older use.
    if (row.last_used_at !== touchedBefore) this.forgetResolved();
    return "scope" in resolved ? { scope: resolved.scope, expiresAtMs: row.expires_at } : resolved;
  }

  /** Checks a credential against the clock, refreshing its stored last use when it is stale. */
  private async check({
    row,
    data,
    scope,
  }: ReadCredential): Promise<{ scope: McpInvocationScope } | { rejection: CredentialRejection }> {
    if (row.revoked_at !== null) return { rejection: "revoked" };
    const now = this.clock.nowMs();
    if (now >= row.expires_at) return { rejection: "expired" };
    const granularity = touchGranularityMs(data.idleMs);
    // The stored clock lags a use by less than the granularity, so the idle limit is read that
    // much later: a credential is never refused before it has been idle for idleMs.
    if (
      data.idleMs !== null &&
      now - row.last_used_at >= data.idleMs + granularity &&
      !(await this.hasRunningTurn(row.provider_session_id))
    )
      return { rejection: "idle_expired" };
    // Each write is a commit of its own, and a harness sends several requests per tool call
    // (and 200 agents at once send many): the idle clock needs no finer steps than this.
    if (now - row.last_used_at >= granularity) {
      // Written now when the store is free, else once the command under way commits; the
      // request does not wait for it either way.
      const before = row.last_used_at;
      row.last_used_at = now;
      this.store
        .writeAsync(() => this.table.markUsed(row.id, now))
        .catch((error: unknown) => {
          // Not written (a database locked by another connection): the next request writes it.
          if (row.last_used_at === now) row.last_used_at = before;
          if (!isStoreBusy(error))
            this.logger.warn("could not note a credential's use", { error: (error as Error).message });
        });
    }
    return { scope };
  }

  /**
   * A turn of the session is running: the agent is at work (a long command, a long model
   * call), so its credential is in use even if nothing reached the host for a while.
   */
  private async hasRunningTurn(providerSessionId: string | null): Promise<boolean> {
    if (providerSessionId === null) return false;
    return this.attempts.hasRunningTurn(providerSessionId);
  }

  /** Keeps a provider session's credential alive while its turns run (provider work is activity). */
  async touchProviderSession(providerSessionId: string): Promise<void> {
    if (!this.store.isOpen()) return;
    // A clock fresher than the touch granularity is left as it is: a turn starting right after
    // its session opened (or a request just used it) is no write.
    const now = this.clock.nowMs();
    const changed = await this.store.writeAsync(() =>
      this.table.markSessionUsed(providerSessionId, now, now - touchGranularityMs(this.config.server.credentialIdleMs)),
    );
    if (changed > 0) this.forgetResolved();
  }

  /** After a rotation, the session's other credentials expire once `overlapMs` has passed. */
  async retireOtherCredentials(providerSessionId: string, currentToken: string, overlapMs: number): Promise<void> {
    if (!this.store.isOpen()) return;
    const expiresBy = this.clock.nowMs() + overlapMs;
    const changed = await this.store.writeAsync(() =>
      this.table.expireSessionOthers(providerSessionId, hashToken(currentToken), expiresBy),
    );
    if (changed > 0) this.forgetResolved();
  }

  /** Revokes the credentials of every provider session that is not open or opening. */
  async revokeCredentialsOfClosedSessions(): Promise<number> {
    if (!this.store.isOpen()) return 0;
    const revoked = await this.table.revokeOfClosedSessions(this.clock.nowMs());
    if (revoked > 0) this.forgetResolved();
    if (revoked > 0) this.logger.info("revoked credentials of closed provider sessions", { count: revoked });
    return revoked;
  }

  /** Revokes every credential of a provider session. */
  async revokeProviderSession(providerSessionId: string): Promise<void> {
    if (!this.store.isOpen()) return;
    const at = this.clock.nowMs();
    const revoked = await this.store.writeAsync(() => this.table.revokeOfSession(providerSessionId, at));
    if (revoked > 0) this.forgetResolved();
    if (revoked > 0) this.logger.debug("revoked provider session credentials", { providerSessionId, count: revoked });
  }

  /**
   * Whether a client credential still stands, by id, without using it (no idle clock moves):
   * what work it left running on its own (a scheduled task) is checked against at each firing.
   */
  async standing(
    credentialId: string,
  ): Promise<
    { state: "active" } | { state: "revoked"; at: string } | { state: "expired"; at: string } | { state: "unknown" }
  > {
    const row = await this.table.standingOf(credentialId);
    if (row === null) return { state: "unknown" };
    if (row.revoked_at !== null) return { state: "revoked", at: new Date(row.revoked_at).toISOString() };
    if (this.clock.nowMs() >= row.expires_at) return { state: "expired", at: new Date(row.expires_at).toISOString() };
    return { state: "active" };
  }

  /** Revokes one credential by id; false when none matched. */
  revoke(credentialId: string): boolean {
    // Synchronous like issueClientToken, for the same callers.
    const revoked = this.table.revokeNow(credentialId, this.clock.nowMs());
    if (revoked) this.forgetResolved();
    return revoked;
  }

  /** Lists credentials (client ones by default), newest first. Never returns tokens. */
  async list(options: { includeProviderSessions?: boolean } = {}): Promise<CredentialSummary[]> {
    const rows = await this.table.list({ includeProviderSessions: options.includeProviderSessions === true });
    return rows.map((row) => {
      const data = JSON.parse(row.data) as CredentialData;
      return {
        id: row.id,
        kind: row.kind,
        label: data.label,
        capabilities: capabilitiesOf(row.kind, data),
        projects: projectsOf(row.kind, data),
        ceiling: ceilingOf(row.kind, data),
        threadId: row.thread_id,
        providerSessionId: row.provider_session_id,
        expiresAt: new Date(row.expires_at).toISOString(),
        lastUsedAt: new Date(row.last_used_at).toISOString(),
        revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
        ephemeral: data.ephemeral === true,
      };
    });
  }
}
