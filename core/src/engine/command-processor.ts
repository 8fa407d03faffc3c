import { AsyncLocalStorage } from "node:async_hooks";
import { SwitchyardError, type TurnUsageReport } from "../spec/index.js";
import type { AttemptRecord, RunRecord } from "../store/records.js";
import type { UnitOfWork, UnitOfWorkStore } from "../store/ports.js";
import type { Clock } from "../util/clock.js";
import { isStoreBusy } from "../util/store-busy.js";
import { requestHash, type IdAllocator } from "../util/ids.js";
import { CommandContext, type CommitAction, type EngineHooks } from "./command-context.js";
import type { EngineReaction } from "./engine-reaction.js";
import type { Command, CommandOutcome } from "./ports.js";

/** The engine's reactions as the code that triggers them calls them (see {@link EngineHooks}), in their order. */
export function engineHooks(reactions: readonly EngineReaction[]): EngineHooks {
  const runTerminal = reactions
    .filter((r) => r.onRunTerminal !== undefined)
    .map((r) => async (ctx: CommandContext, run: RunRecord) => r.onRunTerminal!(ctx, run));
  const runtimeRequestChanged = reactions
    .filter((r) => r.onRuntimeRequestChanged !== undefined)
    .map((r) => async (ctx: CommandContext, requestId: string) => r.onRuntimeRequestChanged!(ctx, requestId));
  const turnEnded = reactions
    .filter((r) => r.onTurnEnded !== undefined)
    .map(
      (r) => async (ctx: CommandContext, attempt: AttemptRecord, usage: TurnUsageReport | null) =>
        r.onTurnEnded!(ctx, attempt, usage),
    );
  const threadStopped = reactions
    .filter((r) => r.onThreadStopped !== undefined)
    .map((r) => async (ctx: CommandContext, threadId: string) => r.onThreadStopped!(ctx, threadId));
  return { runTerminal, runtimeRequestChanged, turnEnded, threadStopped };
}

/** The engine transaction the running code is part of: its innermost unit, and the outermost one's commit actions. */
interface OpenTransaction {
  readonly work: UnitOfWork;
  readonly actions: CommitAction[];
}

/**
 * The engine's commands over a backend-neutral unit of work (issue 33): what
 * `TransactionalEngine` runs `execute`, `apply` and `applyEach` with, on any store that runs
 * units of work (the SQLite store's ambient transaction, the PostgreSQL store's buffered
 * units). A command's events, projection updates, receipt and outbox rows commit in one unit,
 * which commits before `execute` resolves; outermost units run one at a time, so commands
 * never interleave.
 */
export class CommandProcessor {
  /**
   * The engine transaction the running code is part of. Async context rather than a field:
   * while one command's transaction awaits, other code on the event loop calls the engine, and
   * its commands queue for their own transactions instead of joining this one.
   */
  private readonly open = new AsyncLocalStorage<OpenTransaction>();

  constructor(
    private readonly units: UnitOfWorkStore,
    private readonly clock: Clock,
    private readonly ids: IdAllocator,
    private readonly hooks: EngineHooks,
    /** Hears that a change queued effects, after it committed. */
    private readonly effectsQueued: () => void = () => undefined,
  ) {}

  /**
   * One unit of work (outermost ones queue, one at a time, so commands never interleave) whose
   * contexts' commit actions (`CommandContext.onCommit`) are prepared as its last step and
   * settled once it committed or failed. Inside another engine transaction (called from its
   * async context) it is a nested unit, a savepoint, and its actions join that one's: only the
   * outermost commit is a commit. The body may await (a handler reading asynchronously).
   */
  private async transact<R>(body: (work: UnitOfWork, contexts: CommandContext[]) => Promise<R>): Promise<R> {
    const contexts: CommandContext[] = [];
    const outer = this.open.getStore();
    if (outer !== undefined) {
      return outer.work.nested((work) =>
        this.open.run({ work, actions: outer.actions }, async () => {
          const value = await body(work, contexts);
          for (const ctx of contexts) outer.actions.push(...ctx.pendingCommitActions);
          return value;
        }),
      );
    }
    const actions: CommitAction[] = [];
    const prepared: CommitAction[] = [];
    let result: R;
    try {
      result = await this.units.transactionAsync((work) =>
        this.open.run({ work, actions }, async () => {
          const value = await body(work, contexts);
          for (const ctx of contexts) actions.push(...ctx.pendingCommitActions);
          for (const action of actions) {
            action.prepare();
            prepared.push(action);
          }
          return value;
        }),
      );
    } catch (error) {
      for (const action of prepared) action.rolledBack();
      throw error;
    }
    for (const action of prepared) action.committed();
    return result;
  }

