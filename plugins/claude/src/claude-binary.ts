import { existsSync } from "node:fs";
import { createRequire } from "node:module";

/** Where the `claude` a session runs comes from. */
export interface ClaudeBinary {
  readonly path: string;
  readonly source: "option" | "bundled";
}

const SDK_PACKAGE = "@anthropic-ai/claude-agent-sdk";

/**
 * The `claude` executable without starting it: the `claudePath` option, else the native binary
 * the SDK would use (its optional `@anthropic-ai/claude-agent-sdk-<platform>-<arch>[-musl]`
 * package, found the way the SDK finds it). Null when there is none.
 */
export function resolveClaudeBinary(claudePath: string | undefined): ClaudeBinary | null {
  if (claudePath !== undefined) return existsSync(claudePath) ? { path: claudePath, source: "option" } : null;
  let sdkEntry: string;
  try {
    sdkEntry = createRequire(import.meta.url).resolve(SDK_PACKAGE);
  } catch {
    return null;
  }
  const fromSdk = createRequire(sdkEntry);
  const platform = process.platform === "win32" || process.platform === "darwin" ? process.platform : "linux";
  const suffix = process.platform === "win32" ? ".exe" : "";
  const packages = platform === "linux" ? [`${SDK_PACKAGE}-linux-${process.arch}`, `${SDK_PACKAGE}-linux-${process.arch}-musl`] : [`${SDK_PACKAGE}-${platform}-${process.arch}`];
  for (const name of packages) {
    try {
      return { path: fromSdk.resolve(`${name}/claude${suffix}`), source: "bundled" };
    } catch {
      // not installed for this platform
    }
  }
  return null;
}
