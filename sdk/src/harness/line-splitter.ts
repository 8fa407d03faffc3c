import { StringDecoder } from "node:string_decoder";

/**
 * Splits a byte stream into lines on `\n` only. Node's `readline` also splits on U+2028/U+2029,
 * which may appear inside JSON strings; and a multi-byte UTF-8 character split across two chunks
 * must not become two replacement characters, so bytes go through one decoder.
 * @public
 */
export class LineSplitter {
  readonly #decoder = new StringDecoder("utf8");
  #buffer = "";

  /** Feeds a chunk; returns the complete lines it finished (without the `\n`, a trailing `\r` trimmed). */
  push(chunk: Buffer | string): string[] {
    this.#buffer += typeof chunk === "string" ? chunk : this.#decoder.write(chunk);
    const lines: string[] = [];
    let start = 0;
    for (let newline = this.#buffer.indexOf("\n"); newline !== -1; newline = this.#buffer.indexOf("\n", start)) {
      const line = this.#buffer.slice(start, newline);
      lines.push(line.endsWith("\r") ? line.slice(0, -1) : line);
      start = newline + 1;
    }
    this.#buffer = this.#buffer.slice(start);
    return lines;
  }

  /** Returns the trailing partial line, if any, at end of stream. */
  flush(): string[] {
    const rest = this.#buffer + this.#decoder.end();
    this.#buffer = "";
    return rest === "" ? [] : [rest];
  }
}
