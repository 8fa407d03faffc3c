import { hasErrorCode, SwitchyardError } from "../spec/index.js";
import { decideSessionContinuation, type SessionContinuationQuery } from "../policy/index.js";
import { TERMINAL_RUN_STATUSES, type SessionContinuationRecord, type ThreadRecord } from "../store/records.js";
import { isStoreBusy } from "../util/store-busy.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import { type SwitchyardConfig, ConfigToken } from "../config/config-schema.js";
import type { ProviderCatalog, ProviderInstance } from "../engine/provider-catalog.js";
import { GuardedSession } from "./guarded-session.js";
import { sessionProfileInput } from "./session-profile.js";
import { runOwnedBy } from "../plugin-host/process-owner.js";
import { type Clock, ClockToken } from "../util/clock.js";
import { type Engine, EngineToken, ProviderEventIngestorToken } from "./ports.js";
import { type McpGrantIssuer, type ProviderSessionScope, McpGrantIssuerToken } from "./mcp-grant-issuer.js";
import type { LiveSession, ProviderEventSink, ProviderSessions, SessionOpenedWork } from "./ports.js";
import { inject, injectable } from "tsyringe";
import { ProviderCatalogToken } from "./provider-catalog.js";

export type { McpGrantIssuer } from "./mcp-grant-issuer.js";
export type { LiveSession } from "./ports.js";

/** setTimeout's longest delay; a longer wait is taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How the host keeps one session's credential fresh (memory only; the token never leaves it). */
interface SessionCredential {
  readonly scope: ProviderSessionScope;
  /** The token the session holds now. */
  token: string;
  /** When to renew it: a rotation lead before its maximum lifetime. */
  renewAtMs: number;
  /** The last activity written to the store (writes are throttled). */
  lastTouchMs: number;
  renewing: boolean;
  timer: NodeJS.Timeout | null;
}

/**
 * Opens, reuses and closes provider sessions: one live session per thread. The MCP credential
 * is issued before `openSession` and revoked when the session is released, whatever the reason.
 * While the session lives, provider activity keeps the credential from idle expiry, and before
 * its maximum lifetime the session gets a new one: handed over live where the provider declares
 * `tools.mcpGrantUpdate`, else by reopening a resumable session at its next turn.
 */
@injectable()
export class ProviderSessionManager implements ProviderSessions {
  private readonly live = new Map<string, LiveSession>();
  private readonly opening = new Map<string, Promise<LiveSession>>();
  private readonly idleTimers = new Map<string, NodeJS.Timeout>();
  private readonly credentials = new Map<string, SessionCredential>();

