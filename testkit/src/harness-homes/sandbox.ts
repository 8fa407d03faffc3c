import { mkdtemp, mkdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, isAbsolute } from "node:path";

/** An MCP server a harness home should connect to (Streamable HTTP). */
export interface HarnessMcpServer {
  /** The endpoint, e.g. `http://127.0.0.1:4000/mcp`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>` (Codex reads it from an env var the home sets). */
  bearerToken?: string;
  /** Extra HTTP headers (not supported by every harness; see each home). */
  headers?: Record<string, string>;
}

/** The isolated directories and base environment every harness home is built on. */
export interface HarnessSandbox {
  /** The temporary root; everything below is removed by `cleanup`. */
  root: string;
  /** Used as `HOME` (and `USERPROFILE`), so the user's own dotfiles are never read or written. */
  homeDir: string;
  /** A clean, empty working directory for the harness (no AGENTS.md / opencode.json above it but the temp root). */
  cwd: string;
  /** `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_CACHE_HOME`, `XDG_STATE_HOME`, all inside `root`. */
  xdg: { config: string; data: string; cache: string; state: string };
  /** Used as `TMPDIR`, inside `root`. */
  tmp: string;
  /**
   * The base environment: `PATH` and locale from the parent, everything else pointing into the
   * sandbox. Nothing else is inherited (no real API keys, no NODE_OPTIONS).
   */
  env: Record<string, string>;
  /** Removes `root` (idempotent). */
  cleanup(): Promise<void>;
}

/** What every harness home returns. */
export interface HarnessHome {
  /** Which harness the home is for. */
  harness: "codex" | "pi" | "claude" | "opencode" | "gemini" | "cursor";
  /** The temporary root (removed by `cleanup`). */
  root: string;
  /** The harness's own config directory (CODEX_HOME, PI_CODING_AGENT_DIR, CLAUDE_CONFIG_DIR, …). */
  home: string;
  /** A clean working directory to run the harness in. */
  cwd: string;
  /** The complete environment to spawn the harness with (not merged with `process.env`). */
  env: Record<string, string>;
  /** Removes every file the home and the harness wrote. */
  cleanup(): Promise<void>;
}

/** Environment variables copied from the parent process (nothing else is). */
export const INHERITED_ENV_VARS: readonly string[] = [
  "PATH",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "SystemRoot",
  "ComSpec",
  "PATHEXT",
];

/** The dummy credential every home uses: no real key is ever needed against the scripted server. */
export const DUMMY_API_KEY = "sk-switchyard-testkit-dummy";

/**
 * Creates a temporary root under `os.tmpdir()` with its own HOME, XDG directories, TMPDIR and
 * a clean working directory.
 */
export async function createHarnessSandbox(label: string): Promise<HarnessSandbox> {
  const base = await realpath(tmpdir());
  const root = await mkdtemp(join(base, `switchyard-${label}-`));
  const homeDir = join(root, "home");
  const cwd = join(root, "work");
  const tmp = join(root, "tmp");
  const xdg = {
    config: join(root, "xdg", "config"),
    data: join(root, "xdg", "data"),
    cache: join(root, "xdg", "cache"),
    state: join(root, "xdg", "state"),
  };
  for (const dir of [homeDir, cwd, tmp, ...Object.values(xdg)]) await mkdir(dir, { recursive: true });
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV_VARS) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env["LANG"] ??= "C.UTF-8";
  Object.assign(env, {
    HOME: homeDir,
    USERPROFILE: homeDir,
    XDG_CONFIG_HOME: xdg.config,
    XDG_DATA_HOME: xdg.data,
    XDG_CACHE_HOME: xdg.cache,
    XDG_STATE_HOME: xdg.state,
    TMPDIR: tmp,
    NO_COLOR: "1",
    TERM: "dumb",
  });
  let removed = false;
  return {
    root,
    homeDir,
    cwd,
    xdg,
    tmp,
    env,
    async cleanup() {
      if (removed) return;
      removed = true;
      // Never remove anything outside the temp dir, whatever happened to `root`.
      const rel = relative(base, root);
      if (rel === "" || rel.startsWith("..") || isAbsolute(rel) || !rel.startsWith("switchyard-")) {
        throw new Error(`refusing to remove ${root}: not a switchyard temp dir under ${base}`);
      }
      await rm(root, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
    },
  };
}

/** `http://127.0.0.1:1234` or `…/v1` → `http://127.0.0.1:1234` (no trailing slash, no `/v1`). */
export function serverOrigin(modelServerUrl: string): string {
  return modelServerUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** The OpenAI-style base URL (`<origin>/v1`). */
export function openAiBaseUrl(modelServerUrl: string): string {
  return `${serverOrigin(modelServerUrl)}/v1`;
}

/** True when running as root (Claude Code then needs `IS_SANDBOX=1` for permission bypass). */
export function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}
