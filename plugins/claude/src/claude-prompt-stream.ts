import type { SDKUserMessage } from "./claude-wire.js";

/**
 * The prompt of a streaming-input query: an async iterable the session owns. Each `push`
 * becomes one user message Claude Code reads from stdin; `end` lets the query finish (the SDK
 * then closes Claude Code's stdin, and the process exits).
 */
export class PromptStream implements AsyncIterable<SDKUserMessage> {
  readonly #queue: SDKUserMessage[] = [];
  #wake: (() => void) | null = null;
  #ended = false;

  /** Queues a message for Claude Code. Ignored after `end`. */
  push(message: SDKUserMessage): void {
    if (this.#ended) return;
    this.#queue.push(message);
    this.#wake?.();
  }

  /** No more messages. */
  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  get ended(): boolean {
    return this.#ended;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    for (;;) {
      const next = this.#queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
  }
}
