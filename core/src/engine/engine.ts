import { SwitchyardError } from "../spec/index.js";
import type { CommitNudge } from "../store/commit-feed.js";
import { type EventStore, StoreToken } from "../store/ports.js";
import type { StoredEvent } from "../store/records.js";
import { type Clock, ClockToken } from "../util/clock.js";
import { requestHash, type IdAllocator, IdAllocatorToken } from "../util/ids.js";
import type { CommandContext } from "./command-context.js";
import { CommandProcessor, engineHooks } from "./command-processor.js";
import { type EngineReaction, EngineReactionsToken } from "./engine-reaction.js";
import { type CommittedReader, storeReader } from "./projection-reader.js";
import type { Command, CommandOutcome, Engine } from "./ports.js";
import { inject, injectable } from "tsyringe";

export type { Command, CommandOutcome, Engine } from "./ports.js";

/**
 * The engine. A command's events, projection updates, receipt and outbox rows commit in one
 * unit of work (`store.transactionAsync`, see {@link CommandProcessor}), which commits before
 * `execute` resolves; the store runs outermost units one at a time, so commands never
 * interleave (per-thread serialization falls out of that), and listeners hear events only
 * after commit.
 */
@injectable()
export class TransactionalEngine implements Engine {
  private readonly effectListeners = new Set<() => void>();
  /** Runs the commands, on the store's units of work (with the reactions, as command contexts call them). */
  private readonly commands: CommandProcessor;
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
    this.commands = new CommandProcessor(store, clock, ids, engineHooks(reactions), () => this.nudgeEffects());
  }

  /** Runs a command once; a retry with the same id replays its receipt. */
  execute<R>(command: Command<R>): Promise<CommandOutcome<R>> {
    return this.commands.execute(command);
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
  apply<R>(handle: (ctx: CommandContext) => R | Promise<R>): Promise<R> {
    return this.commands.apply(handle);
  }

  /**
   * Applies several internal changes in one transaction, each in its own savepoint: a change
   * that throws rolls back alone (`onError` hears it) and the others still commit. One commit
   * for the lot, which is what makes a burst of provider events cheap; listeners hear all their
   * events after it. A store locked by another connection (`store_busy`) is thrown, not handed
   * to `onError`: nothing was written, and the caller can try the whole batch again.
   */
  applyEach(
    changes: readonly ((ctx: CommandContext) => void | Promise<void>)[],
    onError: (error: unknown, index: number) => void,
  ): Promise<void> {
    return this.commands.applyEach(changes, onError);
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
