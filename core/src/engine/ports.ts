import type { CommittedReader } from "./projection-reader.js";
import type { AdapterEvent } from "../spec/index.js";
import type { CommitNudge } from "../store/commit-feed.js";
import type { EventStore, OutboxEffect } from "../store/ports.js";
import type { SessionContinuationRecord, StoredEvent } from "../store/records.js";
import type { Clock } from "../util/clock.js";
import type { IdAllocator } from "../util/ids.js";
import type { GuardedSession } from "./guarded-session.js";
import type { CommandContext } from "./command-context.js";
import { token } from "../util/di-token.js";

// What the services (and the host) need of the engine, as interfaces: DI tokens resolve to
// these, so no consumer and no token depends on the classes that implement them.

/** A command: an id (for idempotency), an operation name, its request, and the handler. */
export interface Command<R> {
  /** Retries with the same id return the same receipt. */
  readonly commandId: string;
  readonly operation: string;
  /** The request as sent; a reused id with a different request is refused. */
  readonly request: unknown;
  readonly handle: (ctx: CommandContext) => R | Promise<R>;
}

/** The result of a command, and whether it was replayed from its receipt. */
export interface CommandOutcome<R> {
  readonly result: R;
  readonly replayed: boolean;
  readonly commandId: string;
  /** The newest event sequence the command wrote (or had written, when replayed). */
  readonly sequence: number | null;
}

/**
 * The command processor (`TransactionalEngine`): a command's events, projection updates,
 * receipt and outbox rows commit in one transaction, its reactions included.
 */
export interface Engine {
  readonly store: EventStore;
  /**
   * Reads projections outside any command (views, schedulers, services deciding what to ask
   * for): the same async reads a command context offers, over the store's committed state.
   */
  readonly reader: CommittedReader;
  readonly clock: Clock;
  readonly ids: IdAllocator;
  /** The names of the in-transaction reactions, in the order they run. */
  readonly reactionNames: readonly string[];
  /** Runs a command once; a retry with the same id replays its receipt. */
  execute<R>(command: Command<R>): Promise<CommandOutcome<R>>;
  /** The stored result of a command that already ran, or null; a reused id with a different request is a `conflict`. */
  replay<R>(commandId: string, operation: string, request: unknown): Promise<CommandOutcome<R> | null>;
  /** Applies internal changes (provider events, effect outcomes) in one transaction, without a receipt. */
  apply<R>(handle: (ctx: CommandContext) => R | Promise<R>): Promise<R>;
  /** Applies several internal changes in one transaction, each in a savepoint: one that throws rolls back alone. */
  applyEach(
    changes: readonly ((ctx: CommandContext) => void | Promise<void>)[],
    onError: (error: unknown, index: number) => void,
  ): Promise<void>;
  /** Hears committed events, every one in sequence order (the store's ordered stream). */
  onEvents(listener: (events: readonly StoredEvent[]) => void): () => void;
  /** Hears which records each commit changed, without them (the store's nudge): read again on it. */
  onChanges(listener: (nudge: CommitNudge) => void): () => void;
  /** Hears that new effects are waiting in the outbox. */
  onEffectsQueued(listener: () => void): () => void;
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
  /**
   * How this session went on with the thread's conversation (the shared policy's decision), owed
   * to the run whose turn it opened for; cleared once recorded there.
   */
  continuation: SessionContinuationRecord | null;
  /**
   * The shared orchestration instructions, owed to the first turn of a new conversation that has
   * Switchyard's tools (a resumed conversation was given them already); cleared once delivered.
   */
  orchestrationInstructions: string | null;
}

/** Work recorded in the transaction that records a provider session open. */
export type SessionOpenedWork = (ctx: CommandContext, live: LiveSession) => void | Promise<void>;

/** The provider sessions of this host (`ProviderSessionManager`): one live session per thread. */
export interface ProviderSessions {
  /** The live session of a thread, if one is open. */
  get(threadId: string): LiveSession | null;
  /** Every live session. */
  all(): LiveSession[];
  /**
   * Returns the thread's live session, opening (or resuming) one when needed. `withOpened`, when
   * this call opens the session, runs in the transaction that records it open (so the work that
   * wanted the session commits with it); it does not run for a session already open, nor for one
   * another call is opening.
   */
  ensure(threadId: string, withOpened?: SessionOpenedWork): Promise<LiveSession>;
  /** Marks a session's credential as active (each turn it starts). */
  touchCredential(providerSessionId: string): void;
  /** Closes a thread's session and revokes its credential. */
  close(threadId: string, reason: string): Promise<void>;
  /** Closes the session after the idle period unless new work arrives. */
  scheduleIdleClose(threadId: string): void;
  /** Closes every session (server shutdown). */
  closeAll(reason: string): Promise<void>;
}

