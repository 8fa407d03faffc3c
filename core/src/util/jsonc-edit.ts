/**
 * Edits one property of a JSON (or JSON-with-comments) document in place: everything outside
 * the edited property, comments and formatting included, stays byte for byte. The harnesses'
 * own config files (`.mcp.json`, `settings.json`, `opencode.json[c]`, `~/.claude.json`) are
 * the user's; a rewrite through `JSON.stringify` would drop their comments and layout.
 */

/** A config file that is not valid JSON(C), with where it broke. */
export class MalformedJsonError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

interface ValueNode {
  readonly kind: "object" | "array" | "scalar";
  readonly start: number;
  readonly end: number;
  readonly properties: PropertyNode[];
}

interface PropertyNode {
  readonly key: string;
  readonly keyStart: number;
  readonly value: ValueNode;
}

class JsoncScanner {
  pos = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    const before = this.text.slice(0, this.pos);
    const line = before.split("\n").length;
    const column = this.pos - before.lastIndexOf("\n");
    throw new MalformedJsonError(`${what} at line ${line}, column ${column}`, this.pos);
  }

  /** Skips whitespace and comments. */
  skipTrivia(): void {
    const text = this.text;
    while (this.pos < text.length) {
      const ch = text[this.pos]!;
      if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || ch === "\uFEFF") this.pos++;
      else if (text.startsWith("//", this.pos)) {
        const newline = text.indexOf("\n", this.pos);
        this.pos = newline === -1 ? text.length : newline;
      } else if (text.startsWith("/*", this.pos)) {
        const end = text.indexOf("*/", this.pos + 2);
        if (end === -1) this.fail("an unclosed /* comment");
        this.pos = end + 2;
      } else return;
    }
  }

  readString(): string {
    const start = this.pos;
    this.pos++;
    while (this.pos < this.text.length) {
      const ch = this.text[this.pos]!;
      if (ch === "\\") this.pos += 2;
      else if (ch === '"') {
        this.pos++;
        try {
          return JSON.parse(this.text.slice(start, this.pos)) as string;
        } catch {
          this.pos = start;
          this.fail("a malformed string");
        }
      } else if (ch === "\n") break;
      else this.pos++;
    }
    this.pos = start;
    return this.fail("an unterminated string");
  }

  readValue(): ValueNode {
    this.skipTrivia();
    const start = this.pos;
    const ch = this.text[this.pos];
    if (ch === "{") return this.readObject();
    if (ch === "[") return this.readArray();
    if (ch === '"') {
      this.readString();
      return { kind: "scalar", start, end: this.pos, properties: [] };
    }
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(this.text.slice(this.pos));
    if (literal === null)
      this.fail(ch === undefined ? "an unexpected end of file" : `an unexpected ${JSON.stringify(ch)}`);
    this.pos += literal[0].length;
    return { kind: "scalar", start, end: this.pos, properties: [] };
  }

  readObject(): ValueNode {
    const start = this.pos;
    this.pos++;
    const properties: PropertyNode[] = [];
    for (;;) {
      this.skipTrivia();
      if (this.text[this.pos] === "}") break;
      if (this.text[this.pos] !== '"') this.fail("a property name (in double quotes) expected");
      const keyStart = this.pos;
      const key = this.readString();
      this.skipTrivia();
      if (this.text[this.pos] !== ":") this.fail(`":" expected after "${key}"`);
      this.pos++;
      const value = this.readValue();
      properties.push({ key, keyStart, value });
      this.skipTrivia();
      if (this.text[this.pos] === ",") {
        this.pos++;
        continue;
      }
      if (this.text[this.pos] !== "}") this.fail('"," or "}" expected');
    }
    this.pos++;
    return { kind: "object", start, end: this.pos, properties };
  }

  readArray(): ValueNode {
    const start = this.pos;
    this.pos++;
    for (;;) {
      this.skipTrivia();
      if (this.text[this.pos] === "]") break;
      this.readValue();
      this.skipTrivia();
      if (this.text[this.pos] === ",") {
        this.pos++;
        continue;
      }
      if (this.text[this.pos] !== "]") this.fail('"," or "]" expected');
    }
    this.pos++;
    return { kind: "array", start, end: this.pos, properties: [] };
  }
}

function parseDocument(text: string): ValueNode | null {
  const scanner = new JsoncScanner(text);
  scanner.skipTrivia();
  if (scanner.pos >= text.length) return null;
  const root = scanner.readValue();
  scanner.skipTrivia();
  if (scanner.pos < text.length) scanner.fail("text after the end of the document");
  return root;
}

/** Parses JSON with comments and trailing commas; throws {@link MalformedJsonError}. An empty file is `{}`. */
export function parseJsoncDocument(text: string): unknown {
  const root = parseDocument(text);
  if (root === null) return {};
  return JSON.parse(stripToJson(text, root));
}

