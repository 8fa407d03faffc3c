import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** Ends one request in flight without an answer, given the client's cancel notification. */
export type CancelCall = (requestId: RequestId, notification: JSONRPCMessage) => void;

/**
 * The requests each credential has in flight on the stateless endpoint, so that a client's
 * `notifications/cancelled` (the MCP SDK client sends it on a POST of its own, which a stateless
 * server cannot tie to the call it names) reaches the call: its handler's signal aborts and the
 * HTTP exchange ends without an answer. Unanswered, a cancelled `delegate_task` wait kept waiting
 * and, once the child finished, answered no one and marked the result delivered, so the parent
 * never heard of it.
 *
 * Request ids are only unique per client, and clients may share a token: a cancel that names an
 * id two calls of one credential have in flight cancels neither.
 */
export class CallsInFlight {
  private readonly calls = new Map<string, Set<CancelCall>>();

  /** Registers a POST's requests; returns what forgets them (when its exchange closes). */
  register(credentialId: string, requestIds: readonly RequestId[], cancel: CancelCall): () => void {
    const keys = requestIds.map((id) => callKey(credentialId, id));
    for (const key of keys) {
      const set = this.calls.get(key) ?? new Set();
      set.add(cancel);
      this.calls.set(key, set);
    }
    return () => {
      for (const key of keys) {
        const set = this.calls.get(key);
        set?.delete(cancel);
        if (set?.size === 0) this.calls.delete(key);
      }
    };
  }

  /** Cancels the call each `notifications/cancelled` among `messages` names, when it names exactly one. */
  cancelNamed(credentialId: string, messages: readonly JSONRPCMessage[]): void {
    for (const message of messages) {
      if (!("method" in message) || message.method !== "notifications/cancelled" || "id" in message) continue;
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId !== "string" && typeof requestId !== "number") continue;
      const set = this.calls.get(callKey(credentialId, requestId));
      if (set?.size !== 1) continue;
      const [cancel] = set;
      this.calls.delete(callKey(credentialId, requestId));
      cancel!(requestId, message);
    }
  }
}

function callKey(credentialId: string, requestId: RequestId): string {
  // A number and the string of its digits are different ids.
  return `${credentialId}\n${typeof requestId}:${requestId}`;
}