  private readonly sessionIdleMs: number;
  private readonly maxIdleSessions: number;
  private readonly credentialLifetimeMs: number;
  /** How long before its maximum lifetime a credential is renewed. */
  private readonly renewalLeadMs: number;
  /** How long a replaced credential stays valid, for calls already on their way. */
  private readonly renewalOverlapMs: number;
  /** At most one activity write per session in this period (events arrive by the hundred). */
  private readonly touchIntervalMs: number;
  /** The user's config profiles: a profiled thread's environment values are read from them. */
  private readonly configProfiles: SwitchyardConfig["profiles"];

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ProviderEventIngestorToken) private readonly ingestor: ProviderEventSink,
    @inject(McpGrantIssuerToken) private readonly issuer: McpGrantIssuer,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(LoggerToken) private readonly logger: Logger,
    @inject(ConfigToken) config: SwitchyardConfig,
  ) {
    this.sessionIdleMs = config.server.sessionIdleMs;
    this.maxIdleSessions = config.server.maxIdleSessions;
    this.credentialLifetimeMs = config.server.credentialMaxLifetimeMs;
    this.renewalLeadMs = Math.floor(this.credentialLifetimeMs / 4);
    this.renewalOverlapMs = Math.min(60_000, Math.floor(this.renewalLeadMs / 2));
    this.touchIntervalMs = Math.min(60_000, Math.floor(config.server.credentialIdleMs / 10));
    this.configProfiles = config.profiles;
    ingestor.onSessionExited((threadId, providerSessionId) => {
      const current = this.live.get(threadId);
      if (current?.providerSessionId === providerSessionId) {
        this.live.delete(threadId);
        this.forgetCredential(providerSessionId).catch((error: unknown) =>
          this.logger.warn("could not revoke an exited provider session's credentials", {
            providerSessionId,
            error: (error as Error).message,
          }),
        );
      }
    });
  }

  /** Marks a session's credential as active (each turn it starts). */
  touchCredential(providerSessionId: string): void {
    this.noteActivity(providerSessionId, true);
  }

  /**
   * Provider activity (an event, a turn start): refreshes the credential's idle clock, at most
   * once per `touchIntervalMs`, and renews the credential live when it is due.
   */
  private noteActivity(providerSessionId: string, force = false): void {
    const credential = this.credentials.get(providerSessionId);
    if (credential === undefined) return;
    const now = this.clock.nowMs();
    if (force || now - credential.lastTouchMs >= this.touchIntervalMs) {
      // Called from a provider's emit and a turn's start, which do not wait for it: the note is
      // written now when the store is free, else once the command under way commits.
      const before = credential.lastTouchMs;
      credential.lastTouchMs = now;
      this.issuer.touchProviderSession(providerSessionId).catch((error: unknown) => {
        // A database another connection holds locked delays this activity note (the next event
        // tries again), never the provider.
        if (credential.lastTouchMs === now) credential.lastTouchMs = before;
        if (!isStoreBusy(error))
          this.logger.warn("could not note a provider session's activity", {
            providerSessionId,
            error: (error as Error).message,
          });
      });
    }
    if (now >= credential.renewAtMs) {
      const live = this.live.get(credential.scope.threadId);
      if (live?.providerSessionId === providerSessionId && this.canUpdateGrant(live)) void this.renewCredential(live);
    }
  }

  private canUpdateGrant(live: LiveSession): boolean {
    return this.registry.capabilities(live.instanceId).tools.mcpGrantUpdate;
  }

  private credentialDue(live: LiveSession): boolean {
    const credential = this.credentials.get(live.providerSessionId);
    return credential !== undefined && this.clock.nowMs() >= credential.renewAtMs;
  }

  /**
   * A session whose credential is due and cannot take a new one live is reopened between
   * turns (when the provider resumes its conversation): the new session gets a new credential.
   */
  private async renewsByReopening(live: LiveSession): Promise<boolean> {
    if (!this.credentialDue(live) || this.canUpdateGrant(live)) return false;
    if (!this.registry.capabilities(live.instanceId).sessions.resume) return false;
    return (
      (await this.engine.reader.count("attempt", "thread_id = ? AND status IN ('starting', 'running')", [
        live.threadId,
      ])) === 0
    );
  }

  /** Hands a live session a new credential; the old one expires after a short overlap. */
  private async renewCredential(live: LiveSession): Promise<void> {
    const credential = this.credentials.get(live.providerSessionId);
    if (credential === undefined || credential.renewing) return;
    credential.renewing = true;
    try {
      const grant = await this.issuer.issue(credential.scope);
      if (grant === null) return; // the endpoint is gone (shutting down)
      try {
        await live.session.updateMcpGrant(grant);
      } catch (error) {
        // The session kept its old token: the new one must not outlive this moment.
        await this.issuer.retireOtherCredentials(live.providerSessionId, credential.token, 0);
        credential.renewAtMs = this.clock.nowMs() + this.touchIntervalMs;
        this.logger.warn("could not hand a provider session its renewed credential", {
          threadId: live.threadId,
          providerSessionId: live.providerSessionId,
          error: (error as Error).message,
        });
        return;
      }
      if (this.credentials.get(live.providerSessionId) !== credential) return; // closed meanwhile: all revoked
      await this.issuer.retireOtherCredentials(live.providerSessionId, grant.token, this.renewalOverlapMs);
      credential.token = grant.token;
      credential.renewAtMs = this.clock.nowMs() + this.credentialLifetimeMs - this.renewalLeadMs;
      this.scheduleRenewal(credential);
      this.logger.info("provider session credential renewed", {
        threadId: live.threadId,
        providerSessionId: live.providerSessionId,
      });
    } finally {
      credential.renewing = false;
    }
  }

  /** A timer for sessions that renew live, in case no activity comes near the deadline. */
  private scheduleRenewal(credential: SessionCredential): void {
    if (credential.timer !== null) clearTimeout(credential.timer);
    credential.timer = null;
    const live = this.live.get(credential.scope.threadId);
    if (
      live === undefined ||
      live.providerSessionId !== credential.scope.providerSessionId ||
      !this.canUpdateGrant(live)
    )
      return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, credential.renewAtMs - this.clock.nowMs()));
    credential.timer = setTimeout(() => {
      credential.timer = null;
      const current = this.live.get(credential.scope.threadId);
      if (current?.providerSessionId !== credential.scope.providerSessionId) return;
      if (this.credentialDue(current)) void this.renewCredential(current);
      else this.scheduleRenewal(credential);
    }, delay);
    credential.timer.unref();
  }

  /** Revokes a session's credentials and drops what the manager kept about them. */
  private async forgetCredential(providerSessionId: string): Promise<void> {
    const credential = this.credentials.get(providerSessionId);
    if (credential?.timer) clearTimeout(credential.timer);
    this.credentials.delete(providerSessionId);
    await this.issuer.revokeProviderSession(providerSessionId);
  }

  /** The live session of a thread, if one is open. */
  get(threadId: string): LiveSession | null {
    return this.live.get(threadId) ?? null;
  }

  /** Every live session. */
  all(): LiveSession[] {
    return [...this.live.values()];
  }

  /** Returns the thread's live session, opening (or resuming) one when needed. */
  async ensure(threadId: string, withOpened?: SessionOpenedWork): Promise<LiveSession> {
    this.cancelIdleClose(threadId);
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null) throw new SwitchyardError("not_found", `Thread ${threadId} does not exist.`);
    const pending = this.opening.get(threadId);
    if (pending) return pending;
    const current = this.live.get(threadId);
    if (current !== undefined && current.instanceId === thread.providerInstanceId) {
      const reopen = await this.renewsByReopening(current);
      // That read was awaited: a call that came meanwhile may have begun opening, or replaced the
      // session; one opening per thread, so go with it (or decide again).
      const openedMeanwhile = this.opening.get(threadId);
      if (openedMeanwhile) return openedMeanwhile;
      if (this.live.get(threadId) !== current) return this.ensure(threadId, withOpened);
      if (!reopen) {
        if (this.credentialDue(current) && this.canUpdateGrant(current)) void this.renewCredential(current);
        return current;
      }
    }
    const opening = (async () => {
      if (current !== undefined)
        await this.close(
          threadId,
          current.instanceId === thread.providerInstanceId ? "credential_renewal" : "provider_switched",
        );
      // Without a close to wait for, nothing ran since the read above: open needs no read of its own.
      return this.open(threadId, withOpened, current === undefined ? thread : null);
    })().finally(() => this.opening.delete(threadId));
    this.opening.set(threadId, opening);
    return opening;
  }

  /**
   * Opens the thread's session as the shared policy decides (`decideSessionContinuation`): its
   * provider conversation resumed where an earlier session left a cursor, else a new one given
   * the thread's history. A resume that fails (the provider's state deleted or corrupt after a
   * crash) is recorded on its session and decided again: the thread goes on in a new
   * conversation with its history, reported `degraded`; only a failure of that one too fails.
   */
  private async open(
    threadId: string,
    withOpened: SessionOpenedWork | undefined,
    known: ThreadRecord | null,
  ): Promise<LiveSession> {
    const thread = known ?? (await this.engine.reader.get("thread", threadId))!;
    const instance = this.registry.get(thread.providerInstanceId);
    if (instance === null || instance.adapter === null) {
      throw new SwitchyardError(
        "provider_unavailable",
        instance?.refusal?.message ?? `Provider instance "${thread.providerInstanceId}" is not configured.`,
        { providerInstanceId: thread.providerInstanceId },
      );
    }
    const capabilities = this.registry.capabilities(thread.providerInstanceId);
    const earlier = await this.resumePoint(threadId, thread.providerInstanceId);
    const query: SessionContinuationQuery = {
      capabilities,
      resumeCursor: capabilities.sessions.resume ? earlier.cursor : null,
      resumeFailure: earlier.failure,
      // A run that ended before this one: the run this session opens for has its own prompt in the
      // timeline already, which is no conversation to carry over.
      earlierConversation:
        (await this.engine.reader.count(
          "item",
          `thread_id = ? AND kind IN ('user_message', 'assistant_message') AND run_id IN (SELECT id FROM runs WHERE thread_id = ? AND status IN (${TERMINAL_RUN_STATUSES.map(() => "?").join(", ")}))`,
          [threadId, threadId, ...TERMINAL_RUN_STATUSES],
        )) > 0,
    };
    const decision = decideSessionContinuation(query);
    if (decision.action !== "resume")
      return this.openSession(thread, instance, null, decision, query.resumeFailure, withOpened);
    let resumeFailure: string;
    try {
      return await this.openSession(thread, instance, query.resumeCursor, decision, null, withOpened);
    } catch (error) {
      if (isStoreBusy(error) || !hasErrorCode(error, "provider_error")) throw error;
      resumeFailure = String(error.details?.reason ?? error.message);
    }
    this.logger.warn(
      "could not reopen a thread's provider conversation; starting a new one with the thread's history",
      { threadId, instance: thread.providerInstanceId, reason: resumeFailure },
    );
    try {
      return await this.openSession(
        thread,
        instance,
        null,
        decideSessionContinuation({ ...query, resumeFailure }),
        resumeFailure,
        withOpened,
      );
    } catch (error) {
      if (!hasErrorCode(error, "provider_error")) throw error;
      throw new SwitchyardError(
        "provider_error",
        `${error.message} (Reopening the thread's earlier conversation had failed first: ${resumeFailure})`,
        { ...error.details, resumeFailure },
      );
    }
  }

  /**
   * The conversation an earlier session of this thread on this instance left to resume: the
   * newest session's cursor; none, and why, when a newer session had to start over because
   * reopening the conversation before it failed (so a broken cursor is not tried again).
   */
  private async resumePoint(
    threadId: string,
    instanceId: string,
  ): Promise<{ cursor: string | null; failure: string | null }> {
    // Newest first by rowid, the order the sessions were opened in (a replay keeps it); two
    // opened in the same millisecond share an openedAt.
    const sessions = await this.engine.reader.select(
      "providerSession",
      "thread_id = ? AND provider_instance_id = ?",
      [threadId, instanceId],
      "ORDER BY rowid DESC",
    );
    for (const session of sessions) {
      if (session.resumeCursor !== null) return { cursor: session.resumeCursor, failure: null };
      if (session.resumeFailure != null) return { cursor: null, failure: session.resumeFailure };
    }
    return { cursor: null, failure: null };
  }

  /**
   * Opens one provider session. `resumeFailure` is written on it once it is open (never before:
   * when a new conversation cannot open either, the failure was not the old conversation's, and
   * the next turn tries to reopen that again). `withOpened` commits with the open record.
   */
  private async openSession(
    thread: ThreadRecord,
    instance: ProviderInstance,
    resumeCursor: string | null,
    continuation: SessionContinuationRecord,
    resumeFailure: string | null,
    withOpened: SessionOpenedWork | undefined,
  ): Promise<LiveSession> {
    const threadId = thread.id;
    const adapter = instance.adapter!;
    const capabilities = this.registry.capabilities(thread.providerInstanceId);
    // Before any record or credential: a provider that cannot carry the thread's profile refuses.
    const profiled = sessionProfileInput(thread, capabilities, this.configProfiles);
    const providerSessionId = this.engine.ids.random("psess");
    await this.engine.apply((ctx) =>
      ctx.put("providerSession", {
        id: providerSessionId,
        threadId,
        providerInstanceId: thread.providerInstanceId,
        status: "opening",
        resumeCursor,
        capabilities,
        openedAt: ctx.now,
        closedAt: null,
        closeReason: null,
      }),
    );
    const scope: ProviderSessionScope = {
      threadId,
      projectId: thread.projectId,
      providerSessionId,
      providerInstanceId: thread.providerInstanceId,
    };
    const grant = await this.issuer.issue(scope);
    if (grant !== null) {
      const now = this.clock.nowMs();
      this.credentials.set(providerSessionId, {
        scope,
        token: grant.token,
        renewAtMs: now + this.credentialLifetimeMs - this.renewalLeadMs,
        lastTouchMs: now,
        renewing: false,
        timer: null,
      });
    }
    // The session's events while it opens (its resume cursor, mostly) wait for its open record,
    // which carries the cursor too: one commit where the open and the cursor took two.
    this.ingestor.hold(providerSessionId);
    let session: Awaited<ReturnType<typeof adapter.openSession>>;
    let live: LiveSession;
    try {
      try {
        // Every process the adapter starts for this session, now or later, works for this thread.
        session = await runOwnedBy(threadId, () =>
          adapter.openSession({
            threadId,
            providerSessionId,
            cwd: thread.cwd,
            model: thread.model,
            runtimeMode: thread.runtimeMode,
            interactionMode: thread.interactionMode,
            resumeCursor,
            mcp: grant,
            ...profiled,
            emit: (event) => {
              this.ingestor.ingest(threadId, providerSessionId, event);
              this.noteActivity(providerSessionId);
            },
          }),
        );
      } catch (error) {
        await this.forgetCredential(providerSessionId);
        const message = error instanceof Error ? error.message : String(error);
        await this.engine.apply(async (ctx) => {
          const record = await ctx.get("providerSession", providerSessionId);
          if (record === null) return;
          const closeReason = resumeCursor !== null ? `resume_failed: ${message}` : `open_failed: ${message}`;
          ctx.put("providerSession", { ...record, status: "closed", closedAt: ctx.now, closeReason });
        });
        throw new SwitchyardError(
          "provider_error",
          `Could not open a ${instance.descriptor.driver} session: ${message}`,
          { providerInstanceId: thread.providerInstanceId, reason: message },
        );
      }
      live = {
        providerSessionId,
        threadId,
        instanceId: thread.providerInstanceId,
        session: new GuardedSession(
          session,
          () => this.registry.capabilities(instance.descriptor.id),
          instance.descriptor.id,
          threadId,
        ),
        hasMcp: grant !== null,
        needsHistoryHandoff: continuation.action === "handoff",
        continuation,
        orchestrationInstructions:
          resumeCursor === null && grant !== null && grant.instructions.trim() !== "" ? grant.instructions : null,
      };
      try {
        await this.engine.apply(async (ctx) => {
          const record = await ctx.get("providerSession", providerSessionId);
          // As decoded after the open: the session may have negotiated more than was known before.
          if (record) {
            ctx.put("providerSession", {
              ...record,
              status: "open",
              resumeCursor: session.resumeCursor ?? record.resumeCursor,
              capabilities: this.registry.capabilities(thread.providerInstanceId),
              ...(resumeFailure !== null ? { resumeFailure } : {}),
            });
          }
          await withOpened?.(ctx, live);
        });
      } catch (error) {
        // Not recorded as open (the database locked by another connection, or the work recorded
        // with the open failed): a session nobody knows of must not stay behind. The start that wanted it runs again.
        this.credentials.delete(providerSessionId);
        void session.close().catch(() => undefined);
        throw error;
      }
    } finally {
      this.ingestor.release(providerSessionId);
    }
    this.live.set(threadId, live);
    const credential = this.credentials.get(providerSessionId);
    if (credential !== undefined) this.scheduleRenewal(credential);
    this.logger.info("provider session opened", {
      threadId,
      providerSessionId,
      instance: thread.providerInstanceId,
      resumed: resumeCursor !== null,
      continuation: continuation.action,
      mcp: grant !== null,
    });
    return live;
  }

  /** Closes a thread's session and revokes its credential. */
  async close(threadId: string, reason: string): Promise<void> {
    this.cancelIdleClose(threadId);
    const live = this.live.get(threadId);
    if (live === undefined) return;
    this.live.delete(threadId);
    await this.forgetCredential(live.providerSessionId);
    const resumeCursor = live.session.resumeCursor;
    try {
      await live.session.close();
    } catch (error) {
      this.logger.warn("closing a provider session failed", { threadId, error: (error as Error).message });
    }
    if (!this.engine.store.isOpen()) return;
    await this.engine.apply(async (ctx) => {
      const record = await ctx.get("providerSession", live.providerSessionId);
      if (record && record.status !== "closed") {
        ctx.put("providerSession", {
          ...record,
          status: "closed",
          closedAt: ctx.now,
          closeReason: reason,
          resumeCursor: resumeCursor ?? record.resumeCursor,
        });
      }
    });
    this.logger.info("provider session closed", { threadId, providerSessionId: live.providerSessionId, reason });
  }

  /** Closes the session after the idle period unless new work arrives. */
  scheduleIdleClose(threadId: string): void {
    if (!this.live.has(threadId)) return;
    this.cancelIdleClose(threadId);
    const timer = setTimeout(() => {
      this.idleTimers.delete(threadId);
      void this.close(threadId, "idle");
    }, this.sessionIdleMs);
    timer.unref();
    this.idleTimers.set(threadId, timer);
    // Idle sessions held memory (and harness processes) for every thread used within the idle
    // period: 10,000 threads were 10,000 open sessions. Beyond the cap, the longest idle closes now.
    while (this.idleTimers.size > this.maxIdleSessions) {
      const oldest = this.idleTimers.keys().next().value as string;
      this.cancelIdleClose(oldest);
      void this.close(oldest, "idle_cap");
    }
  }

  private cancelIdleClose(threadId: string): void {
    const timer = this.idleTimers.get(threadId);
    if (timer) {
      clearTimeout(timer);
      this.idleTimers.delete(threadId);
    }
  }

  /** Closes every session (server shutdown). */
  async closeAll(reason: string): Promise<void> {
    await Promise.allSettled([...this.live.keys()].map((threadId) => this.close(threadId, reason)));
  }
}
