/** How much of a harness's stderr is kept for error messages. */
export const STDERR_TAIL_CHARS = 4_000;

/**
 * The last few kilobytes a harness wrote on stderr. Harnesses print their startup and crash
 * reasons there ("CODEX_HOME points to … but that path does not exist"), so every provider
 * error carries it. Tokens never reach stderr through Switchyard (they travel in headers or the
 * environment), and the host's logger scrubs them anyway.
 */
export class StderrTail {
  #text = "";
  constructor(private readonly limit = STDERR_TAIL_CHARS) {}

  /** Appends a chunk, keeping only the newest `limit` characters. */
  push(chunk: Buffer | string): void {
    this.#text = (this.#text + (typeof chunk === "string" ? chunk : chunk.toString("utf8"))).slice(-this.limit);
  }

  /** The kept text, trimmed; empty when the harness wrote nothing. */
  get text(): string {
    return this.#text.trim();
  }

  /** `message` followed by the tail, when there is one. */
  describe(message: string): string {
    const tail = this.text;
    return tail === "" ? message : `${message}\nLast stderr output:\n${tail}`;
  }
}
