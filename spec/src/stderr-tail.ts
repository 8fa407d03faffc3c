/** How many lines of a harness's stderr a provider error carries. @public */
export const STDERR_TAIL_LINES = 20;
/** How many characters of a harness's stderr a provider error carries. @public */
export const STDERR_TAIL_BYTES = 4_096;

/** Environment variable names whose values are credentials. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH/i;
/** Patterns that look like credentials wherever they appear. */
const SECRET_PATTERNS: readonly [RegExp, string][] = [
  [/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, "$1[redacted]"],
  [/\bsy_[A-Za-z0-9_-]{16,}/g, "sy_[redacted]"],
  [/\b(sk|xai|ghp|gho|github_pat|glpat)[-_][A-Za-z0-9_-]{16,}/g, "$1-[redacted]"],
  [/((?:api[_-]?key|token|secret|password)["']?\s*[:=]\s*["']?)[^\s"',}]{8,}/gi, "$1[redacted]"],
];

/**
 * Keeps the end of what a harness writes on stderr, for error messages. Only the last
 * {@link STDERR_TAIL_LINES} lines and {@link STDERR_TAIL_BYTES} characters are kept, and
 * `text()` scrubs secrets: bearer tokens, key-shaped strings, and the values of the
 * credential-named variables the process was started with.
 * @public
 */
export class StderrTail {
  private buffer = "";
  private readonly decoder = new TextDecoder();
  private readonly secrets: readonly string[];

  /** `env` is the process's environment: values of credential-named variables are scrubbed. */
  constructor(env: Readonly<Record<string, string | undefined>> = {}) {
    this.secrets = Object.entries(env)
      .filter(([name, value]) => value !== undefined && value.length >= 6 && SECRET_NAME.test(name))
      .map(([, value]) => value!)
      // Longest first, so a secret that contains another is replaced whole.
      .sort((a, b) => b.length - a.length);
  }

  /** Adds a chunk as it arrives (a string, or bytes decoded as UTF-8). */
  push(chunk: string | Uint8Array): void {
    const text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    const joined = this.buffer + text;
    if (joined.length <= STDERR_TAIL_BYTES * 2) {
      this.buffer = joined;
      return;
    }
    // Cut at a line start, so no half of a secret survives the cut unrecognised.
    const kept = joined.slice(-STDERR_TAIL_BYTES * 2);
    const newline = kept.indexOf("\n");
    this.buffer = newline === -1 ? "" : kept.slice(newline + 1);
  }

  /** The kept tail, trimmed and scrubbed; empty when nothing was written. */
  text(): string {
    let text = this.buffer;
    for (const secret of this.secrets) text = text.split(secret).join("[redacted]");
    for (const [pattern, replacement] of SECRET_PATTERNS) text = text.replace(pattern, replacement);
    const lines = text.trim().split("\n");
    return lines.slice(-STDERR_TAIL_LINES).join("\n").slice(-STDERR_TAIL_BYTES).trim();
  }
}

/**
 * `message` with a harness's stderr tail appended, for provider errors:
 * `codex app-server exited (code 1). Its stderr ended with: …`. Returns `message` unchanged
 * when the tail is empty or the message already contains it.
 * @public
 */
export function withStderrTail(message: string, tail: string | null | undefined): string {
  const trimmed = tail?.trim() ?? "";
  if (trimmed === "" || message.includes(trimmed)) return message;
  const separator = /[.!?:]$/.test(message.trim()) ? " " : ". ";
  return `${message.trim()}${separator}Its stderr ended with:\n${trimmed}`;
}
