import { SwitchyardError, type McpEndpointGrant } from "../spec/index.js";
import type { Logger } from "../logging/logger.js";
import type { SwitchyardConfig } from "../config/config-schema.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";
import { GuardedSession } from "../providers/guarded-session.js";
import type { Engine } from "./engine.js";
import type { ProviderEventIngestor } from "./provider-event-ingestor.js";
import { inject, injectable } from "tsyringe";
import { TOKENS } from "../di/tokens.js";

/** Issues the MCP credential of a provider session before it opens, and revokes it after. */
export interface McpGrantIssuer {
  issue(scope: { threadId: string; projectId: string; providerSessionId: string; providerInstanceId: string }): McpEndpointGrant | null;
  revokeProviderSession(providerSessionId: string): void;
  /** Provider work counts as activity: keeps the credential from idle expiry. */
  touchProviderSession(providerSessionId: string): void;
}

/** A provider session this host holds open. */
export interface LiveSession {
  readonly providerSessionId: string;
  readonly threadId: string;
  readonly instanceId: string;
  readonly session: GuardedSession;
  readonly hasMcp: boolean;
  /**
   * The session started a new provider conversation on a thread that already has one (the
   * provider could not resume it): its first turn carries the thread's history as portable
   * context, so nothing said earlier is lost.
   */
  needsHistoryHandoff: boolean;
}

/**
 * Opens, reuses and closes provider sessions: one live session per thread. The MCP credential
 * is issued before `openSession` and revoked when the session is released, whatever the reason.
 */
@injectable()
export class ProviderSessionManager {
  private readonly live = new Map<string, LiveSession>();
  private readonly opening = new Map<string, Promise<LiveSession>>();
  private readonly idleTimers = new Map<string, NodeJS.Timeout>();
  private issuer: McpGrantIssuer | null = null;

  private readonly sessionIdleMs: number;

  constructor(
    @inject(TOKENS.Engine) private readonly engine: Engine,
    @inject(TOKENS.ProviderRegistry) private readonly registry: ProviderRegistry,
    @inject(TOKENS.ProviderEventIngestor) private readonly ingestor: ProviderEventIngestor,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.Config) config: SwitchyardConfig,
  ) {
    this.sessionIdleMs = config.server.sessionIdleMs;
    ingestor.onSessionExited((threadId, providerSessionId) => {
      const current = this.live.get(threadId);
      if (current?.providerSessionId === providerSessionId) {
        this.live.delete(threadId);
        this.issuer?.revokeProviderSession(providerSessionId);
      }
    });
  }

  /** Connects the MCP credential issuer (the MCP transport, when it runs). */
  setGrantIssuer(issuer: McpGrantIssuer | null): void {
    this.issuer = issuer;
  }

  /** Marks a session's credential as active (each turn it starts). */
  touchCredential(providerSessionId: string): void {
    this.issuer?.touchProviderSession(providerSessionId);
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
  async ensure(threadId: string): Promise<LiveSession> {
    this.cancelIdleClose(threadId);
    const thread = this.engine.store.get("thread", threadId);
    if (thread === null) throw new SwitchyardError("not_found", `Thread ${threadId} does not exist.`);
    const current = this.live.get(threadId);
    if (current !== undefined && current.instanceId === thread.providerInstanceId) return current;
    if (current !== undefined) await this.close(threadId, "provider_switched");
    const pending = this.opening.get(threadId);
    if (pending) return pending;
    const opening = this.open(threadId).finally(() => this.opening.delete(threadId));
    this.opening.set(threadId, opening);
    return opening;
  }

  private async open(threadId: string): Promise<LiveSession> {
    const thread = this.engine.store.get("thread", threadId)!;
    const instance = this.registry.get(thread.providerInstanceId);
    if (instance === null || instance.adapter === null) {
      throw new SwitchyardError(
        "provider_unavailable",
        instance?.refusal?.message ?? `Provider instance "${thread.providerInstanceId}" is not configured.`,
        { providerInstanceId: thread.providerInstanceId },
      );
    }
    const adapter = instance.adapter;
    const capabilities = adapter.capabilities();
    const previous = this.engine.store
      .select("providerSession", "thread_id = ? AND provider_instance_id = ?", [threadId, thread.providerInstanceId])
      .filter((s) => s.resumeCursor !== null)
      .sort((a, b) => (a.openedAt < b.openedAt ? 1 : -1))[0];
    const resumeCursor = capabilities.sessions.resume ? (previous?.resumeCursor ?? null) : null;
    const providerSessionId = this.engine.ids.random("psess");
    this.engine.apply((ctx) =>
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
    const grant = this.issuer?.issue({ threadId, projectId: thread.projectId, providerSessionId, providerInstanceId: thread.providerInstanceId }) ?? null;
    let session;
    try {
      session = await adapter.openSession({
        threadId,
        providerSessionId,
        cwd: thread.cwd,
        model: thread.model,
        runtimeMode: thread.runtimeMode,
        interactionMode: thread.interactionMode,
        resumeCursor,
        mcp: grant,
        emit: (event) => this.ingestor.ingest(threadId, providerSessionId, event),
      });
    } catch (error) {
      if (grant !== null) this.issuer?.revokeProviderSession(providerSessionId);
      const message = error instanceof Error ? error.message : String(error);
      this.engine.apply((ctx) => {
        const record = ctx.get("providerSession", providerSessionId);
        if (record) ctx.put("providerSession", { ...record, status: "closed", closedAt: ctx.now, closeReason: `open_failed: ${message}` });
      });
      throw new SwitchyardError("provider_error", `Could not open a ${instance.descriptor.driver} session: ${message}`, { providerInstanceId: thread.providerInstanceId });
    }
    const earlierConversation = this.engine.store.count("item", "thread_id = ? AND kind IN ('user_message', 'assistant_message') AND run_id IS NOT NULL", [threadId]) > 0;
    const live: LiveSession = {
      providerSessionId,
      threadId,
      instanceId: thread.providerInstanceId,
      session: new GuardedSession(session, () => adapter.capabilities(), instance.descriptor.id),
      hasMcp: grant !== null,
      needsHistoryHandoff: resumeCursor === null && earlierConversation,
    };
    this.engine.apply((ctx) => {
      const record = ctx.get("providerSession", providerSessionId);
      if (record) ctx.put("providerSession", { ...record, status: "open", resumeCursor: session.resumeCursor ?? record.resumeCursor, capabilities: adapter.capabilities() });
    });
    this.live.set(threadId, live);
    this.logger.info("provider session opened", { threadId, providerSessionId, instance: thread.providerInstanceId, resumed: resumeCursor !== null, mcp: grant !== null });
    return live;
  }

  /** Closes a thread's session and revokes its credential. */
  async close(threadId: string, reason: string): Promise<void> {
    this.cancelIdleClose(threadId);
    const live = this.live.get(threadId);
    if (live === undefined) return;
    this.live.delete(threadId);
    this.issuer?.revokeProviderSession(live.providerSessionId);
    const resumeCursor = live.session.resumeCursor;
    try {
      await live.session.close();
    } catch (error) {
      this.logger.warn("closing a provider session failed", { threadId, error: (error as Error).message });
    }
    if (!this.engine.store.db.open) return;
    this.engine.apply((ctx) => {
      const record = ctx.get("providerSession", live.providerSessionId);
      if (record && record.status !== "closed") {
        ctx.put("providerSession", { ...record, status: "closed", closedAt: ctx.now, closeReason: reason, resumeCursor: resumeCursor ?? record.resumeCursor });
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
