import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { inject, injectable } from "tsyringe";
import { TOKEN_PREFIX, type Logger, LoggerToken } from "../../logging/logger.js";
import { isStoreBusy } from "../../util/store-busy.js";
import { type EventStore, StoreToken } from "../../store/ports.js";
import {
  type WebSessionKind,
  type WebSessionRow,
  type NewWebSession,
  WebSessionsTable,
} from "../../store/tables/web-sessions.js";
import { type Clock, ClockToken } from "../../util/clock.js";
import { McpSessionRegistry, type CredentialRejection, type McpInvocationScope } from "./mcp-session-registry.js";

/** How long a browser session lasts at most (never longer than its token). */
export const WEB_SESSION_TTL_MS = 7 * 86_400_000;
/** How long the one-time code `switchyard ui` prints stays usable. */
export const SIGN_IN_CODE_TTL_MS = 10 * 60_000;

/**
 * Why a session was refused: its token's reasons, a signed-out session, or a request that cannot
 * show it comes from the page that signed in (no page secret, another one, or another origin
 * than the one the session was made at).
 */
export type WebSessionRejection =
  CredentialRejection | "session_ended" | "page_secret_missing" | "page_secret_mismatch" | "other_origin";

/** Why a sign-in was refused: the token's reasons, a spent code, or an agent's credential. */
export type SignInRejection = CredentialRejection | "code_used" | "not_a_client_token";

/**
 * A browser session. Its secret goes into the cookie, its page secret to the page, each once;
 * neither is stored.
 */
export interface IssuedWebSession {
  readonly secret: string;
  readonly pageSecret: string;
  readonly expiresAtMs: number;
  readonly scope: McpInvocationScope;
}

/** What a request shows of its browser session: the cookie's secret, the page secret header, and the origin it was sent to. */
export interface WebSessionProof {
  readonly secret: string;
  readonly pageSecret: string | null;
  readonly origin: string;
}

function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

function newSecret(kind: "uc" | "us" | "up"): string {
  return `${TOKEN_PREFIX}${kind}_${randomBytes(32).toString("base64url")}`;
}

