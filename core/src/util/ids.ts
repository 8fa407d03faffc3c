import { createHash, randomBytes } from "node:crypto";
import { token } from "./di-token.js";

/**
 * Allocates ids. Random ids sort by creation time (a millisecond prefix), so "newest first"
 * needs no extra column; derived ids are pure functions of the command that caused them, so a
 * retried command lands on the same rows.
 */
export interface IdAllocator {
  /** A new random id with a readable prefix: `thread_01J…`. */
  random(prefix: string): string;
}

let lastMs = 0;
let counter = 0;

/** Time-ordered random ids: base36 milliseconds, a per-ms counter, then randomness. */
export const randomIdAllocator: IdAllocator = {
  random(prefix: string): string {
    const ms = Date.now();
    if (ms === lastMs) counter += 1;
    else {
      lastMs = ms;
      counter = 0;
    }
    const time = ms.toString(36).padStart(9, "0");
    const seq = counter.toString(36).padStart(3, "0");
    return `${prefix}_${time}${seq}${randomBytes(6).toString("hex")}`;
  },
};

/** A short, stable hash of the given parts. */
export function stableHash(...parts: readonly string[]): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part).update("\u0000");
  return hash.digest("base64url").slice(0, 22);
}

/** Hash of a JSON-serialisable request, for receipt conflict checks. Key order does not matter. */
export function requestHash(value: unknown): string {
  return stableHash(canonicalJson(value));
}

/** JSON with sorted object keys. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** Deterministic ids derived from a command id. */
export const derive = {
  delegatedTask: (commandId: string) => `task:${commandId}`,
  delegatedThread: (commandId: string) => `thread:delegated-task:${commandId}`,
  delegatedNode: (commandId: string) => `node:delegated-task:${commandId}`,
  delegatedItem: (commandId: string) => `item:delegated-task:${commandId}`,
  spawnTransfer: (commandId: string) => `transfer:subagent-spawn:${commandId}`,
  resultTransfer: (taskId: string) => `transfer:subagent-result:${taskId}`,
  /** The result of a later turn in a delegated task's child thread (one per run). */
  followUpResultTransfer: (taskId: string, runId: string) => `transfer:subagent-result:${taskId}:${runId}`,
  threadFromCommand: (commandId: string, index = 0) => `thread:${commandId}:${index}`,
  messageFromCommand: (commandId: string, index = 0) => `message:${commandId}:${index}`,
  run: (threadId: string, ordinal: number) => `run:${threadId}:${ordinal}`,
  attempt: (runId: string, ordinal: number) => `attempt:${runId}:${ordinal}`,
  runNode: (runId: string) => `node:${runId}`,
  effect: (kind: string, subject: string) => `effect:${kind}:${subject}`,
  /** A command id from a caller's retry key, scoped so two callers' keys never collide. */
  command: (scope: string, operation: string, requestKey: string) =>
    `cmd:${operation}:${stableHash(scope, operation, requestKey)}`,
};

/** DI token: where new ids come from. */
export const IdAllocatorToken = token<IdAllocator>("IdAllocator");
