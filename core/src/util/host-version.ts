import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CORE_PACKAGE_DIR } from "./package-paths.js";

/** The @switchyard/core version, read once from its package.json. */
export const HOST_VERSION: string = (() => {
  try {
    const file = join(CORE_PACKAGE_DIR, "package.json");
    return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
})();