/** The document as strict JSON: comments blanked and trailing commas dropped (offsets kept). */
function stripToJson(text: string, root: ValueNode): string {
  // UTF-16 units, as the scanner's offsets are (not code points: an emoji would shift them).
  const chars = text.slice(0, root.end).split("");
  const scanner = new JsoncScanner(text);
  // Blank comments and trailing commas by re-walking the text outside strings.
  let inString = false;
  for (let i = 0; i < root.end; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) {
      scanner.pos = i;
      scanner.skipTrivia();
      for (let j = i; j < scanner.pos; j++) if (chars[j] !== "\n") chars[j] = " ";
      i = scanner.pos - 1;
    } else if (ch === ",") {
      scanner.pos = i + 1;
      scanner.skipTrivia();
      const next = text[scanner.pos];
      if (next === "}" || next === "]") chars[i] = " ";
    }
  }
  return chars.join("");
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

function indentAt(text: string, offset: number): string {
  const start = lineStart(text, offset);
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** The file's indent unit, read from its first indented line (two spaces when it has none). */
function indentUnit(text: string): string {
  const match = /\n([ \t]+)\S/.exec(text);
  return match ? match[1]! : "  ";
}

function render(value: unknown, unit: string, baseIndent: string): string {
  return JSON.stringify(value, null, unit).replace(/\n/g, `\n${baseIndent}`);
}

function findPath(root: ValueNode, path: readonly string[]): { parent: ValueNode; depth: number } {
  let node = root;
  let depth = 0;
  for (; depth < path.length - 1; depth++) {
    const next = node.properties.find((p) => p.key === path[depth]);
    if (next === undefined || next.value.kind !== "object") break;
    node = next.value;
  }
  return { parent: node, depth };
}

/**
 * Sets `path` (object keys from the root) to `value`, creating the objects on the way.
 * Returns the new text; the rest of the document is untouched.
 */
export function setJsoncProperty(text: string, path: readonly string[], value: unknown): string {
  const root = parseDocument(text);
  if (root === null) return `${render(nest(path, value), "  ", "")}\n`;
  if (root.kind !== "object") throw new MalformedJsonError("the document is not a JSON object", root.start);
  const unit = indentUnit(text);
  const { parent, depth } = findPath(root, path);
  const key = path[depth]!;
  const rest = path.slice(depth + 1);
  const newValue = rest.length === 0 ? value : nest(rest, value);
  const existing = parent.properties.find((p) => p.key === key);
  if (existing !== undefined) {
    if (rest.length > 0 && existing.value.kind !== "object") {
      throw new MalformedJsonError(`"${path.slice(0, depth + 1).join(".")}" is not an object`, existing.value.start);
    }
    const indent = indentAt(text, existing.keyStart);
    return text.slice(0, existing.value.start) + render(newValue, unit, indent) + text.slice(existing.value.end);
  }
  const last = parent.properties.at(-1);
  if (last !== undefined) {
    const indent = indentAt(text, last.keyStart);
    const insertion = `,\n${indent}${JSON.stringify(key)}: ${render(newValue, unit, indent)}`;
    return text.slice(0, last.value.end) + insertion + text.slice(last.value.end);
  }
  // An empty object: open it onto lines of its own.
  const outer = indentAt(text, parent.start);
  const indent = outer + unit;
  return `${text.slice(0, parent.start)}{\n${indent}${JSON.stringify(key)}: ${render(newValue, unit, indent)}\n${outer}}${text.slice(parent.end)}`;
}

function nest(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/** Removes the property at `path`, with its comma; returns the text unchanged when it is absent. */
export function removeJsoncProperty(text: string, path: readonly string[]): string {
  const root = parseDocument(text);
  if (root === null || root.kind !== "object") return text;
  let node = root;
  for (let depth = 0; depth < path.length - 1; depth++) {
    const next = node.properties.find((p) => p.key === path[depth]);
    if (next === undefined || next.value.kind !== "object") return text;
    node = next.value;
  }
  const index = node.properties.findIndex((p) => p.key === path.at(-1));
  if (index === -1) return text;
  const property = node.properties[index]!;
  const scanner = new JsoncScanner(text);
  scanner.pos = property.value.end;
  scanner.skipTrivia();
  if (text[scanner.pos] === "," && index < node.properties.length - 1) {
    // Not the last: take the property, its comma and the rest of its line.
    const from =
      text.slice(lineStart(text, property.keyStart), property.keyStart).trim() === ""
        ? lineStart(text, property.keyStart)
        : property.keyStart;
    const next = node.properties[index + 1]!;
    const to =
      text.slice(lineStart(text, next.keyStart), next.keyStart).trim() === ""
        ? lineStart(text, next.keyStart)
        : next.keyStart;
    return text.slice(0, from) + text.slice(to);
  }
  if (index > 0) {
    // The last: take the comma after the previous property up to this property's end.
    const previous = node.properties[index - 1]!;
    return text.slice(0, previous.value.end) + text.slice(property.value.end);
  }
  // The only property: leave an empty object.
  return `${text.slice(0, node.start)}{}${text.slice(node.end)}`;
}