  /** Runs a command once; a retry with the same id replays its receipt. */
  async execute<R>(command: Command<R>): Promise<CommandOutcome<R>> {
    const hash = requestHash({ operation: command.operation, request: command.request });
    let effects = false;
    const outcome = await this.transact(async (work, contexts): Promise<CommandOutcome<R>> => {
      const receipt = await work.receipt(command.commandId);
      if (receipt !== null) {
        if (receipt.requestHash !== hash) {
          throw new SwitchyardError(
            "conflict",
            `Command id ${command.commandId} was already used for a different ${receipt.operation} request; use a new clientRequestId for new work.`,
            { commandId: command.commandId, operation: receipt.operation },
          );
        }
        return {
          result: receipt.result as R,
          replayed: true,
          commandId: command.commandId,
          sequence: receipt.lastSequence,
        };
      }
      const ctx = new CommandContext(work, command.commandId, this.clock, this.ids, this.hooks);
      contexts.push(ctx);
      const result = await command.handle(ctx);
      // The command's own appends name the receipt's range; a buffering store numbers them when
      // it flushes, so the receipt is written after that (never from the log's newest sequence).
      await work.flush();
      const appended = ctx.appendedSequences;
      work.putReceipt({
        commandId: command.commandId,
        operation: command.operation,
        requestHash: hash,
        result,
        firstSequence: appended.first,
        lastSequence: appended.last,
        createdAt: ctx.now,
      });
      effects = ctx.hasEffects;
      return { result, replayed: false, commandId: command.commandId, sequence: appended.last };
    });
    if (effects) this.effectsQueued();
    return outcome;
  }

  /** Applies internal changes (provider events, effect outcomes) in one unit of work, without a receipt. */
  async apply<R>(handle: (ctx: CommandContext) => R | Promise<R>): Promise<R> {
    let effects = false;
    const result = await this.transact(async (work, contexts) => {
      const ctx = new CommandContext(work, null, this.clock, this.ids, this.hooks);
      contexts.push(ctx);
      const value = await handle(ctx);
      effects = ctx.hasEffects;
      return value;
    });
    if (effects) this.effectsQueued();
    return result;
  }

  /**
   * Applies several internal changes in one unit of work, each in a nested unit of its own: a
   * change that throws rolls back alone (`onError` hears it) and the others still commit. One
   * commit for the lot, which is what makes a burst of provider events cheap. A store locked by
   * another connection (`store_busy`) is thrown, not handed to `onError`: nothing was written,
   * and the caller can try the whole batch again.
   */
  async applyEach(
    changes: readonly ((ctx: CommandContext) => void | Promise<void>)[],
    onError: (error: unknown, index: number) => void,
  ): Promise<void> {
    // One change needs no savepoint: its transaction is its own (most ticks carry one event).
    if (changes.length === 1) {
      try {
        await this.apply(changes[0]!);
      } catch (error) {
        if (isStoreBusy(error)) throw error;
        onError(error, 0);
      }
      return;
    }
    let effects = false;
    await this.transact(async (work, contexts) => {
      const actions = this.open.getStore()!.actions;
      // One savepoint after another: a savepoint released early would take a later one with it.
      for (const [index, change] of changes.entries()) {
        try {
          const ctx = await work.nested((inner) =>
            this.open.run({ work: inner, actions }, async () => {
              const ctx = new CommandContext(inner, null, this.clock, this.ids, this.hooks);
              await change(ctx);
              return ctx;
            }),
          );
          // Only a change that kept its savepoint has its commit actions run.
          contexts.push(ctx);
          if (ctx.hasEffects) effects = true;
        } catch (error) {
          onError(error, index);
        }
      }
    });
    if (effects) this.effectsQueued();
  }
}
