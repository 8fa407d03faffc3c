import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The @switchyard/core package folder (works from src under tests and from dist). */
export const CORE_PACKAGE_DIR: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find the @switchyard/core package folder");
    dir = parent;
  }
  return dir;
})();

/** The built CLI entry (`switchyard`), which child processes such as the stdio MCP bridge run. */
export const CLI_ENTRY = join(CORE_PACKAGE_DIR, "dist", "cli", "main.js");

/**
 * Where the build packs @switchyard/spec, sdk, testkit (and, in a checkout, core) as npm
 * tarballs for plugin authors (`switchyard plugin sdk-path`; core/scripts/pack-sdk-tarballs.mjs).
 */
export const SDK_TARBALLS_DIR = join(CORE_PACKAGE_DIR, "dist", "sdk-tarballs");
