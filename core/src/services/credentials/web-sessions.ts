import { createHash, randomBytes } from "node:crypto";
import { inject, injectable } from "tsyringe";
import { TOKENS } from "../../di/tokens.js";
import { TOKEN_PREFIX } from "../../logging/logger.js";
import type { EventStore } from "../../store/ports.js";
import type { Clock } from "../../util/clock.js";
import { McpSessionRegistry, type CredentialRejection, type McpInvocationScope } from "./mcp-session-registry.js";

/** How long a browser session lasts at most (never longer than its token). */
export const WEB_SESSION_TTL_MS = 7 * 86_400_000;
/** How long the one-time code `switchyard ui` prints stays usable. */
export const SIGN_IN_CODE_TTL_MS = 10 * 60_000;

/** Why a sign-in or a session was refused: the token's reasons, or the code's or session's own. */
export type WebSessionRejection = CredentialRejection | "code_used" | "session_ended";

/** A browser session: its secret goes into the cookie once and is never stored. */
export interface IssuedWebSession {
  readonly secret: string;
  readonly expiresAtMs: number;
  readonly scope: McpInvocationScope;
}

interface WebSessionRow {
  id: string;
  kind: "session" | "code";
  credential_id: string;
  expires_at: number;
  ended_at: number | null;
}

function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/**
 * Browser sessions of the web UI and the one-time sign-in codes `switchyard ui` prints. Each
 * acts as the client token it was made from (by the token's id, re-checked on every request:
 * revoking or expiring the token ends its sessions), so a session has exactly the token's
 * verbs, projects and ceiling. Only SHA-256 hashes of session secrets and codes are stored; a
 * code is spent by its first use.
 */
@injectable()
export class WebSessions {
  constructor(
    @inject(TOKENS.Store) private readonly store: EventStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(McpSessionRegistry) private readonly registry: McpSessionRegistry,
  ) {}

  private insert(kind: WebSessionRow["kind"], credentialId: string, expiresAtMs: number): string {
    const secret = `${TOKEN_PREFIX}${kind === "code" ? "uc" : "us"}_${randomBytes(32).toString("base64url")}`;
    const now = this.clock.nowMs();
    this.store
      .statement("INSERT INTO web_sessions (id, secret_hash, kind, credential_id, created_at, expires_at, last_used_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)")
      .run(`ws_${randomBytes(8).toString("hex")}`, hashSecret(secret), kind, credentialId, now, expiresAtMs, now);
    return secret;
  }

  private open(credentialId: string, expiresAtMs: number, scope: McpInvocationScope): IssuedWebSession {
    const sessionExpiry = Math.min(expiresAtMs, this.clock.nowMs() + WEB_SESSION_TTL_MS);
    return { secret: this.insert("session", credentialId, sessionExpiry), expiresAtMs: sessionExpiry, scope };
  }

  /** A one-time sign-in code for a client token (its id), for the link `switchyard ui` prints. */
  issueCode(credentialId: string): { code: string; expiresAtMs: number } {
    const expiresAtMs = this.clock.nowMs() + SIGN_IN_CODE_TTL_MS;
    return { code: this.insert("code", credentialId, expiresAtMs), expiresAtMs };
  }

  /** Signs in with a pasted client token (an agent's credential cannot sign in). */
  signInWithToken(token: string): IssuedWebSession | { rejection: WebSessionRejection | "not_a_client_token" } {
    const resolved = this.registry.resolve(token);
    if ("rejection" in resolved) return resolved;
    if (resolved.scope.kind !== "client") return { rejection: "not_a_client_token" };
    const credential = this.registry.resolveById(resolved.scope.credentialId);
    if ("rejection" in credential) return credential;
    return this.open(resolved.scope.credentialId, credential.expiresAtMs, resolved.scope);
  }

  /** Spends a one-time code for a session; a second use, like an expired code, is refused. */
  signInWithCode(code: string): IssuedWebSession | { rejection: WebSessionRejection } {
    const now = this.clock.nowMs();
    const row = this.store.statement("SELECT * FROM web_sessions WHERE secret_hash = ? AND kind = 'code'").get(hashSecret(code)) as WebSessionRow | undefined;
    if (row === undefined) return { rejection: "unknown" };
    // Spent in one statement, so two tabs racing with the same link get one session between them.
    const spent = this.store.statement("UPDATE web_sessions SET ended_at = ?, last_used_at = ? WHERE id = ? AND ended_at IS NULL").run(now, now, row.id);
    if (spent.changes === 0) return { rejection: "code_used" };
    if (now >= row.expires_at) return { rejection: "expired" };
    const credential = this.registry.resolveById(row.credential_id);
    if ("rejection" in credential) return credential;
    return this.open(row.credential_id, credential.expiresAtMs, credential.scope);
  }

  /** The scope a session cookie acts with now, or why it no longer does. */
  resolve(secret: string): { scope: McpInvocationScope } | { rejection: WebSessionRejection } {
    const row = this.store.statement("SELECT * FROM web_sessions WHERE secret_hash = ? AND kind = 'session'").get(hashSecret(secret)) as WebSessionRow | undefined;
    if (row === undefined) return { rejection: "unknown" };
    if (row.ended_at !== null) return { rejection: "session_ended" };
    const now = this.clock.nowMs();
    if (now >= row.expires_at) return { rejection: "expired" };
    const credential = this.registry.resolveById(row.credential_id);
    if ("rejection" in credential) return credential;
    this.store.statement("UPDATE web_sessions SET last_used_at = ? WHERE id = ?").run(now, row.id);
    return { scope: credential.scope };
  }

  /** Ends a session (sign-out); false when it was unknown or already ended. */
  end(secret: string): boolean {
    const info = this.store
      .statement("UPDATE web_sessions SET ended_at = ? WHERE secret_hash = ? AND kind = 'session' AND ended_at IS NULL")
      .run(this.clock.nowMs(), hashSecret(secret));
    return info.changes > 0;
  }
}
