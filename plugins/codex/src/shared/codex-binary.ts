import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  SwitchyardError,
  findHarness,
  harnessNotFoundMessage,
  type FoundHarness,
  type HarnessSearch,
  type HarnessSource,
  type HarnessSpec,
  type PluginContext,
} from "@switchyard/sdk";

/**
 * Codex as this plugin looks for it (data for the sdk's harness search). Tested with the
 * version its wire types are generated from (`CODEX_WIRE_VERSION`); no older release is known
 * to speak a different app-server protocol, so none is refused.
 */
export const CODEX_HARNESS: HarnessSpec = {
  displayName: "Codex",
  option: "codexPath",
  commands: ["codex"],
  packages: ["@openai/codex"],
  install: "npm i -g @openai/codex",
  testedVersions: "~0.171.0",
};

/** How to start Codex: the native binary and what the npm wrapper would have added to its env. */
export interface CodexBinary {
  /** Absolute path (or a command found on PATH) of the executable. */
  readonly command: string;
  /** Where it was found: the instance options, PATH, a global or a local npm package. */
  readonly source: HarnessSource;
  /** The npm package version, when it came from the package. */
  readonly packageVersion?: string;
  /** Directories to put first on PATH (the package's bundled `rg`). */
  readonly pathDirs: readonly string[];
  /** Environment the npm wrapper sets before exec'ing the binary. */
  readonly env: Readonly<Record<string, string>>;
}

const TRIPLES: Readonly<Record<string, string>> = {
  "linux-x64": "x86_64-unknown-linux-musl",
  "linux-arm64": "aarch64-unknown-linux-musl",
  "darwin-x64": "x86_64-apple-darwin",
  "darwin-arm64": "aarch64-apple-darwin",
  "win32-x64": "x86_64-pc-windows-msvc",
  "win32-arm64": "aarch64-pc-windows-msvc",
};

const PLATFORM_PACKAGE = `@openai/codex-${process.platform}-${process.arch}`;

/**
 * The native binary inside an installed `@openai/codex` (its per-platform optional dependency),
 * or null when the platform binary is missing. Spawning the binary directly, not the Node
 * wrapper, means signals and process-group kills reach the real process.
 */
export function codexFromPackage(packageRoot: string, source: HarnessSource = "local"): CodexBinary | null {
  const triple = TRIPLES[`${process.platform}-${process.arch}`];
  if (triple === undefined) return null;
  try {
    const wrapperJson = join(packageRoot, "package.json");
    const platformJson = createRequire(wrapperJson).resolve(`${PLATFORM_PACKAGE}/package.json`);
    const vendor = join(dirname(platformJson), "vendor", triple);
    const command = join(vendor, "bin", process.platform === "win32" ? "codex.exe" : "codex");
    if (!existsSync(command)) return null;
    const version = (JSON.parse(readFileSync(wrapperJson, "utf8")) as { version?: string }).version;
    const pathDir = join(vendor, "codex-path");
    return {
      command,
      source,
      ...(version !== undefined ? { packageVersion: version } : {}),
      pathDirs: existsSync(pathDir) ? [pathDir] : [],
      env: { CODEX_MANAGED_BY_NPM: "1", CODEX_MANAGED_PACKAGE_ROOT: packageRoot },
    };
  } catch {
    return null;
  }
}

/** The `@openai/codex` installed next to this plugin (a checkout's workspace), or null. */
export function installedCodexBinary(): CodexBinary | null {
  try {
    return codexFromPackage(dirname(createRequire(import.meta.url).resolve("@openai/codex/package.json")));
  } catch {
    return null;
  }
}

/**
 * How a found Codex is started: a package's native binary; an executable on PATH or in the
 * options runs as it is when it belongs to no package whose binary is there (its own install).
 */
function launchOf(found: FoundHarness): CodexBinary | null {
  if (found.packageDir !== null) {
    const native = codexFromPackage(found.packageDir, found.source);
    if (native !== null) return native;
  }
  const runsItself = found.source === "configured" || found.source === "path";
  return runsItself && found.command !== null
    ? { command: found.command, source: found.source, pathDirs: [], env: {} }
    : null;
}

/** What a search for Codex found: where it looked, and how to start what it found. */
export interface CodexLookup {
  readonly search: HarnessSearch;
  readonly binary: CodexBinary | null;
}

/**
 * Finds Codex the way every plugin finds its harness (the sdk's `findHarness`): `codexPath`
 * from the instance options, else `codex` on PATH, else `@openai/codex` installed globally,
 * else next to the plugin. A package counts only with its platform binary (an npm wrapper on
 * PATH runs the same binary directly).
 */
export async function findCodex(
  codexPath: string | undefined,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CodexLookup> {
  const search = await findHarness(CODEX_HARNESS, {
    configured: codexPath,
    env,
    context,
    from: import.meta.url,
    usable: (found) =>
      launchOf(found) === null
        ? `its native binary for ${process.platform}-${process.arch} (${PLATFORM_PACKAGE}) is not installed; reinstall it without --omit=optional`
        : null,
  });
  return { search, binary: search.found === null ? null : launchOf(search.found) };
}

/** {@link findCodex}'s binary alone, or null. */
export async function resolveCodexBinary(
  codexPath: string | undefined,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CodexBinary | null> {
  return (await findCodex(codexPath, context, env)).binary;
}

/**
 * The Codex executable a session starts, or `provider_unavailable` naming where it looked and
 * how to install it.
 */
export async function requireCodexBinary(
  codexPath: string | undefined,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CodexBinary> {
  const { search, binary } = await findCodex(codexPath, context, env);
  if (binary === null)
    throw new SwitchyardError("provider_unavailable", harnessNotFoundMessage(search), { codexPath: codexPath ?? null });
  return binary;
}
