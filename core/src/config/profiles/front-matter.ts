import { parse } from "yaml";

/** A Markdown file split into its YAML front matter and its body. */
export interface FrontMatterFile {
  readonly attributes: Record<string, unknown>;
  readonly body: string;
}

/**
 * Splits `---\n<yaml>\n---\n<body>`. A file without front matter is all body; front matter that
 * is not a YAML mapping throws with the parser's reason (the caller reports it with the file).
 */
export function parseFrontMatter(text: string): FrontMatterFile {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const opening = /^---[ \t]*\r?\n/.exec(source);
  if (opening === null) return { attributes: {}, body: source.trim() };
  const rest = source.slice(opening[0].length);
  const closing = /^---[ \t]*$/m.exec(rest);
  if (closing === null) throw new Error("the front matter opened by '---' has no closing '---' line");
  // maxAliasCount bounds alias expansion: a project file is not trusted input.
  const parsed: unknown = parse(rest.slice(0, closing.index), { maxAliasCount: 100 });
  if (parsed !== null && parsed !== undefined && (typeof parsed !== "object" || Array.isArray(parsed)))
    throw new Error("the front matter is not a mapping of fields");
  return {
    attributes: (parsed ?? {}) as Record<string, unknown>,
    body: rest.slice(closing.index + closing[0].length).trim(),
  };
}
