import { existsSync, openSync, readFileSync, readSync, closeSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The harnesses the test lab knows how to locate. */
export type HarnessName = "codex" | "codex-acp" | "pi" | "pi-legacy" | "gemini" | "claude" | "opencode";

/** How to start a harness without its npm wrapper in between (so signals reach the real process). */
export interface HarnessBinary {
  /** Which harness. */
  name: HarnessName;
  /** The executable to spawn: the native binary, or `process.execPath` for a JS CLI. */
  command: string;
  /** Arguments that go before the harness's own (the CLI script for JS harnesses). */
  args: string[];
  /** True when `command` is the native binary itself. */
  native: boolean;
  /** The npm package the harness was found in. */
  packageName: string;
  /** The installed version of that package. */
  version: string;
  /** Environment the npm wrapper would have added (merge it into the spawn env). */
  env: Record<string, string>;
}

/** Thrown when a harness is not installed; `code` is `harness_binary_not_found`. */
export class HarnessBinaryNotFoundError extends Error {
  /** Stable error code. */
  readonly code = "harness_binary_not_found";
  constructor(
    /** The harness asked for. */
    readonly harness: HarnessName,
    /** Where it was looked for. */
    readonly searched: string[],
    detail: string,
  ) {
    super(
      `Harness "${harness}" is not installed (${detail}). Looked under: ${searched.join(", ")}. ` +
        `Install its npm package as a devDependency (see the testkit README, "Scripted model server and harness homes").`,
    );
    this.name = "HarnessBinaryNotFoundError";
  }
}

interface HarnessPackageSpec {
  packageName: string;
  binName: string;
  /** Native binary inside a per-platform package, relative to that package's directory. */
  platformBinary?: (platform: string, arch: string) => { packageName: string; path: string } | undefined;
  env?: (packageDir: string) => Record<string, string>;
}

const CODEX_TRIPLES: Record<string, string> = {
  "linux-x64": "x86_64-unknown-linux-musl",
  "linux-arm64": "aarch64-unknown-linux-musl",
  "darwin-x64": "x86_64-apple-darwin",
  "darwin-arm64": "aarch64-apple-darwin",
  "win32-x64": "x86_64-pc-windows-msvc",
  "win32-arm64": "aarch64-pc-windows-msvc",
};

const exe = (platform: string, name: string): string => (platform === "win32" ? `${name}.exe` : name);

const HARNESS_PACKAGES: Record<HarnessName, HarnessPackageSpec> = {
  codex: {
    packageName: "@openai/codex",
    binName: "codex",
    platformBinary: (platform, arch) => {
      const triple = CODEX_TRIPLES[`${platform}-${arch}`];
      return triple
        ? {
            packageName: `@openai/codex-${platform}-${arch}`,
            path: join("vendor", triple, "bin", exe(platform, "codex")),
          }
        : undefined;
    },
    // What bin/codex.js sets before exec'ing the native binary.
    env: (packageDir) => ({ CODEX_MANAGED_BY_NPM: "1", CODEX_MANAGED_PACKAGE_ROOT: packageDir }),
  },
  // 2.x is a Node package over the Codex app-server (the `@openai/codex` it resolves); the
  // native `@zed-industries/codex-acp` line stopped at 0.16.0.
  "codex-acp": { packageName: "@agentclientprotocol/codex-acp", binName: "codex-acp" },
  pi: { packageName: "@earendil-works/pi-coding-agent", binName: "pi" },
  // The package Pi had before it moved (frozen at 0.73.1): the plugin still drives it.
  "pi-legacy": { packageName: "@mariozechner/pi-coding-agent", binName: "pi" },
  // GEMINI_CLI_NO_RELAUNCH keeps gemini in one process (it otherwise re-spawns itself with more heap).
  gemini: { packageName: "@google/gemini-cli", binName: "gemini", env: () => ({ GEMINI_CLI_NO_RELAUNCH: "true" }) },
  claude: {
    packageName: "@anthropic-ai/claude-code",
    binName: "claude",
    platformBinary: (platform, arch) => ({
      packageName: `@anthropic-ai/claude-code-${platform}-${arch}`,
      path: exe(platform, "claude"),
    }),
  },
  opencode: {
    packageName: "opencode-ai",
    binName: "opencode",
    platformBinary: (platform, arch) => ({
      packageName: `opencode-${platform}-${arch}`,
      path: join("bin", exe(platform, "opencode")),
    }),
  },
};

/** Options for {@link resolveHarnessBinary}. */
export interface ResolveHarnessBinaryOptions {
  /**
   * Directories to start the `node_modules` lookup from, walking up from each. Default:
   * `process.cwd()`, then the directory of this module (so a workspace's hoisted packages are found).
   */
  searchFrom?: string | readonly string[];
}

/**
 * Finds how to start a harness installed from npm, bypassing the npm wrapper where a native
 * binary exists (the Codex wrapper is a Node script that keeps the native process alive after
 * being killed). JS harnesses (Pi, Gemini CLI, codex-acp) run as `node <cli.js>`. Throws
 * {@link HarnessBinaryNotFoundError} when the package is missing.
 */
export function resolveHarnessBinary(name: HarnessName, options: ResolveHarnessBinaryOptions = {}): HarnessBinary {
  const spec = HARNESS_PACKAGES[name];
  const starts =
    options.searchFrom === undefined
      ? [process.cwd(), dirname(fileURLToPath(import.meta.url))]
      : typeof options.searchFrom === "string"
        ? [options.searchFrom]
        : [...options.searchFrom];
  const searched: string[] = [];
  const packageDir = findPackageDir(spec.packageName, starts, searched);
  if (!packageDir) throw new HarnessBinaryNotFoundError(name, searched, `package ${spec.packageName} not found`);
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    version?: string;
    bin?: string | Record<string, string>;
  };
  const version = manifest.version ?? "unknown";
  const env = spec.env?.(packageDir) ?? {};
  const base = { name, packageName: spec.packageName, version, env };

  const platformBinary = spec.platformBinary?.(process.platform, process.arch);
  if (platformBinary) {
    const platformDir =
      findPackageDir(platformBinary.packageName, [packageDir, ...starts], searched) ??
      // npm may nest the optional dependency inside the wrapper package.
      (existsSync(join(packageDir, "node_modules", platformBinary.packageName))
        ? join(packageDir, "node_modules", platformBinary.packageName)
        : undefined);
    const candidate = platformDir ? join(platformDir, platformBinary.path) : undefined;
    if (candidate && existsSync(candidate)) return { ...base, command: candidate, args: [], native: true };
  }

  const binField = manifest.bin;
  const binPath = typeof binField === "string" ? binField : binField?.[spec.binName];
  if (!binPath)
    throw new HarnessBinaryNotFoundError(name, searched, `${spec.packageName} declares no "${spec.binName}" bin`);
  const target = resolve(packageDir, binPath);
  if (!existsSync(target)) throw new HarnessBinaryNotFoundError(name, searched, `${target} is missing`);
  if (isNativeExecutable(target)) return { ...base, command: target, args: [], native: true };
  return { ...base, command: process.execPath, args: [target], native: false };
}

function findPackageDir(packageName: string, starts: string[], searched: string[]): string | undefined {
  for (const start of starts) {
    let dir = resolve(start);
    for (;;) {
      const candidate = join(dir, "node_modules", packageName);
      if (!searched.includes(join(dir, "node_modules"))) searched.push(join(dir, "node_modules"));
      if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return undefined;
}

/** True for ELF, Mach-O and PE files (a native binary rather than a script). */
function isNativeExecutable(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const header = Buffer.alloc(4);
    readSync(fd, header, 0, 4, 0);
    const magic = header.readUInt32BE(0);
    return (
      magic === 0x7f454c46 || // ELF
      magic === 0xcffaedfe ||
      magic === 0xcefaedfe ||
      magic === 0xfeedfacf ||
      magic === 0xcafebabe || // Mach-O
      header.subarray(0, 2).toString("latin1") === "MZ"
    );
  } finally {
    closeSync(fd);
  }
}
