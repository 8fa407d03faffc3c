import { StringDecoder } from "node:string_decoder";

/**
 * Splits a byte stream into lines on `\n` only. Pi's RPC docs warn against Node's `readline`,
 * which also splits on U+2028/U+2029 inside JSON strings.
 */
export class LineSplitter {
  readonly #decoder = new StringDecoder("utf8");
  #buffer = "";

  /** Feeds a chunk; returns the complete lines it finished (without the `\n`, `\r` trimmed). */
  push(chunk: Buffer | string): string[] {
    this.#buffer += typeof chunk === "string" ? chunk : this.#decoder.write(chunk);
    const lines: string[] = [];
    let index = this.#buffer.indexOf("\n");
    while (index !== -1) {
      lines.push(this.#buffer.slice(0, index).replace(/\r$/, ""));
      this.#buffer = this.#buffer.slice(index + 1);
      index = this.#buffer.indexOf("\n");
    }
    return lines;
  }

  /** Returns the trailing partial line, if any, at end of stream. */
  flush(): string[] {
    const rest = this.#buffer + this.#decoder.end();
    this.#buffer = "";
    return rest === "" ? [] : [rest];
  }
}

/** Parses JSONL text into values, skipping blank and non-JSON lines (harnesses print warnings too). */
export function parseJsonLines(text: string): unknown[] {
  const values: unknown[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) continue;
    try {
      values.push(JSON.parse(trimmed));
    } catch {
      // a non-JSON line that happens to start with a brace
    }
  }
  return values;
}
