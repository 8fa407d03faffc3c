import { injectable } from "tsyringe";
import type { LiveOutputChunk, LiveOutputFeed } from "./ports.js";

export type { LiveOutputChunk } from "./ports.js";

/**
 * Streaming deltas stay in memory: they are shown live and folded into one durable item when
 * the provider completes it (or the turn ends), so the event log holds whole messages, not
 * thousands of fragments.
 */
@injectable()
export class LiveOutput implements LiveOutputFeed {
  private readonly buffers = new Map<string, { chunk: Omit<LiveOutputChunk, "delta">; text: string }>();
  private readonly listeners = new Set<(chunk: LiveOutputChunk) => void>();

  private key(attemptId: string, itemId: string, kind: LiveOutputChunk["kind"]): string {
    return `${attemptId}\u0000${kind}\u0000${itemId}`;
  }

  append(chunk: LiveOutputChunk): void {
    const key = this.key(chunk.attemptId, chunk.itemId, chunk.kind);
    const buffer = this.buffers.get(key);
    if (buffer) buffer.text += chunk.delta;
    else
      this.buffers.set(key, {
        chunk: { threadId: chunk.threadId, attemptId: chunk.attemptId, itemId: chunk.itemId, kind: chunk.kind },
        text: chunk.delta,
      });
    for (const listener of this.listeners) listener(chunk);
  }

  /** Drops one item's buffer (it became durable). */
  complete(attemptId: string, itemId: string, kind: LiveOutputChunk["kind"]): void {
    this.buffers.delete(this.key(attemptId, itemId, kind));
  }

  /** Takes every unfinished buffer of an attempt (at turn end, to keep what was streamed). */
  drainAttempt(attemptId: string): { itemId: string; kind: LiveOutputChunk["kind"]; text: string }[] {
    const out: { itemId: string; kind: LiveOutputChunk["kind"]; text: string }[] = [];
    for (const [key, buffer] of this.buffers) {
      if (buffer.chunk.attemptId !== attemptId) continue;
      out.push({ itemId: buffer.chunk.itemId, kind: buffer.chunk.kind, text: buffer.text });
      this.buffers.delete(key);
    }
    return out;
  }

  /** Text streamed so far for a thread's unfinished items. */
  pendingText(threadId: string): string {
    let text = "";
    for (const buffer of this.buffers.values())
      if (buffer.chunk.threadId === threadId && buffer.chunk.kind === "assistant_message") text += buffer.text;
    return text;
  }

  buffered(): (Omit<LiveOutputChunk, "delta"> & { readonly text: string })[] {
    return [...this.buffers.values()].map((buffer) => ({ ...buffer.chunk, text: buffer.text }));
  }

  textSoFar(attemptId: string, itemId: string, kind: LiveOutputChunk["kind"]): string | null {
    return this.buffers.get(this.key(attemptId, itemId, kind))?.text ?? null;
  }

  onChunk(listener: (chunk: LiveOutputChunk) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
