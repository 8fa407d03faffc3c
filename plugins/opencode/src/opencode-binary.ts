import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { PluginContext } from "@switchyard/sdk";
import type { OpenCodeOptions } from "./opencode-options.js";

/** How to start OpenCode. */
export interface OpenCodeBinary {
  /** The native executable. */
  readonly command: string;
  /** Where it came from, for messages. */
  readonly source: "option" | "package" | "path";
  /** The package version, when read from an installed package. */
  readonly version?: string;
}

const PLATFORMS: Readonly<Record<string, string>> = { darwin: "darwin", linux: "linux", win32: "windows" };

/**
 * The platform packages `opencode-ai` installs as optional dependencies, best first. Their
 * binary is the native executable itself, so it is started directly: no wrapper between the
 * host and OpenCode, and a signal to its process group reaches it.
 */
export function platformPackageNames(platform: string = process.platform, arch: string = process.arch): string[] {
  const os = PLATFORMS[platform] ?? platform;
  const base = `opencode-${os}-${arch}`;
  const variants = arch === "x64" ? [base, `${base}-baseline`] : [base];
  // Only Linux has musl builds.
  return os === "linux" ? [...variants, ...variants.map((name) => `${name}-musl`)] : variants;
}

function versionOf(manifest: string): string | undefined {
  try {
    const version = (JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/** The native binary of an installed platform package, looked up from this module and from `opencode-ai`. */
function findInstalledBinary(): OpenCodeBinary | null {
  const fromHere = createRequire(import.meta.url);
  const resolvers = [fromHere];
  try {
    resolvers.push(createRequire(fromHere.resolve("opencode-ai/package.json")));
  } catch {
    // opencode-ai is not installed next to the plugin
  }
  const executable = process.platform === "win32" ? "opencode.exe" : "opencode";
  for (const name of platformPackageNames()) {
    for (const resolver of resolvers) {
      try {
        const manifest = resolver.resolve(`${name}/package.json`);
        const binary = path.join(path.dirname(manifest), "bin", executable);
        if (existsSync(binary)) {
          const version = versionOf(manifest);
          return { command: binary, source: "package", ...(version !== undefined ? { version } : {}) };
        }
      } catch {
        // not this one
      }
    }
  }
  return null;
}

/**
 * Resolves OpenCode: the `opencodePath` option, else the installed `opencode-ai` package's
 * native binary (it is in place even when npm skipped the package's postinstall, which only
 * links the same file), else `opencode` on PATH. Null when none is found.
 */
export async function resolveOpenCodeBinary(
  options: OpenCodeOptions,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpenCodeBinary | null> {
  if (options.opencodePath !== undefined) {
    const found = await context.process.which(options.opencodePath, env);
    return found === null ? null : { command: found, source: "option" };
  }
  const installed = findInstalledBinary();
  if (installed !== null) return installed;
  const onPath = await context.process.which("opencode", env);
  return onPath === null ? null : { command: onPath, source: "path" };
}