function sameHash(stored: string, secret: string): boolean {
  const expected = Buffer.from(stored, "hex");
  const given = Buffer.from(hashSecret(secret), "hex");
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * Browser sessions of the web UI and the one-time sign-in codes `switchyard ui` prints. Each
 * acts as the client token it was made from (by the token's id, re-checked on every request:
 * revoking or expiring the token ends its sessions), so a session has exactly the token's
 * verbs, projects and ceiling. A session has two secrets, both needed on every request: the
 * cookie's, which the browser sends to any server on the same host name, and the page's, which
 * only the page that signed in holds; and it answers only at the origin it was made at. Only
 * SHA-256 hashes of secrets and codes are stored; a code is spent by its first use.
 */
@injectable()
export class WebSessions {
  private readonly table: WebSessionsTable;

  constructor(
    @inject(StoreToken) private readonly store: EventStore,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(McpSessionRegistry) private readonly registry: McpSessionRegistry,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {
    this.table = new WebSessionsTable(store);
  }

  /** A new secret, and its row written by `write` (at once, or in the store's turn). */
  private insert<W>(
    kind: WebSessionKind,
    credentialId: string,
    expiresAtMs: number,
    page: { secret: string; origin: string } | null,
    write: (row: NewWebSession) => W,
  ): { secret: string; written: W } {
    const secret = newSecret(kind === "code" ? "uc" : "us");
    const now = this.clock.nowMs();
    const row = {
      id: `ws_${randomBytes(8).toString("hex")}`,
      secretHash: hashSecret(secret),
      kind,
      credentialId,
      createdAt: now,
      expiresAt: expiresAtMs,
      page: page === null ? null : { secretHash: hashSecret(page.secret), origin: page.origin },
    };
    return { secret, written: write(row) };
  }

  /** Signs a page in: served requests run beside commands, so the row is written in the store's turn. */
  private async open(
    credentialId: string,
    expiresAtMs: number,
    scope: McpInvocationScope,
    origin: string,
  ): Promise<IssuedWebSession> {
    const sessionExpiry = Math.min(expiresAtMs, this.clock.nowMs() + WEB_SESSION_TTL_MS);
    const pageSecret = newSecret("up");
    const { secret, written } = this.insert(
      "session",
      credentialId,
      sessionExpiry,
      { secret: pageSecret, origin },
      (row) => this.store.writeAsync(() => this.table.insert(row)),
    );
    await written;
    return {
      secret,
      pageSecret,
      expiresAtMs: sessionExpiry,
      scope,
    };
  }

  /** A one-time sign-in code for a client token (its id), for the link `switchyard ui` prints. */
  issueCode(credentialId: string): { code: string; expiresAtMs: number } {
    const expiresAtMs = this.clock.nowMs() + SIGN_IN_CODE_TTL_MS;
    // Synchronous for its caller, `switchyard ui` (its own host, where no command runs).
    return {
      code: this.insert("code", credentialId, expiresAtMs, null, (row) => this.table.insertNow(row)).secret,
      expiresAtMs,
    };
  }

  /** Signs in with a pasted client token (an agent's credential cannot sign in), for a page at `origin`. */
  async signInWithToken(token: string, origin: string): Promise<IssuedWebSession | { rejection: SignInRejection }> {
    const resolved = await this.registry.resolve(token);
    if ("rejection" in resolved) return resolved;
    if (resolved.scope.kind !== "client") return { rejection: "not_a_client_token" };
    const credential = await this.registry.resolveById(resolved.scope.credentialId);
    if ("rejection" in credential) return credential;
    return this.open(resolved.scope.credentialId, credential.expiresAtMs, resolved.scope, origin);
  }

  /** Spends a one-time code for a session of a page at `origin`; a second use, like an expired code, is refused. */
  async signInWithCode(code: string, origin: string): Promise<IssuedWebSession | { rejection: SignInRejection }> {
    const now = this.clock.nowMs();
    const row = await this.table.bySecretHash("code", hashSecret(code));
    if (row === null) return { rejection: "unknown" };
    // Spent in one statement, so two tabs racing with the same link get one session between them.
    if (!(await this.store.writeAsync(() => this.table.spendCode(row.id, now)))) return { rejection: "code_used" };
    if (now >= row.expires_at) return { rejection: "expired" };
    const credential = await this.registry.resolveById(row.credential_id);
    if ("rejection" in credential) return credential;
    return this.open(row.credential_id, credential.expiresAtMs, credential.scope, origin);
  }

  /**
   * The live session a request proves, or why it proves none. The page secret and origin are
   * checked before anything else is told: a cookie alone learns nothing, not even whether its
   * session still runs, and a wrong guess changes nothing.
   */
  private async sessionOf(
    proof: WebSessionProof,
  ): Promise<{ row: WebSessionRow } | { rejection: WebSessionRejection }> {
    const row = await this.table.bySecretHash("session", hashSecret(proof.secret));
    if (row === null) return { rejection: "unknown" };
    if (proof.pageSecret === null) return { rejection: "page_secret_missing" };
    // A session made before page secrets existed has none: it cannot be proven, only replaced.
    if (row.page_secret_hash === null || !sameHash(row.page_secret_hash, proof.pageSecret))
      return { rejection: "page_secret_mismatch" };
    if (row.origin !== proof.origin) return { rejection: "other_origin" };
    if (row.ended_at !== null) return { rejection: "session_ended" };
    return { row };
  }

  /** The scope a browser session acts with now, or why it no longer does. */
  async resolve(proof: WebSessionProof): Promise<{ scope: McpInvocationScope } | { rejection: WebSessionRejection }> {
    const found = await this.sessionOf(proof);
    if ("rejection" in found) return found;
    const { row } = found;
    const now = this.clock.nowMs();
    if (now >= row.expires_at) return { rejection: "expired" };
    const credential = await this.registry.resolveById(row.credential_id);
    if ("rejection" in credential) return credential;
    // Bookkeeping the request does not wait for: now when the store is free, else once the
    // command under way commits.
    this.store
      .writeAsync(() => this.table.markUsed(row.id, now))
      .catch((error: unknown) => {
        // Not written (a database locked by another connection): the next request writes it.
        if (!isStoreBusy(error))
          this.logger.warn("could not note a web session's use", { error: (error as Error).message });
      });
    return { scope: credential.scope };
  }

  /**
   * Ends a session (sign-out) the request proves: true when it ended now, false when it had
   * ended already; a request that cannot prove it ends nothing.
   */
  async end(proof: WebSessionProof): Promise<{ ended: boolean } | { rejection: WebSessionRejection }> {
    const found = await this.sessionOf(proof);
    if ("rejection" in found) return found.rejection === "session_ended" ? { ended: false } : found;
    const at = this.clock.nowMs();
    return { ended: await this.store.writeAsync(() => this.table.end(found.row.id, at)) };
  }
}