/** Where sessions report adapter events (`ProviderEventIngestor`), which become durable state. */
export interface ProviderEventSink {
  /**
   * Takes one adapter event of a session. The events of one tick commit together, in a
   * microtask after the first of them (see `ProviderEventIngestor`).
   */
  ingest(threadId: string, providerSessionId: string, event: AdapterEvent): void;
  /**
   * Holds a session's events from now until `release`: a session's events while it opens wait
   * for its open record, which they then follow.
   */
  hold(providerSessionId: string): void;
  /** Ingests the session's held events, in order, and stops holding them. */
  release(providerSessionId: string): void;
  /** Hears that a provider session ended on its own. */
  onSessionExited(listener: (threadId: string, providerSessionId: string) => void): void;
}

/** Carries out one outbox effect against provider sessions (`EffectExecutor`). */
export interface EffectRunner {
  execute(effect: OutboxEffect): Promise<void>;
}

/** Runs the outbox (`OutboxWorker`): one effect at a time per lane, woken by commits. */
export interface EffectWorker {
  start(): void;
  /** Stops taking effects and waits for those in flight. */
  stop(): Promise<void>;
  /** Waits until no effect is due or in flight. */
  drain(): Promise<void>;
}

/** What boot found and did. */
export interface ReconcileReport {
  /** Harness process groups, and processes that had left them, a dead host of this home left running. */
  readonly reapedProcesses: number;
  readonly closedSessions: number;
  /** Credentials of sessions that are no longer open, revoked (a killed host left them live). */
  readonly revokedCredentials: number;
  readonly expiredRequests: number;
  readonly continuedRuns: string[];
  readonly interruptedRuns: string[];
  readonly resetEffects: number;
  readonly abandonedEffects: number;
}

/** Reconciles what a previous process left, once at boot (`BootReconciler`). */
export interface Reconciler {
  reconcile(): Promise<ReconcileReport>;
}

/** A streamed piece of output that is not yet a durable item. */
export interface LiveOutputChunk {
  readonly threadId: string;
  readonly attemptId: string;
  readonly itemId: string;
  readonly kind: "assistant_message" | "reasoning";
  readonly delta: string;
}

/** Streaming output as readers see it (`LiveOutput`): not yet folded into durable items. */
export interface LiveOutputFeed {
  /** Assistant text streamed so far for a thread's unfinished items. */
  pendingText(threadId: string): string;
  /** Every unfinished item's text so far (what a reader that arrives mid-stream has missed). */
  buffered(): (Omit<LiveOutputChunk, "delta"> & { readonly text: string })[];
  /** The text streamed so far for one unfinished item, or null when none is buffered (it completed, or never streamed). */
  textSoFar(attemptId: string, itemId: string, kind: LiveOutputChunk["kind"]): string | null;
  /** Hears every chunk as it arrives. */
  onChunk(listener: (chunk: LiveOutputChunk) => void): () => void;
}

/** DI token: `TransactionalEngine`. */
export const EngineToken = token<Engine>("Engine");

/** DI token: `LiveOutput`. */
export const LiveOutputToken = token<LiveOutputFeed>("LiveOutput");

/** DI token: `ProviderEventIngestor`. */
export const ProviderEventIngestorToken = token<ProviderEventSink>("ProviderEventIngestor");

/** DI token: `ProviderSessionManager`. */
export const ProviderSessionManagerToken = token<ProviderSessions>("ProviderSessionManager");

/** DI token: `EffectExecutor`. */
export const EffectExecutorToken = token<EffectRunner>("EffectExecutor");

/** DI token: `OutboxWorker`. */
export const OutboxWorkerToken = token<EffectWorker>("OutboxWorker");

/** DI token: `BootReconciler`. */
export const BootReconcilerToken = token<Reconciler>("BootReconciler");
