import { parse, stringify, TomlError } from "smol-toml";

/**
 * Replaces or removes whole `[a.b]` tables of a TOML document (Codex's `config.toml`) as text,
 * so every other line, comments and layout included, stays as the user wrote it. The result is
 * parsed again and compared with what was meant before anything is written.
 */

/** A config file that is not valid TOML, or that holds the entry in a form this edit cannot own. */
export class MalformedTomlError extends Error {}

/** Parses a TOML document; throws {@link MalformedTomlError} naming the line. */
export function parseTomlDocument(text: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof TomlError)
      throw new MalformedTomlError(`${error.message.split("\n")[0]} (line ${error.line}, column ${error.column})`);
    throw error;
  }
}

/** Splits a dotted TOML key (`mcp_servers."a.b"`) into its parts. */
function splitDottedKey(key: string): string[] | null {
  const parts: string[] = [];
  let rest = key.trim();
  while (rest.length > 0) {
    let part: string;
    if (rest.startsWith('"')) {
      const match = /^"((?:[^"\\]|\\.)*)"/.exec(rest);
      if (match === null) return null;
      part = JSON.parse(match[0]) as string;
      rest = rest.slice(match[0].length);
    } else if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      if (end === -1) return null;
      part = rest.slice(1, end);
      rest = rest.slice(end + 1);
    } else {
      const match = /^[A-Za-z0-9_-]+/.exec(rest);
      if (match === null) return null;
      part = match[0];
      rest = rest.slice(part.length);
    }
    parts.push(part);
    rest = rest.trimStart();
    if (rest.startsWith(".")) rest = rest.slice(1).trimStart();
    else if (rest.length > 0) return null;
  }
  return parts;
}

interface TableHeader {
  /** Index of the header's line. */
  readonly line: number;
  /** The header's key, or null for a header this scan could not read. */
  readonly path: string[] | null;
}

