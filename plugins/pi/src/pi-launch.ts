import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { McpEndpointGrant, PluginContext, ProviderInstanceDescriptor } from "@switchyard/sdk";
import { EXTENSION_ENV } from "./pi-extension/switchyard-extension.js";
import type { PiOptions } from "./pi-options.js";

/** How to start Pi. */
export interface PiBinary {
  /** The executable (this Node for a `cli.js`). */
  readonly command: string;
  /** Arguments before Pi's own (the `cli.js` path). */
  readonly args: readonly string[];
  /** Where it came from, for messages. */
  readonly source: "option" | "package" | "path";
  /** The package version, when read from an installed package. */
  readonly version?: string;
}

const PI_PACKAGE = "@mariozechner/pi-coding-agent";

/** Variables the adapter owns: inherited values are dropped before its own are set. */
function isOwnedVariable(name: string): boolean {
  return name.startsWith("SWITCHYARD_MCP_") || name.startsWith("SWITCHYARD_PI_");
}

/** Finds the installed Pi package by walking up `node_modules` from this module. */
function findInstalledPi(): PiBinary | null {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, "node_modules", PI_PACKAGE, "package.json");
    if (existsSync(manifest)) {
      const packageDir = realpathSync(path.dirname(manifest));
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { version?: string; bin?: string | Record<string, string> };
      const bin = typeof parsed.bin === "string" ? parsed.bin : parsed.bin?.["pi"];
      if (bin !== undefined) {
        const cli = path.resolve(packageDir, bin);
        // Run the CLI with this Node directly: no npm wrapper between us and Pi, so signals land.
        if (existsSync(cli)) return { command: process.execPath, args: [cli], source: "package", ...(parsed.version ? { version: parsed.version } : {}) };
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * Resolves the Pi CLI: the `piPath` option, else the installed npm package, else `pi` on PATH.
 * Returns null when none is found.
 */
export async function resolvePiBinary(options: PiOptions, context: PluginContext, env: Readonly<Record<string, string | undefined>>): Promise<PiBinary | null> {
  if (options.piPath !== undefined) {
    if (/\.[cm]?js$/.test(options.piPath)) return existsSync(options.piPath) ? { command: process.execPath, args: [options.piPath], source: "option" } : null;
    const found = await context.process.which(options.piPath, env);
    return found === null ? null : { command: found, args: [], source: "option" };
  }
  const installed = findInstalledPi();
  if (installed !== null) return installed;
  const onPath = await context.process.which("pi", env);
  return onPath === null ? null : { command: onPath, args: [], source: "path" };
}

/**
 * The environment Pi runs with, complete (spawned with `extendEnv: false`): the host's and the
 * instance's variables minus every `SWITCHYARD_MCP_*` / `SWITCHYARD_PI_*` they carry, then
 * `PI_CODING_AGENT_DIR` from the instance home, then the adapter's own values.
 */
export function piEnvironment(
  instance: ProviderInstanceDescriptor,
  own: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of [process.env, instance.environment]) {
    for (const [name, value] of Object.entries(source)) {
      if (value === undefined || isOwnedVariable(name)) continue;
      env[name] = value;
    }
  }
  if (instance.homePath !== null) env["PI_CODING_AGENT_DIR"] = instance.homePath;
  return { ...env, ...own };
}

/** The variables that hand the MCP endpoint to the extension. The token travels only here. */
export function mcpEnvironment(grant: McpEndpointGrant | null): Record<string, string> {
  if (grant === null) return {};
  return {
    [EXTENSION_ENV.url]: grant.url,
    [EXTENSION_ENV.token]: grant.token,
    [EXTENSION_ENV.serverName]: grant.serverName,
    [EXTENSION_ENV.toolTimeoutMs]: String(grant.toolTimeoutMs),
  };
}

/** Pi's agent directory for an environment (what Pi itself would use). */
export function piAgentDir(env: Readonly<Record<string, string | undefined>>): string {
  const configured = env["PI_CODING_AGENT_DIR"];
  if (configured !== undefined && configured !== "") {
    return configured.startsWith("~") ? path.join(env["HOME"] ?? os.homedir(), configured.slice(1)) : configured;
  }
  return path.join(env["HOME"] ?? os.homedir(), ".pi", "agent");
}

/** A thread's own session directory inside the agent directory (safe as a file name). */
export function threadSessionDir(agentDir: string, threadId: string): string {
  const safe = threadId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80);
  const suffix = safe === threadId ? "" : `-${createHash("sha256").update(threadId).digest("hex").slice(0, 8)}`;
  return path.join(agentDir, "sessions", "switchyard", `${safe}${suffix}`);
}

/** Everything one Pi process is started with. */
export interface PiLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** Builds Pi's argv: RPC mode, session files, model, the Switchyard extension, extra args, thinking level. */
export function piArgs(input: {
  readonly binary: PiBinary;
  readonly options: PiOptions;
  readonly sessionDir: string;
  readonly sessionFile: string | null;
  readonly model: string | null;
  /** The thinking level (a turn's effort), or null for the session's or Pi's default. */
  readonly thinking?: string | null;
  readonly extensionPath: string;
}): string[] {
  const args = [...input.binary.args, "--mode", "rpc"];
  if (input.options.offline) args.push("--offline");
  args.push("--session-dir", input.sessionDir);
  if (input.sessionFile !== null) args.push("--session", input.sessionFile);
  if (input.model !== null) args.push("--model", input.model);
  args.push("--extension", input.extensionPath);
  args.push(...input.options.extraArgs);
  // After extraArgs, so the effort a turn asked for wins over an instance's `--thinking`. A
  // launch flag, not set_thinking_level, which would also rewrite the user's settings.json.
  if (input.thinking != null) args.push("--thinking", input.thinking);
  return args;
}
