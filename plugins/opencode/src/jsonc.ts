/**
 * Parses JSON with comments and trailing commas (OpenCode reads `opencode.jsonc`): comments
 * outside strings become whitespace, a comma before `}` or `]` is dropped, then `JSON.parse`
 * reports anything else as it would.
 */
export function parseJsonc(text: string): unknown {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const next = text[i + 1];
    if (inString) {
      out += ch;
      if (ch === "\\") {
        out += next ?? "";
        i++;
      } else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (ch === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const comment = text.slice(i, end === -1 ? text.length : end + 2);
      out += comment.replace(/[^\n]/g, " ");
      i += comment.length - 1;
    } else if (ch === ",") {
      const following = text[nextSignificant(text, i + 1)];
      out += following === "}" || following === "]" ? " " : ch;
    } else out += ch;
  }
  return JSON.parse(out);
}

/** The index of the next character that is neither whitespace nor inside a comment. */
function nextSignificant(text: string, from: number): number {
  let j = from;
  while (j < text.length) {
    if (/\s/.test(text[j]!)) j++;
    else if (text.startsWith("//", j)) {
      const newline = text.indexOf("\n", j);
      j = newline === -1 ? text.length : newline + 1;
    } else if (text.startsWith("/*", j)) {
      const end = text.indexOf("*/", j + 2);
      j = end === -1 ? text.length : end + 2;
    } else break;
  }
  return j;
}
