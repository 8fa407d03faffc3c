import type { ProviderCapabilities } from "../spec/index.js";
import type { SessionContinuationRecord } from "../store/records.js";

/** Input to {@link decideSessionContinuation}: what a thread has when a provider session opens. */
export interface SessionContinuationQuery {
  readonly capabilities: ProviderCapabilities;
  /** The provider conversation an earlier session left to resume (its resume cursor), or null. */
  readonly resumeCursor: string | null;
  /**
   * Why reopening that conversation failed (its state deleted or corrupt, after a crash), or
   * null when no try failed since. A failed cursor is never tried again.
   */
  readonly resumeFailure: string | null;
  /** The thread has messages a new provider conversation would not know. */
  readonly earlierConversation: boolean;
}

/** How a thread's conversation goes on in a provider session that opens, and why. */
export type SessionContinuationDecision = SessionContinuationRecord;

/**
 * Native resume when the provider can and an earlier session left a cursor that has not failed;
 * otherwise a new provider conversation, given the thread's history when it has one. A resume
 * that failed is decided again with its failure: the thread goes on in a new conversation
 * instead of failing every later turn on the same broken state.
 */
export function decideSessionContinuation(query: SessionContinuationQuery): SessionContinuationDecision {
  const asked =
    query.earlierConversation || query.resumeCursor !== null || query.resumeFailure !== null ? "resume" : "new";
  const carried = query.earlierConversation
    ? "a new provider session got the thread's history as portable context"
    : "a new provider session started (the thread had nothing to carry over)";
  if (query.resumeFailure !== null) {
    return {
      asked,
      action: query.earlierConversation ? "handoff" : "new",
      degraded: true,
      reason: `The provider could not reopen the thread's conversation (${query.resumeFailure}), so ${carried}.`,
    };
  }
  if (query.resumeCursor !== null && query.capabilities.sessions.resume) {
    return {
      asked,
      action: "resume",
      degraded: false,
      reason: "The provider reopens the thread's conversation natively.",
    };
  }
  if (!query.earlierConversation)
    return {
      asked,
      action: "new",
      degraded: false,
      reason: "The thread has no earlier conversation, so a new provider session starts.",
    };
  const why = query.capabilities.sessions.resume
    ? "No earlier provider session left a conversation to reopen"
    : "The provider cannot reopen a conversation";
  return { asked, action: "handoff", degraded: true, reason: `${why}, so ${carried}.` };
}
