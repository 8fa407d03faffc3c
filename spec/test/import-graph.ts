import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** Every module specifier a built JavaScript or declaration file names. */
export function specifiersIn(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(SPECIFIER)].map((match) => match[1] ?? match[2] ?? match[3]!);
}

/**
 * Follows the relative imports of built files from `entries` and returns every bare specifier
 * they reach (packages and `node:` modules), mapped to the files that name them. Reads the
 * files as built, so it sees what an installed package would load.
 */
export function bareImports(entries: readonly string[]): Map<string, string[]> {
  const seen = new Set<string>();
  const found = new Map<string, string[]>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of specifiersIn(file)) {
      if (specifier.startsWith(".")) {
        const target = resolve(dirname(file), specifier);
        const candidates = [target, target.replace(/\.js$/, ".d.ts"), join(target, "index.js")];
        const next = file.endsWith(".d.ts")
          ? (candidates.find((c) => c.endsWith(".d.ts") && existsSync(c)) ?? target)
          : candidates.find((c) => existsSync(c));
        if (next === undefined || !existsSync(next))
          throw new Error(`${file} imports ${specifier}, which does not exist`);
        queue.push(next);
      } else {
        found.set(specifier, [...(found.get(specifier) ?? []), file]);
      }
    }
  }
  return found;
}

/** The package a bare specifier belongs to (`@scope/name/sub` → `@scope/name`). */
export function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}