/** The table headers of a document, skipping lines inside multi-line strings. */
function tableHeaders(lines: readonly string[]): TableHeader[] {
  const headers: TableHeader[] = [];
  let openString: '"""' | "'''" | null = null;
  lines.forEach((line, index) => {
    if (openString === null) {
      const header = /^\s*\[\[?\s*(.+?)\s*\]\]?\s*(?:#.*)?$/.exec(line);
      if (header !== null) headers.push({ line: index, path: splitDottedKey(header[1]!) });
    }
    for (const delimiter of ['"""', "'''"] as const) {
      let from = 0;
      for (;;) {
        const at = line.indexOf(delimiter, from);
        if (at === -1) break;
        if (openString === null) openString = delimiter;
        else if (openString === delimiter) openString = null;
        from = at + 3;
      }
    }
  });
  return headers;
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.every((part, i) => path[i] === part);
}

/** The line ranges `[from, to)` of the table at `path` and its sub-tables. */
function tableRanges(lines: readonly string[], path: readonly string[]): [number, number][] {
  const headers = tableHeaders(lines);
  const ranges: [number, number][] = [];
  headers.forEach((header, i) => {
    if (header.path === null || !startsWith(header.path, path)) return;
    let to = i + 1 < headers.length ? headers[i + 1]!.line : lines.length;
    // Leave the blank lines and comments that lead into the next table with that table.
    while (to - 1 > header.line && /^\s*(#.*)?$/.test(lines[to - 1]!)) to--;
    ranges.push([header.line, to]);
  });
  return ranges;
}

function valueAt(document: Record<string, unknown>, path: readonly string[]): unknown {
  let node: unknown = document;
  for (const part of path) {
    if (node === null || typeof node !== "object" || !(part in node)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** The document without the value at `path`, to compare everything else before and after an edit. */
function without(document: Record<string, unknown>, paths: readonly (readonly string[])[]): unknown {
  const copy = structuredClone(document);
  for (const path of paths) {
    const chain: Record<string, unknown>[] = [copy];
    for (const part of path.slice(0, -1)) {
      const next = chain.at(-1)![part];
      if (next === null || typeof next !== "object") break;
      chain.push(next as Record<string, unknown>);
    }
    if (chain.length !== path.length) continue;
    delete chain.at(-1)![path.at(-1)!];
    // A parent left empty (`[mcp_servers]` created only for the entry) does not count as a change.
    for (let depth = chain.length - 1; depth > 0; depth--) {
      if (Object.keys(chain[depth]!).length > 0) break;
      delete chain[depth - 1]![path[depth - 1]!];
    }
  }
  return JSON.parse(
    JSON.stringify(copy, (_key, value: unknown) => (value instanceof Date ? value.toISOString() : value)),
  ) as unknown;
}

function quotedKey(part: string): string {
  return /^[A-Za-z0-9_-]+$/.test(part) ? part : JSON.stringify(part);
}

/** One table as TOML text: its header, comment lines, then `key = value` lines. */
export function renderTomlTable(
  path: readonly string[],
  values: Record<string, unknown>,
  comment: readonly string[] = [],
): string {
  const body = stringify(values).trimEnd();
  return [`[${path.map(quotedKey).join(".")}]`, ...comment.map((line) => `# ${line}`), body].join("\n");
}

/**
 * Sets the tables named in `tables` (each path → its values; null removes the table) and
 * returns the new text. Refuses, with {@link MalformedTomlError}, a document that is not TOML or
 * that defines one of these tables some other way (inline, or as dotted keys).
 */
export function setTomlTables(
  text: string,
  tables: readonly { path: readonly string[]; values: Record<string, unknown> | null; comment?: readonly string[] }[],
): string {
  const before = parseTomlDocument(text);
  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  let lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines = lines.slice(0, -1);
  for (const table of tables) {
    const ranges = tableRanges(lines, table.path);
    if (ranges.length === 0 && valueAt(before, table.path) !== undefined) {
      throw new MalformedTomlError(
        `[${table.path.join(".")}] is defined inline or with dotted keys, which this command does not edit; remove it and run again`,
      );
    }
    const rendered =
      table.values === null ? null : renderTomlTable(table.path, table.values, table.comment).split("\n");
    if (ranges.length === 0) {
      if (rendered === null) continue;
      const gap = lines.length > 0 && lines.at(-1)!.trim() !== "" ? [""] : [];
      lines = [...lines, ...gap, ...rendered];
      continue;
    }
    // The first range is replaced (or dropped), later ones (sub-tables) dropped, last first.
    for (let i = ranges.length - 1; i >= 0; i--) {
      const [from, to] = ranges[i]!;
      let removeTo = to;
      if (rendered === null || i > 0) {
        // Take the blank lines that followed the table with it.
        while (removeTo < lines.length && lines[removeTo]!.trim() === "") removeTo++;
        lines = [...lines.slice(0, from), ...lines.slice(removeTo)];
      } else {
        lines = [...lines.slice(0, from), ...rendered, ...lines.slice(to)];
      }
    }
  }
  while (lines.length > 0 && lines.at(-1)!.trim() === "") lines.pop();
  const result = lines.length === 0 ? "" : `${lines.join(newline)}${newline}`;
  const after = parseTomlDocument(result);
  const paths = tables.map((table) => table.path);
  if (JSON.stringify(without(before, paths)) !== JSON.stringify(without(after, paths))) {
    throw new MalformedTomlError(
      "editing the file would have changed other settings in it (its tables are laid out in a way this command does not follow); edit it by hand",
    );
  }
  for (const table of tables) {
    const got = valueAt(after, table.path);
    const want = table.values === null ? undefined : JSON.parse(JSON.stringify(table.values));
    if (JSON.stringify(got) !== JSON.stringify(want))
      throw new MalformedTomlError(`[${table.path.join(".")}] did not come out as intended; edit the file by hand`);
  }
  return result;
}

/** The table at `path` of a document, or undefined. */
export function tomlValueAt(text: string, path: readonly string[]): unknown {
  return valueAt(parseTomlDocument(text), path);
}
