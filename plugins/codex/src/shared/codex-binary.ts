import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { SwitchyardError, type PluginContext } from "@switchyard/sdk";

/** How to start Codex: the native binary and what the npm wrapper would have added to its env. */
export interface CodexBinary {
  /** Absolute path (or a command found on PATH) of the executable. */
  readonly command: string;
  /** Where it came from: the instance options, the installed npm package, or PATH. */
  readonly source: "options" | "package" | "path";
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

/**
 * The native binary inside the installed `@openai/codex` (its per-platform optional dependency),
 * or null when the package or the platform binary is missing. Spawning the binary directly, not
 * the Node wrapper, means signals and process-group kills reach the real process.
 */
export function installedCodexBinary(): CodexBinary | null {
  const triple = TRIPLES[`${process.platform}-${process.arch}`];
  if (triple === undefined) return null;
  try {
    const require = createRequire(import.meta.url);
    const wrapperJson = require.resolve("@openai/codex/package.json");
    const packageRoot = dirname(wrapperJson);
    const platformJson = createRequire(wrapperJson).resolve(`@openai/codex-${process.platform}-${process.arch}/package.json`);
    const vendor = join(dirname(platformJson), "vendor", triple);
    const command = join(vendor, "bin", process.platform === "win32" ? "codex.exe" : "codex");
    if (!existsSync(command)) return null;
    const version = (JSON.parse(readFileSync(wrapperJson, "utf8")) as { version?: string }).version;
    const pathDir = join(vendor, "codex-path");
    return {
      command,
      source: "package",
      ...(version !== undefined ? { packageVersion: version } : {}),
      pathDirs: existsSync(pathDir) ? [pathDir] : [],
      env: { CODEX_MANAGED_BY_NPM: "1", CODEX_MANAGED_PACKAGE_ROOT: packageRoot },
    };
  } catch {
    return null;
  }
}

/**
 * Resolves the Codex executable: `codexPath` from the instance options, else the installed
 * `@openai/codex` native binary, else `codex` on PATH. Null when none is found.
 */
export async function resolveCodexBinary(
  codexPath: string | undefined,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CodexBinary | null> {
  if (codexPath !== undefined) {
    const found = await context.process.which(codexPath, env);
    return found === null ? null : { command: found, source: "options", pathDirs: [], env: {} };
  }
  const installed = installedCodexBinary();
  if (installed !== null) return installed;
  const onPath = await context.process.which("codex", env);
  return onPath === null ? null : { command: onPath, source: "path", pathDirs: [], env: {} };
}

/**
 * The Codex executable a session starts, or `provider_unavailable` naming what to do: install
 * `@openai/codex`, or set `codexPath`.
 */
export async function requireCodexBinary(codexPath: string | undefined, context: PluginContext, env: Readonly<Record<string, string | undefined>>): Promise<CodexBinary> {
  const binary = await resolveCodexBinary(codexPath, context, env);
  if (binary === null) {
    throw new SwitchyardError("provider_unavailable", "Codex was not found: install @openai/codex, or set codexPath in the instance options.", {
      codexPath: codexPath ?? null,
    });
  }
  return binary;
}
