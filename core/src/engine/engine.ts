import { AsyncLocalStorage } from "node:async_hooks";
import { SwitchyardError, type TurnUsageReport } from "../spec/index.js";
import type { CommitNudge } from "../store/commit-feed.js";
import { type EventStore, StoreToken } from "../store/ports.js";
import type { AttemptRecord, RunRecord, StoredEvent } from "../store/records.js";
import { type Clock, ClockToken } from "../util/clock.js";
import { isStoreBusy } from "../util/store-busy.js";
import { requestHash, type IdAllocator, IdAllocatorToken } from "../util/ids.js";
import { CommandContext, type CommitAction, type EngineHooks } from "./command-context.js";
import { type EngineReaction, EngineReactionsToken } from "./engine-reaction.js";
import { type CommittedReader, storeReader } from "./projection-reader.js";
import type { Command, CommandOutcome, Engine } from "./ports.js";
import { inject, injectable } from "tsyringe";

export type { Command, CommandOutcome, Engine } from "./ports.js";

/**
 * The command processor. A command's events, projection updates, receipt and outbox rows
 * commit in one transaction (`store.transactionAsync`), which commits before `execute`
 * resolves; the store runs outermost transactions one at a time, so commands never interleave
 * (per-thread serialization falls out of that), and listeners hear events only after commit.
 */
@injectable()
export class TransactionalEngine implements Engine {
  private readonly effectListeners = new Set<() => void>();
  /** The in-transaction reactions, as command contexts call them. */
  private readonly hooks: EngineHooks;
  /** Reads committed projections outside any command (see `Engine.reader`). */
  readonly reader: CommittedReader;
  /** The names of the reactions, in the order they run. */
  readonly reactionNames: readonly string[];

  constructor(
    @inject(StoreToken) readonly store: EventStore,
    @inject(ClockToken) readonly clock: Clock,
    @inject(IdAllocatorToken) readonly ids: IdAllocator,
    /** Given by the composition root, so every engine has them before its first command. */
    @inject(EngineReactionsToken) reactions: readonly EngineReaction[] = [],
  ) {
    this.reader = storeReader(store);
    this.reactionNames = reactions.map((reaction) => reaction.name);
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
    this.hooks = { runTerminal, runtimeRequestChanged, turnEnded, threadStopped };
  }

  /**
   * The commit actions of the outermost engine transaction the running code is part of (a
   * nested one adds to them). Async context rather than a field: while one command's
   * transaction awaits, other code on the event loop calls the engine, and its commands queue
   * for their own transactions instead of joining this one.
   */
  private readonly outerCommitActions = new AsyncLocalStorage<CommitAction[]>();

  /**
   * One transaction (`store.transactionAsync`: outermost ones queue, one at a time, so commands
   * never interleave) whose contexts' commit actions (`CommandContext.onCommit`) are prepared as
   * its last step and settled once it committed or failed. Inside another engine transaction
   * (called from its async context) it is a savepoint and its actions join that one's: only the
   * outermost commit is a commit. The body may await (a handler reading asynchronously);
   * nothing else writes while it does, since outermost transactions queue.
   */
  private async transact<R>(body: (contexts: CommandContext[]) => R | Promise<R>): Promise<R> {
    const contexts: CommandContext[] = [];
    const outer = this.outerCommitActions.getStore();
    if (outer !== undefined) {
      return this.store.transactionAsync(async () => {
        const value = await body(contexts);
        for (const ctx of contexts) outer.push(...ctx.pendingCommitActions);
        return value;
      });
    }
    const actions: CommitAction[] = [];
    const prepared: CommitAction[] = [];
    let result: R;
    try {
      result = await this.store.transactionAsync(() =>
        this.outerCommitActions.run(actions, async () => {
          const value = await body(contexts);
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
    const outcome = await this.transact(async (contexts): Promise<CommandOutcome<R>> => {
      const receipt = this.store.getReceipt(command.commandId);
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
      const ctx = new CommandContext(this.store, command.commandId, this.clock, this.ids, this.hooks);
      contexts.push(ctx);
      const result = await command.handle(ctx);
      // The command's own appends: the receipt names the events that carry its id.
      const appended = ctx.appendedSequences;
      this.store.putReceipt({
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
    if (effects) this.nudgeEffects();
    return outcome;
  }

  /**
   * The stored result of a command that already ran, or null. A reused id with a different
   * request is a `conflict`: a retry key must not silently return someone else's work.
   */
  async replay<R>(commandId: string, operation: string, request: unknown): Promise<CommandOutcome<R> | null> {
    const receipt = await this.reader.receipt(commandId);
    if (receipt === null) return null;
    if (receipt.requestHash !== requestHash({ operation, request })) {
      throw new SwitchyardError(
        "conflict",
        `Command id ${commandId} was already used for a different ${receipt.operation} request; use a new clientRequestId for new work.`,
        { commandId, operation: receipt.operation },
      );
    }
    return { result: receipt.result as R, replayed: true, commandId, sequence: receipt.lastSequence };
  }

  /** Applies internal changes (provider events, effect outcomes) in one transaction, without a receipt. */
  async apply<R>(handle: (ctx: CommandContext) => R | Promise<R>): Promise<R> {
    let effects = false;
    const result = await this.transact(async (contexts) => {
      const ctx = new CommandContext(this.store, null, this.clock, this.ids, this.hooks);
      contexts.push(ctx);
      const value = await handle(ctx);
      effects = ctx.hasEffects;
      return value;
    });
    if (effects) this.nudgeEffects();
    return result;
  }

  /**
   * Applies several internal changes in one transaction, each in its own savepoint: a change
   * that throws rolls back alone (`onError` hears it) and the others still commit. One commit
   * for the lot, which is what makes a burst of provider events cheap; listeners hear all their
   * events after it. A store locked by another connection (`store_busy`) is thrown, not handed
   * to `onError`: nothing was written, and the caller can try the whole batch again.
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
    await this.transact(async (contexts) => {
      // One savepoint after another: a savepoint released early would take a later one with it.
      for (const [index, change] of changes.entries()) {
        try {
          const ctx = await this.store.transactionAsync(async () => {
            const ctx = new CommandContext(this.store, null, this.clock, this.ids, this.hooks);
            await change(ctx);
            return ctx;
          });
          // Only a change that kept its savepoint has its commit actions run.
          contexts.push(ctx);
          if (ctx.hasEffects) effects = true;
        } catch (error) {
          onError(error, index);
        }
      }
    });
    if (effects) this.nudgeEffects();
  }

  /** Hears committed events, every one in sequence order (the store's ordered stream). */
  onEvents(listener: (events: readonly StoredEvent[]) => void): () => void {
    return this.store.onCommitted(listener);
  }

  /** Hears which records each commit changed, without them (the store's nudge): read again on it. */
  onChanges(listener: (nudge: CommitNudge) => void): () => void {
    return this.store.onCommitNudge(listener);
  }

  /** Hears that new effects are waiting in the outbox. */
  onEffectsQueued(listener: () => void): () => void {
    this.effectListeners.add(listener);
    return () => this.effectListeners.delete(listener);
  }

  private nudgeEffects(): void {
    for (const listener of this.effectListeners) listener();
  }
}
