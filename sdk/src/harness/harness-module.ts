import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { SwitchyardError } from "@switchyard/spec";
import type { HarnessSearch } from "./find-harness.js";
import { harnessNotFoundMessage } from "./find-harness.js";

/**
 * A harness that is a library (the Claude Agent SDK, the Codex SDK) runs inside the plugin, so
 * a plugin imports it from wherever the search found it, not by a bare specifier: a user's
 * global install is outside the plugin's own resolution.
 */

/** The ESM entry an `exports` value names (`import`, then `node`, then `default`). */
function entryOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const conditions = value as Record<string, unknown>;
  if ("." in conditions) return entryOf(conditions["."]);
  for (const condition of ["import", "node", "default"]) {
    if (condition in conditions) {
      const entry = entryOf(conditions[condition]);
      if (entry !== null) return entry;
    }
  }
  return null;
}

/** The file a package's main entry is (its `exports["."]`, else `module`, else `main`, else index.js). @public */
export function packageEntry(packageDir: string): string {
  const manifest = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as {
    exports?: unknown;
    module?: unknown;
    main?: unknown;
  };
  const entry =
    entryOf(manifest.exports) ??
    (typeof manifest.module === "string" ? manifest.module : null) ??
    (typeof manifest.main === "string" ? manifest.main : "index.js");
  return path.resolve(packageDir, entry);
}

/**
 * Imports the package a search found (its main entry). Throws `provider_unavailable` with the
 * search's not-found message (where it looked, how to install it) when it found none, and with
 * the loader's own error when the package is there but does not load.
 * @public
 */
export async function importHarnessPackage<T>(search: HarnessSearch): Promise<T> {
  const dir = search.found?.packageDir ?? null;
  if (dir === null)
    throw new SwitchyardError("provider_unavailable", harnessNotFoundMessage(search), {
      packages: search.spec.packages,
    });
  try {
    return (await import(pathToFileURL(packageEntry(dir)).href)) as T;
  } catch (error) {
    throw new SwitchyardError(
      "provider_unavailable",
      `${search.spec.displayName} at ${dir} could not be loaded: ${error instanceof Error ? error.message : String(error)}. Reinstall it (${search.spec.install}).`,
      {
        packageDir: dir,
      },
    );
  }
}
