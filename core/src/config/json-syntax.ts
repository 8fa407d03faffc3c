/** Where a JSON text stops being valid JSON, and why, in the terms of the file a person edits. */
export interface JsonSyntaxProblem {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column (in UTF-16 code units, as editors count them for most text). */
  readonly column: number;
  /** What is wrong there, e.g. `expected "," or "}" after a property value`. */
  readonly reason: string;
}

class SyntaxAt extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * A strict RFC 8259 scanner that only finds the first error. `JSON.parse` says what went wrong
 * but, depending on the Node version and the mistake, not where ("Unexpected token 'x', ... is
 * not valid JSON"), and a config file needs a line and a column.
 */
class JsonScanner {
  private at = 0;
  constructor(private readonly text: string) {}

  scan(): void {
    this.space();
    this.value();
    this.space();
    if (this.at < this.text.length) this.fail(`unexpected ${this.describe()} after the end of the JSON value`);
  }

  private fail(reason: string): never {
    throw new SyntaxAt(this.at, reason);
  }

  private describe(): string {
    const char = this.text[this.at];
    if (char === undefined) return "end of file";
    if (char === "\n" || char === "\r") return "line break";
    return `"${char}"`;
  }

  private space(): void {
    while (this.at < this.text.length && " \t\n\r".includes(this.text[this.at]!)) this.at++;
  }

  private value(): void {
    const char = this.text[this.at];
    if (char === "{") return this.object();
    if (char === "[") return this.array();
    if (char === '"') return this.string();
    if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) return this.number();
    if (char === "t") return this.literal("true");
    if (char === "f") return this.literal("false");
    if (char === "n") return this.literal("null");
    if (char === undefined) this.fail("the file ends where a value should be");
    if (char === "'") this.fail("strings need double quotes, not single quotes");
    if (char === "/") this.fail("comments are not allowed in JSON");
    this.fail(`unexpected ${this.describe()} where a value should be (strings need double quotes)`);
  }

  private object(): void {
    this.at++;
    this.space();
    if (this.text[this.at] === "}") {
      this.at++;
      return;
    }
    for (;;) {
      this.space();
      if (this.text[this.at] !== '"') {
        if (this.text[this.at] === "}") this.fail('a comma before "}" (trailing commas are not allowed)');
        this.fail(`expected a property name in double quotes, found ${this.describe()}`);
      }
      this.string();
      this.space();
      if (this.text[this.at] !== ":") this.fail(`expected ":" after the property name, found ${this.describe()}`);
      this.at++;
      this.space();
      this.value();
      this.space();
      const next = this.text[this.at];
      if (next === ",") {
        this.at++;
        continue;
      }
      if (next === "}") {
        this.at++;
        return;
      }
      this.fail(`expected "," or "}" after a property value, found ${this.describe()}`);
    }
  }

  private array(): void {
    this.at++;
    this.space();
    if (this.text[this.at] === "]") {
      this.at++;
      return;
    }
    for (;;) {
      this.space();
      if (this.text[this.at] === "]") this.fail('a comma before "]" (trailing commas are not allowed)');
      this.value();
      this.space();
      const next = this.text[this.at];
      if (next === ",") {
        this.at++;
        continue;
      }
      if (next === "]") {
        this.at++;
        return;
      }
      this.fail(`expected "," or "]" after an array element, found ${this.describe()}`);
    }
  }

  private string(): void {
    this.at++;
    for (;;) {
      const char = this.text[this.at];
      if (char === undefined) this.fail("a string is not closed (missing the closing double quote)");
      if (char === '"') {
        this.at++;
        return;
      }
      if (char === "\\") {
        const escaped = this.text[this.at + 1];
        if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) {
          this.at += 2;
          continue;
        }
        if (escaped === "u" && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.at + 2, this.at + 6))) {
          this.at += 6;
          continue;
        }
        this.fail(`invalid escape "\\${escaped ?? ""}" in a string (backslashes are written \\\\)`);
      }
      if (char < " ")
        this.fail(
          char === "\n" || char === "\r"
            ? "a string is not closed before the end of the line"
            : "a control character in a string (escape it)",
        );
      this.at++;
    }
  }

  private number(): void {
    if (this.text[this.at] === "-") this.at++;
    const digits = () => {
      const start = this.at;
      while (this.at < this.text.length && this.text[this.at]! >= "0" && this.text[this.at]! <= "9") this.at++;
      return this.at - start;
    };
    if (this.text[this.at] === "0") this.at++;
    else if (digits() === 0) this.fail("a number needs digits");
    if (this.text[this.at] === ".") {
      this.at++;
      if (digits() === 0) this.fail('a number needs digits after "."');
    }
    if (this.text[this.at] === "e" || this.text[this.at] === "E") {
      this.at++;
      if (this.text[this.at] === "+" || this.text[this.at] === "-") this.at++;
      if (digits() === 0) this.fail("a number needs digits in its exponent");
    }
  }

  private literal(word: string): void {
    for (const char of word) {
      if (this.text[this.at] !== char)
        this.fail(`unexpected ${this.describe()} (did you mean ${word}? strings need double quotes)`);
      this.at++;
    }
  }
}

/** The first syntax error in a JSON text, or null when `JSON.parse` would accept it. */
export function findJsonSyntaxProblem(text: string): JsonSyntaxProblem | null {
  try {
    new JsonScanner(text).scan();
    return null;
  } catch (error) {
    if (!(error instanceof SyntaxAt)) throw error;
    const before = text.slice(0, error.offset);
    return {
      line: before.split("\n").length,
      column: error.offset - (before.lastIndexOf("\n") + 1) + 1,
      reason: error.reason,
    };
  }
}
