import { type Logger, LoggerToken } from "../logging/logger.js";
import type { ProviderCatalog } from "../engine/provider-catalog.js";
import { type HarnessProcessLedger, HarnessProcessLogToken } from "../store/ports.js";
import { RunsTable } from "../store/tables/runs.js";
import { type HarnessProcessControl, HarnessProcessTreesToken } from "../plugin-host/ports.js";
import { reapOrphanedHarnesses } from "../plugin-host/process-runner.js";
import { type Engine, type ReconcileReport, type Reconciler, EngineToken } from "./ports.js";
import { type McpGrantIssuer, McpGrantIssuerToken } from "./mcp-grant-issuer.js";
import { EFFECT } from "./effects.js";
import { type EffectHandler, EffectHandlersToken } from "./effect-handler.js";
import { resolveRuntimeRequest } from "./runtime-requests.js";
import { createAttempt, finishAttempt, startNextQueued } from "./run-lifecycle.js";
import { inject, injectable } from "tsyringe";
import { ProviderCatalogToken } from "./provider-catalog.js";

/** How many times one run may be continued after host restarts before it is given up. */
const MAX_CONTINUATIONS = 2;

/** The message a resumed provider gets when its turn was cut short by a host restart. */
export const CONTINUE_AFTER_RESTART_TEXT =
  "The Switchyard server restarted while you were working on the previous message, and your turn was cut short. Continue the task from where you left off and finish it.";

export type { ReconcileReport } from "./ports.js";

/**
 * Runs once at boot, before the outbox worker: every provider process of the previous host is
 * gone, so its sessions are closed and their credentials revoked, runs that were live are
 * continued on a resumed session where the provider can resume, and recorded as interrupted
 * otherwise. Process-bound effects are never blindly replayed; a turn start that never
 * reached the provider is safe to run again.
 */
