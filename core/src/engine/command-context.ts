import type { TableModule } from "../store/table-sql.js";
import type { UnitOfWork } from "../store/ports.js";
import type { ProjectionReader } from "./projection-reader.js";
import type { EntityName, EntityRecords, StoredEvent } from "../store/records.js";
import type { Clock } from "../util/clock.js";
import type { IdAllocator } from "../util/ids.js";
import type { AttemptRecord, RunRecord } from "../store/records.js";
import type { TurnUsageReport } from "../spec/index.js";

/**
 * The engine's reactions, as the code that triggers them calls them: inside the transaction of
 * the change (see `EngineReaction`, which the engine builds these from). Each is awaited, one
 * after another in their order: what they append, and in which order, is part of the change.
 */
export interface EngineHooks {
  /** After a run reached a terminal status (delegated-task finalization, notices…). */
  readonly runTerminal: readonly ((ctx: CommandContext, run: RunRecord) => Promise<void>)[];
  /** After a runtime request opened or resolved. */
  readonly runtimeRequestChanged: readonly ((ctx: CommandContext, requestId: string) => Promise<void>)[];
  /** After a provider turn reported its end, with its usage (usage records, budgets). */
  readonly turnEnded: readonly ((
    ctx: CommandContext,
    attempt: AttemptRecord,
    usage: TurnUsageReport | null,
  ) => Promise<void>)[];
  /** After a thread was marked stopped (Stop, task_cancel, a budget): its harness tools are frozen. */
  readonly threadStopped: readonly ((ctx: CommandContext, threadId: string) => Promise<void>)[];
}

/**
 * Something outside the database that must happen exactly when a change commits: `prepare`
 * runs inside the transaction after everything else (nothing of the change can fail after
 * it but the commit itself), then `committed` once it committed, or `rolledBack` when the
 * commit failed. Synchronous, like the transaction.
 */
export interface CommitAction {
  prepare(): void;
  committed(): void;
  rolledBack(): void;
}

/** A provider effect to carry out after the command commits. */
export interface EffectRequest {
  /** Deterministic id: the same command enqueues the same effect once. */
  readonly id: string;
  /** Effects in one lane (a thread) run in order, one at a time. */
  readonly lane: string;
  readonly type: string;
  readonly payload: unknown;
}

/**
 * What a command handler works with, inside the command's transaction: reads see earlier
 * writes of the same command; every write is an upsert event applied to its projection.
 */
export class CommandContext implements ProjectionReader {
  readonly now: string;
  readonly nowMs: number;
  private effects = 0;
  private readonly commitActions: CommitAction[] = [];
  /** The first and last events this context appended: their sequences are read once the unit flushed. */
  private firstAppended: StoredEvent | null = null;
  private lastAppended: StoredEvent | null = null;

  constructor(
    /**
     * @internal The unit of work, for the engine alone: handlers read through the async methods
     * below (a PostgreSQL store cannot answer a read synchronously) and write through `put`.
     */
    private readonly work: UnitOfWork,
    readonly commandId: string | null,
    readonly clock: Clock,
    readonly ids: IdAllocator,
    readonly hooks: EngineHooks,
  ) {
    this.nowMs = clock.nowMs();
    this.now = new Date(this.nowMs).toISOString();
  }

  /** Reads a record; earlier writes of this command included. */
  async get<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E] | null> {
    return this.work.get(entity, id);
  }

  /** Reads a record that must exist (a missing one is a bug, not a user error). */
  async require<E extends EntityName>(entity: E, id: string): Promise<EntityRecords[E]> {
    const record = await this.work.get(entity, id);
    if (record === null) throw new Error(`internal: ${entity} ${id} not found`);
    return record;
  }

  /** Reads records with a WHERE clause over the entity's indexed columns (as `EventStore.select`). */
  async select<E extends EntityName>(
    entity: E,
    where: string,
    params?: readonly unknown[],
    suffix?: string,
  ): Promise<EntityRecords[E][]> {
    return this.work.select(entity, where, params, suffix);
  }

  /** Counts records matching a WHERE clause (as `EventStore.count`). */
  async count(entity: EntityName, where: string, params?: readonly unknown[]): Promise<number> {
    return this.work.count(entity, where, params);
  }

  /** Whether a record matches a WHERE clause (as `EventStore.exists`). */
  async exists(entity: EntityName, where: string, params?: readonly unknown[]): Promise<boolean> {
    return this.work.exists(entity, where, params);
  }

  /**
   * A table of the store (core/src/store/tables) over this command's transaction, for the
   * reads and writes that are not records' upserts (timeline positions, reach rows, totals).
   */
  table<T>(open: TableModule<T>): T {
    return new open(this.work);
  }

  /** This environment's id (links to its threads name it). */
  async environmentId(): Promise<string> {
    return this.work.environmentId();
  }

  /** Writes a record's new state (an upsert event plus its projection). Buffered: synchronous. */
  put<E extends EntityName>(entity: E, record: EntityRecords[E]): EntityRecords[E] {
    for (const event of this.work.append(this.commandId, [{ entity, record }], this.now)) {
      this.firstAppended ??= event;
      this.lastAppended = event;
    }
    return record;
  }

  /** Reads, changes and writes a record; `change` may itself await reads. */
  async update<E extends EntityName>(
    entity: E,
    id: string,
    change: (current: EntityRecords[E]) => EntityRecords[E] | Promise<EntityRecords[E]>,
  ): Promise<EntityRecords[E]> {
    return this.put(entity, await change(await this.require(entity, id)));
  }

  /** Queues a provider effect for after commit. */
  effect(effect: EffectRequest, delayMs = 0): void {
    this.work.enqueueEffect(effect, this.nowMs + delayMs, this.now);
    this.effects += 1;
  }

  /** Has `action` run when this change commits (see {@link CommitAction}). */
  onCommit(action: CommitAction): void {
    this.commitActions.push(action);
  }

  /** @internal What {@link onCommit} collected, for the engine. */
  get pendingCommitActions(): readonly CommitAction[] {
    return this.commitActions;
  }

  /**
   * The sequences of the first and last events this context appended, both null when it
   * appended none: a receipt's range, known without asking the log for its newest sequence.
   * Read after the unit's `flush` (a buffering store numbers its events there).
   */
  get appendedSequences(): { readonly first: number | null; readonly last: number | null } {
    return { first: this.firstAppended?.sequence ?? null, last: this.lastAppended?.sequence ?? null };
  }

  /** True when this command queued effects. */
  get hasEffects(): boolean {
    return this.effects > 0;
  }
}
