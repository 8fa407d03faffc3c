import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  findHarness,
  type FoundHarness,
  type HarnessSearch,
  type HarnessSource,
  type HarnessSpec,
  type McpEndpointGrant,
  type OpenSessionInput,
  type PluginContext,
  type ProviderInstanceDescriptor,
} from "@switchyard/sdk";
import { EXTENSION_ENV } from "./pi-extension/switchyard-extension.js";
import type { PiOptions } from "./pi-options.js";

/**
 * Pi as this plugin looks for it (data for the sdk's harness search). Pi moved to
 * `@earendil-works/pi-coding-agent` (1.x now); the old `@mariozechner/pi-coding-agent` stopped
 * at 0.73.1 and is still found, after the new one. Tested with 1.x; the old line still
 * works (the extension and the session detect what 0.99 added: tool exposure and `tool_search`,
 * `agent_settled`, acknowledgement dispositions) and is reported outside the tested range, with
 * the command that installs the new package. No release is known to speak a different RPC
 * protocol, so none is refused.
 */
export const PI_HARNESS: HarnessSpec = {
  displayName: "Pi",
  option: "piPath",
  commands: ["pi"],
  packages: ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"],
  install: "npm i -g @earendil-works/pi-coding-agent",
  testedVersions: "^1.6.0",
};

/** How to start Pi. */
export interface PiBinary {
  /** The executable (this Node for a `cli.js`). */
  readonly command: string;
  /** Arguments before Pi's own (the `cli.js` path). */
  readonly args: readonly string[];
  /** Where it was found: the instance options, PATH, a global or a local npm package. */
  readonly source: HarnessSource;
  /** The package version, when it runs from an installed package. */
  readonly version?: string;
}

/** Variables the adapter owns: inherited values are dropped before its own are set. */
function isOwnedVariable(name: string): boolean {
  return name.startsWith("SWITCHYARD_MCP_") || name.startsWith("SWITCHYARD_PI_");
}

const isScript = (file: string) => /\.[cm]?js$/.test(file);

/**
 * How a found Pi is started. A package's `cli.js` (also behind an npm bin link on PATH) runs
 * with this Node directly: no npm wrapper or `env node` between the host and Pi, so signals
 * land; a `.js` in the options likewise; any other executable runs as it is.
 */
function launchOf(found: FoundHarness): PiBinary | null {
  if (
    found.packageDir !== null &&
    found.command !== null &&
    (found.source === "global" || found.source === "local" || isScript(realpathSync(found.command)))
  ) {
    return {
      command: process.execPath,
      args: [realpathSync(found.command)],
      source: found.source,
      ...(found.packageVersion !== null ? { version: found.packageVersion } : {}),
    };
  }
  if (found.command === null) return null;
  if (isScript(found.command)) return { command: process.execPath, args: [found.command], source: found.source };
  return { command: found.command, args: [], source: found.source };
}

/** What a search for Pi found: where it looked, and how to start what it found. */
export interface PiLookup {
  readonly search: HarnessSearch;
  readonly binary: PiBinary | null;
}

/**
 * Finds Pi the way every plugin finds its harness (the sdk's `findHarness`): the `piPath`
 * option, else `pi` on PATH, else the npm package installed globally, else next to the plugin.
 */
export async function findPi(
  options: PiOptions,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<PiLookup> {
  const search = await findHarness(PI_HARNESS, {
    configured: options.piPath,
    env,
    context,
    from: import.meta.url,
    usable: (found) => (launchOf(found) === null ? "the package has no `pi` bin" : null),
  });
  return { search, binary: search.found === null ? null : launchOf(search.found) };
}

/** {@link findPi}'s binary alone; null when Pi is nowhere. */
export async function resolvePiBinary(
  options: PiOptions,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<PiBinary | null> {
  return (await findPi(options, context, env)).binary;
}

/**
 * The environment Pi runs with, complete (spawned with `extendEnv: false`): the host's, the
 * instance's and a session's profile variables minus every `SWITCHYARD_MCP_*` /
 * `SWITCHYARD_PI_*` they carry, then `PI_CODING_AGENT_DIR` from the profile's harness home or
 * else the instance home, then the adapter's own values.
 */
export function piEnvironment(
  instance: ProviderInstanceDescriptor,
  own: Readonly<Record<string, string>>,
  session: Pick<OpenSessionInput, "environment" | "harnessHome"> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of [process.env, instance.environment, session.environment ?? {}]) {
    for (const [name, value] of Object.entries(source)) {
      if (value === undefined || isOwnedVariable(name)) continue;
      env[name] = value;
    }
  }
  const home = session.harnessHome ?? instance.homePath;
  if (home !== null) env["PI_CODING_AGENT_DIR"] = home;
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
