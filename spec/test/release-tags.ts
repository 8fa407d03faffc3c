import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// The release tags of docs/releasing.md ("Release tags"): every export of a public entry says
// how far it can be relied on, in its TSDoc, as Backstage's API reports do.

/** The tags that say how stable an export is; each export carries exactly one. */
export const RELEASE_TAGS = ["public", "experimental"] as const;

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** One export of an entry and the tags its declaration's TSDoc carries. */
export interface TaggedExport {
  /** The name it is exported under. */
  readonly name: string;
  /** Where it is declared, relative to the repository (`spec/src/v1/adapter.ts`). */
  readonly file: string;
  /** Every block tag of its TSDoc, by name, with the text after it (`deprecated` → `Use …`). */
  readonly tags: readonly { readonly name: string; readonly text: string }[];
}

/**
 * Every export of the TypeScript module `entry` (a source file), followed through re-exports to
 * the declaration that defines it; `@switchyard/spec` resolves to the spec's sources, so the
 * answer never depends on a stale build. A namespace re-export (`export * as x from "…"`)
 * answers with the TSDoc of that export statement, since the module it names is not ours.
 */
export function exportsOf(entry: string): TaggedExport[] {
  const program = ts.createProgram({
    rootNames: [entry],
    options: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: ["node"],
      paths: { "@switchyard/spec": [join(ROOT, "spec/src/index.ts")] },
    },
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  if (source === undefined) throw new Error(`${entry} is not a TypeScript source file`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error(`${entry} exports nothing`);

  return checker.getExportsOfModule(moduleSymbol).map((exported) => {
    const own = exported.declarations?.[0];
    const declaration =
      own !== undefined && ts.isNamespaceExport(own)
        ? own.parent
        : ((
            (exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported).declarations ?? []
          ).find((candidate) => ts.getJSDocTags(candidate).length > 0) ?? own);
    if (declaration === undefined) throw new Error(`${exported.name} has no declaration`);
    return {
      name: exported.name,
      file: relative(ROOT, declaration.getSourceFile().fileName),
      tags: ts
        .getJSDocTags(declaration)
        .map((tag) => ({ name: tag.tagName.text, text: ts.getTextOfJSDocComment(tag.comment)?.trim() ?? "" })),
    };
  });
}

/**
 * What is wrong with an export's release tags, or null: it needs exactly one of
 * {@link RELEASE_TAGS}, and a `@deprecated` tag must say what to use instead.
 */
export function releaseTagProblem(exported: TaggedExport): string | null {
  const where = `${exported.name} (${exported.file})`;
  const release = exported.tags.filter((tag) => (RELEASE_TAGS as readonly string[]).includes(tag.name));
  if (release.length === 0) return `${where} has no release tag: add @public or @experimental to its TSDoc`;
  if (release.length > 1) return `${where} has ${release.map((tag) => `@${tag.name}`).join(" and ")}: keep one`;
  const deprecated = exported.tags.find((tag) => tag.name === "deprecated");
  if (deprecated !== undefined && !/\{@link\s|`[^`]+`/.test(deprecated.text)) {
    return `${where} is @deprecated without naming what to use instead ({@link …} or \`…\`): "${deprecated.text}"`;
  }
  return null;
}

/** The source file of a package entry in this repository (`sdk/src/acp/index.ts`). */
export function entrySource(path: string): string {
  return join(ROOT, path);
}
