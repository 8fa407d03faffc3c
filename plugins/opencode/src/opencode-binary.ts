import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import {
  findHarness,
  type FoundHarness,
  type HarnessSearch,
  type HarnessSource,
  type HarnessSpec,
  type PluginContext,
} from "@switchyard/sdk";
import type { OpenCodeOptions } from "./opencode-options.js";

/** How to start OpenCode. */
export interface OpenCodeBinary {
  /** The native executable. */
  readonly command: string;
  /** Where it was found: the instance options, PATH, a global or a local npm package. */
  readonly source: HarnessSource;
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

/** The native binary of `opencode-ai`'s platform package, looked up from the package at `packageDir`. */
function nativeBinaryOf(packageDir: string, source: HarnessSource): OpenCodeBinary | null {
  const resolver = createRequire(path.join(packageDir, "package.json"));
  const executable = process.platform === "win32" ? "opencode.exe" : "opencode";
  for (const name of platformPackageNames()) {
    try {
      const manifest = resolver.resolve(`${name}/package.json`);
      const binary = path.join(path.dirname(manifest), "bin", executable);
      if (existsSync(binary)) {
        const version = versionOf(path.join(packageDir, "package.json")) ?? versionOf(manifest);
        return { command: binary, source, ...(version !== undefined ? { version } : {}) };
      }
    } catch {
      // not this one
    }
  }
  return null;
}

/**
 * OpenCode as this plugin looks for it (data for the sdk's harness search). Tested with the
 * server its wire types describe; no release is known to speak a different server API, so none
 * is refused.
 */
export const OPENCODE_HARNESS: HarnessSpec = {
  displayName: "OpenCode",
  option: "opencodePath",
  commands: ["opencode"],
  packages: ["opencode-ai"],
  install: "npm i -g opencode-ai",
  testedVersions: "~1.18.33",
};

/**
 * How a found OpenCode is started: the platform package's native binary (in place even when npm
 * skipped the package's postinstall, which only links the same file), so no wrapper stands
 * between the host and OpenCode and a signal to its process group reaches it; an executable on
 * PATH or in the options that belongs to no such package runs as it is.
 */
function launchOf(found: FoundHarness): OpenCodeBinary | null {
  if (found.packageDir !== null) {
    const native = nativeBinaryOf(found.packageDir, found.source);
    if (native !== null) return native;
  }
  const runsItself = found.source === "configured" || found.source === "path";
  return runsItself && found.command !== null ? { command: found.command, source: found.source } : null;
}

/** What a search for OpenCode found: where it looked, and how to start what it found. */
export interface OpenCodeLookup {
  readonly search: HarnessSearch;
  readonly binary: OpenCodeBinary | null;
}

/**
 * Finds OpenCode the way every plugin finds its harness (the sdk's `findHarness`): the
 * `opencodePath` option, else `opencode` on PATH, else `opencode-ai` installed globally, else
 * next to the plugin.
 */
export async function findOpenCode(
  options: OpenCodeOptions,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpenCodeLookup> {
  const search = await findHarness(OPENCODE_HARNESS, {
    configured: options.opencodePath,
    env,
    context,
    from: import.meta.url,
    usable: (found) =>
      launchOf(found) === null
        ? `no native binary for ${process.platform}-${process.arch} (${platformPackageNames().join(", ")}) is installed; reinstall it without --omit=optional`
        : null,
  });
  return { search, binary: search.found === null ? null : launchOf(search.found) };
}

/** {@link findOpenCode}'s binary alone; null when OpenCode is nowhere. */
export async function resolveOpenCodeBinary(
  options: OpenCodeOptions,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpenCodeBinary | null> {
  return (await findOpenCode(options, context, env)).binary;
}