@injectable()
export class BootReconciler implements Reconciler {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(HarnessProcessLogToken) private readonly processes: HarnessProcessLedger,
    @inject(McpGrantIssuerToken) private readonly credentials: McpGrantIssuer,
    @inject(LoggerToken) private readonly logger: Logger,
    @inject(HarnessProcessTreesToken) private readonly trees: HarnessProcessControl | null = null,
    @inject(EffectHandlersToken) private readonly handlers: readonly EffectHandler[] = [],
  ) {}

  async reconcile(): Promise<ReconcileReport> {
    const leftovers = this.processes.leftovers();
    const reapedGroups = reapOrphanedHarnesses(leftovers, this.logger);
    this.processes.forgetLeftovers(leftovers.map((p) => p.pid));
    // What the harnesses started and moved out of their groups (setsid, nohup, a double fork)
    // is found by the process-tree mark it inherited, whether or not its harness was recorded.
    const reapedProcesses = reapedGroups + (this.trees?.reapLeftovers(leftovers.map((process) => process.pid)) ?? 0);
    const store = this.engine.store;

    let resetEffects = 0;
    let abandonedEffects = 0;
    // The unfinished effects, and the turn starts whose attempt was still pending when the crash
    // cut them short, read before the store's turn (its work is synchronous). Nothing else runs
    // yet at boot, so no command moves an effect or an attempt between these reads and the writes below.
    const unfinished = await this.engine.reader.unfinishedEffects();
    const pendingAttempts = new Set<string>();
    for (const effect of unfinished) {
      if (effect.status !== "claimed" || effect.type !== EFFECT.turnStart) continue;
      const attemptId = (effect.payload as { attemptId: string }).attemptId;
      if ((await this.engine.reader.get("attempt", attemptId))?.status === "pending") pendingAttempts.add(attemptId);
    }
    // Nothing else runs yet at boot, but outbox writes go through the store's turn all the same.
    await store.writeAsync(() => {
      // Effects on lasting things (a workspace's git work) are written to run again: a claimed one
      // the crash cut short goes back to pending, and pending ones stay.
      const rerunnable = new Set(this.handlers.flatMap((handler) => handler.types));
      for (const effect of unfinished) {
        if (effect.status !== "claimed") continue;
        if (rerunnable.has(effect.type)) {
          store.retryEffect(effect.id, 0, "reset after restart", new Date().toISOString());
          resetEffects += 1;
          continue;
        }
        if (effect.type === EFFECT.turnStart) {
          if (pendingAttempts.has((effect.payload as { attemptId: string }).attemptId)) {
            store.retryEffect(effect.id, 0, "reset after restart", new Date().toISOString());
            resetEffects += 1;
            continue;
          }
        }
        store.settleEffect(
          effect.id,
          "abandoned",
          "the provider session it targeted ended with the previous server process",
          new Date().toISOString(),
        );
        abandonedEffects += 1;
      }
      // Steers, interrupts and answers still pending target sessions that no longer exist (the
      // claimed ones were settled or put back above).
      for (const effect of unfinished) {
        if (effect.status === "claimed" || effect.type === EFFECT.turnStart || rerunnable.has(effect.type)) continue;
        store.settleEffect(
          effect.id,
          "abandoned",
          "the provider session it targeted ended with the previous server process",
          new Date().toISOString(),
        );
        abandonedEffects += 1;
      }
    });

    const report = await this.engine.apply(async (ctx) => {
      let closedSessions = 0;
      for (const session of await ctx.select("providerSession", "status IN ('opening', 'open')")) {
        ctx.put("providerSession", { ...session, status: "closed", closedAt: ctx.now, closeReason: "server_restart" });
        closedSessions += 1;
      }
      // No session is open any more: no credential may outlive the one it was issued for.
      const revokedCredentials = await this.credentials.revokeCredentialsOfClosedSessions();
      let expiredRequests = 0;
      for (const request of await ctx.select("runtimeRequest", "status = 'pending'")) {
        await resolveRuntimeRequest(ctx, request, "expired", null);
        expiredRequests += 1;
      }
      const continuedRuns: string[] = [];
      const interruptedRuns: string[] = [];
      for (const run of await ctx.select(
        "run",
        "status IN ('starting', 'running', 'waiting')",
        [],
        "ORDER BY created_at",
      )) {
        const attempt = run.currentAttemptId === null ? null : await ctx.get("attempt", run.currentAttemptId);
        if (attempt === null || attempt.status === "pending") continue; // its start effect runs again
        const capabilities = this.registry.capabilities((await ctx.require("thread", run.threadId)).providerInstanceId);
        const session =
          attempt.providerSessionId === null ? null : await ctx.get("providerSession", attempt.providerSessionId);
        const continuations = (await ctx.select("attempt", "run_id = ?", [run.id])).filter(
          (a) => a.reason === "continue_after_restart",
        ).length;
        const canContinue =
          capabilities.sessions.resume && session?.resumeCursor != null && continuations < MAX_CONTINUATIONS;
        if (canContinue) {
          ctx.put("attempt", {
            ...attempt,
            status: "interrupted",
            endedAt: ctx.now,
            error: { code: "server_restart", message: "The server restarted during this turn." },
          });
          const current = await ctx.require("run", run.id);
          const next = await createAttempt(
            ctx,
            current,
            {
              text: CONTINUE_AFTER_RESTART_TEXT,
              instructions: null,
              reason: "continue_after_restart",
              restartOfAttemptId: attempt.id,
            },
            true,
          );
          ctx.put("run", { ...(await ctx.require("run", run.id)), status: "starting", currentAttemptId: next.id });
          continuedRuns.push(run.id);
        } else {
          await finishAttempt(
            ctx,
            attempt.id,
            "interrupted",
            {
              code: "server_restart",
              message: "The server restarted during this turn and the provider cannot resume it.",
            },
            "server_restart",
          );
          interruptedRuns.push(run.id);
        }
      }
      for (const threadId of await ctx.table(RunsTable).threadsWithQueuedRuns()) await startNextQueued(ctx, threadId);
      return { closedSessions, revokedCredentials, expiredRequests, continuedRuns, interruptedRuns };
    });
    const full: ReconcileReport = { reapedProcesses, resetEffects, abandonedEffects, ...report };
    this.logger.info("boot reconciliation done", {
      ...full,
      continuedRuns: full.continuedRuns.length,
      interruptedRuns: full.interruptedRuns.length,
    });
    return full;
  }
}
