import { injectable } from "tsyringe";
import type { DeliveryResult } from "../engine/message-delivery.js";
import type { SendMode } from "../policy/index.js";
import type { RuntimeRequestResponse } from "../spec/index.js";
import type { RunRecord, RuntimeRequestRecord, ThreadRecord } from "../store/records.js";
import type { Caller } from "./caller.js";
import { CallerThreadCommands } from "./threads/caller-thread-commands.js";
import { RunWaits, type RunWaitResult } from "./threads/run-waits.js";
import { ThreadBatchCreation, type ThreadBatchInput, type ThreadBatchResult } from "./threads/thread-batch-creation.js";
import { HostTestReads } from "./threads/host-test-reads.js";
import { ThreadCommands } from "./threads/thread-commands.js";
import { ThreadSnoozing, type SnoozeOutcome } from "./threads/thread-snoozing.js";
import type { CreateThreadRequest, SendRequest } from "./threads/thread-requests.js";

export type { AttentionRequest, RunWaitResult } from "./threads/run-waits.js";
export type { CreateThreadRequest, SendRequest } from "./threads/thread-requests.js";

/**
 * The shared boundary for thread operations, used by every transport (MCP, CLI, HTTP): thread
 * lookup, send-mode selection through the shared policy, durable send postconditions, waits
 * and interrupt selection. Transports only authenticate, resolve their inputs and shape results.
 * It names the operations; the parts in services/threads/ carry them out: the shared commands
 * (ThreadCommands), waits (RunWaits), the same commands for an authenticated caller
 * (CallerThreadCommands) and create_threads (ThreadBatchCreation).
 */
@injectable()
export class ThreadManagementService {
  constructor(
    private readonly commands: ThreadCommands,
    private readonly testReads: HostTestReads,
    private readonly waits: RunWaits,
    private readonly callerCommands: CallerThreadCommands,
    private readonly batches: ThreadBatchCreation,
    private readonly snoozing: ThreadSnoozing,
  ) {}

  /** Reads a live (not deleted) thread, or fails with `thread_not_found`. */
  async getThread(threadId: string): Promise<ThreadRecord> {
    return this.commands.getThread(threadId);
  }

  /** Creates a thread, and starts its first run when a prompt is given. */
  createThread(request: CreateThreadRequest): Promise<{
    thread: ThreadRecord;
    delivery: DeliveryResult | null;
    replayed: boolean;
  }> {
    return this.commands.createThread(request);
  }

  /** Sends a message (auto / queue / steer / restart through the shared policy). Idempotent by command id. */
  async send(request: SendRequest): Promise<DeliveryResult & { replayed: boolean }> {
    return this.commands.send(request);
  }

  /** Resume after Stop (ThreadCommands.resume). */
  async resume(
    threadId: string,
    commandId?: string,
  ): Promise<{ thread: ThreadRecord; resumedRunIds: string[]; replayed: boolean }> {
    return this.commands.resume(threadId, commandId);
  }

  /** The run a wait or interrupt names, or selects without a run id (ThreadCommands.selectRun). */
  async selectRun(
    threadId: string,
    runId: string | undefined,
    purpose: "wait" | "interrupt",
  ): Promise<RunRecord | null> {
    return this.commands.selectRun(threadId, runId, purpose);
  }

  /** Interrupts a run (the newest interruptible one without `runId`). */
  interrupt(request: Parameters<ThreadCommands["interrupt"]>[0]): ReturnType<ThreadCommands["interrupt"]> {
    return this.commands.interrupt(request);
  }

  /** Waits for a run to become terminal (RunWaits.waitForRun). */
  waitForRun(request: Parameters<RunWaits["waitForRun"]>[0]): Promise<RunWaitResult> {
    return this.waits.waitForRun(request);
  }

  /** Reads a thread's runs, newest first. */
  runs(threadId: string, limit = 20): Promise<RunRecord[]> {
    return this.testReads.runs(threadId, limit);
  }

  /** t3_thread_send: any thread in the environment, never broader than the caller's modes. */
  sendFromCaller(
    caller: Caller,
    input: { threadId: string; message: string; mode?: SendMode; replyToSource?: boolean; clientRequestId?: string },
  ): Promise<DeliveryResult & { replayed: boolean }> {
    return this.callerCommands.send(caller, input);
  }

  /** t3_thread_interrupt, with the caller's live-run check; only an agent is held to its ceiling. */
  interruptFromCaller(
    caller: Caller,
    input: { threadId: string; runId?: string },
  ): ReturnType<ThreadCommands["interrupt"]> {
    return this.callerCommands.interrupt(caller, input);
  }

  /** Stop, like the user's Stop button, for a caller (CallerThreadCommands.stop). */
  stopFromCaller(
    caller: Caller,
    input: { threadId: string; reason?: string; clientRequestId?: string },
  ): ReturnType<CallerThreadCommands["stop"]> {
    return this.callerCommands.stop(caller, input);
  }

  /** Resume after Stop, for a caller: within its ceiling; idempotent by `clientRequestId`. */
  resumeFromCaller(
    caller: Caller,
    input: { threadId: string; clientRequestId?: string },
  ): Promise<{ thread: ThreadRecord; resumedRunIds: string[]; replayed: boolean }> {
    return this.callerCommands.resume(caller, input);
  }

  /** set_thread_settled (CallerThreadCommands.setSettled). */
  async setSettledFromCaller(
    caller: Caller,
    input: { threadId: string; settled: boolean; clientRequestId?: string | undefined },
  ): Promise<{ thread: ThreadRecord; changed: boolean; replayed: boolean }> {
    return this.callerCommands.setSettled(caller, input);
  }

  /** Snooze until a time in the future (ThreadSnoozing.snooze). */
  snoozeFromCaller(
    caller: Caller,
    input: { threadId: string; until: string; clientRequestId?: string | undefined },
  ): Promise<SnoozeOutcome> {
    return this.snoozing.snooze(caller, input);
  }

  /** Wake a snoozed thread now (ThreadSnoozing.unsnooze). */
  unsnoozeFromCaller(
    caller: Caller,
    input: { threadId: string; clientRequestId?: string | undefined },
  ): Promise<SnoozeOutcome> {
    return this.snoozing.unsnooze(caller, input);
  }

  /** t3_thread_wait, capped by the server's maximum wait; an agent's thread is blocked while it runs. */
  waitFromCaller(
    caller: Caller,
    input: {
      threadId: string;
      runId?: string;
      timeoutMs?: number;
      cursor?: number;
      signal?: AbortSignal;
      onProgress?: () => void;
    },
  ): Promise<RunWaitResult> {
    return this.callerCommands.wait(caller, input);
  }

  /** create_threads: 1–20 threads, all or nothing (ThreadBatchCreation). */
  createThreads(caller: Caller, input: ThreadBatchInput): Promise<ThreadBatchResult> {
    return this.batches.create(caller, input);
  }

  /** Answers a runtime request (approval decision, answers, or dismiss) from a person or client. */
  async respondToRequest(requestId: string, response: RuntimeRequestResponse): Promise<RuntimeRequestRecord> {
    return this.commands.respondToRequest(requestId, response);
  }

  /** Pending runtime requests of a thread, oldest first. */
  pendingRequests(threadId: string): Promise<RuntimeRequestRecord[]> {
    return this.testReads.pendingRequests(threadId);
  }
}
