import { readFileSync } from "node:fs";

/**
 * One file of a documented example: a fenced block that a marker comment names, so a test
 * reads the very text a user copies.
 *
 *     <!-- example: codex-gateway /home/me/.switchyard/config.json -->
 *     ```json
 *     { "providers": [ … ] }
 *     ```
 */
export interface DocExampleFile {
  /** The example the file belongs to (`codex-gateway`). */
  readonly example: string;
  /** Where the doc says the file goes, as written (`/home/me/.switchyard/config.json`). */
  readonly path: string;
  /** The fence's language (`json`, `toml`). */
  readonly language: string;
  /** The block's text, exactly as in the doc. */
  readonly text: string;
}

const MARKED_BLOCK = /<!-- example: (\S+) (\S+) -->\n```(\w*)\n([\s\S]*?)\n```/g;

/** Every marked block of a markdown file, by example id, in the doc's order. */
export function readDocExamples(markdownFile: string): Map<string, DocExampleFile[]> {
  const text = readFileSync(markdownFile, "utf8");
  const examples = new Map<string, DocExampleFile[]>();
  for (const match of text.matchAll(MARKED_BLOCK)) {
    const [, example, path, language, body] = match as unknown as [string, string, string, string, string];
    const files = examples.get(example) ?? [];
    files.push({ example, path, language, text: body });
    examples.set(example, files);
  }
  return examples;
}

/** The example's files, failing with the ids the doc has when it has none by that name. */
export function exampleFiles(
  examples: ReadonlyMap<string, readonly DocExampleFile[]>,
  id: string,
): readonly DocExampleFile[] {
  const files = examples.get(id);
  if (files === undefined)
    throw new Error(`The doc has no example "${id}" (it has: ${[...examples.keys()].join(", ")})`);
  return files;
}
