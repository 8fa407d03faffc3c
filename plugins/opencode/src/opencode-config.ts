import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  SwitchyardError,
  type ExtraMcpServer,
  type McpEndpointGrant,
  type ProviderInstanceDescriptor,
  type RuntimeMode,
  type ToolRules,
} from "@switchyard/sdk";
import { parseJsonc } from "./jsonc.js";
import type { OpenCodeOptions } from "./opencode-options.js";
import { openCodeMcpEntries, permissionWithRules } from "./opencode-tool-rules.js";

/**
 * The variable that carries a session's Switchyard token into its OpenCode server. The config
 * names it (`{env:…}`, which OpenCode substitutes when it loads the config), so the token is in
 * no config text, argv or file: only in that one server's environment.
 */
export const MCP_TOKEN_ENV = "SWITCHYARD_OPENCODE_MCP_TOKEN";

/** Names the provider session a server serves (not a secret: for operators and tests reading /proc). */
export const PROVIDER_SESSION_ENV = "SWITCHYARD_OPENCODE_PROVIDER_SESSION";

/** OpenCode variables the adapter owns: inherited values are dropped before its own are set. */
const OWNED_VARIABLES = [
  "OPENCODE_CONFIG_CONTENT",
  "OPENCODE_CONFIG",
  "OPENCODE_CONFIG_DIR",
  "OPENCODE_DB",
  "OPENCODE_SERVER_USERNAME",
  "OPENCODE_SERVER_PASSWORD",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  "XDG_CACHE_HOME",
];

/** Host variables that never reach a harness: Switchyard's own settings and credentials. */
const HOST_ONLY_PREFIX = "SWITCHYARD_";

/** Where one instance keeps OpenCode's state: its sqlite db (every conversation), logs, caches. */
export interface InstanceDirectories {
  readonly root: string;
  readonly data: string;
  readonly state: string;
  readonly cache: string;
}

/** The instance's directories under the plugin's data directory (`<home>/…/instances/<id>`). */
export function instanceDirectories(dataDir: string, instanceId: string): InstanceDirectories {
  const root = path.join(dataDir, "instances", instanceId.replace(/[^A-Za-z0-9._-]/g, "_"));
  return {
    root,
    data: path.join(root, "xdg", "data"),
    state: path.join(root, "xdg", "state"),
    cache: path.join(root, "xdg", "cache"),
  };
}

/**
 * The user's opencode.json: a session's harness home's (a profile's `harnessHome`, which is
 * that session's whole OpenCode config), else `configFile`, else `<homePath>/opencode.json`,
 * else OpenCode's global config.
 */
export function userConfigPath(
  options: OpenCodeOptions,
  instance: ProviderInstanceDescriptor,
  env: Readonly<Record<string, string | undefined>>,
  harnessHome: string | null = null,
): string {
  if (harnessHome !== null) return path.join(harnessHome, "opencode.json");
  if (options.configFile !== undefined) return options.configFile;
  if (instance.homePath !== null) return path.join(instance.homePath, "opencode.json");
  const configHome = env["XDG_CONFIG_HOME"] || path.join(env["HOME"] || os.homedir(), ".config");
  return path.join(configHome, "opencode", "opencode.json");
}

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `{file:./x}` references in the user's config are relative to its file, but the merged config
 * travels as text with no file: make them absolute.
 */
function absoluteFileReferences(value: unknown, baseDir: string): unknown {
  if (typeof value === "string") {
    return value.replace(/\{file:([^}]+)\}/g, (whole, ref: string) =>
      ref.startsWith("~") || path.isAbsolute(ref) ? whole : `{file:${path.resolve(baseDir, ref)}}`,
    );
  }
  if (Array.isArray(value)) return value.map((entry) => absoluteFileReferences(entry, baseDir));
  if (isRecord(value))
    return Object.fromEntries(
      Object.entries(value).map(([key, entry]) => [key, absoluteFileReferences(entry, baseDir)]),
    );
  return value;
}

/**
 * Reads the user's OpenCode config (`.json`, or the `.jsonc` beside it). A missing file is an
 * empty config; a malformed one is `config_invalid`, naming the file.
 */
export async function readUserConfig(file: string): Promise<{ readonly config: Json; readonly path: string | null }> {
  const candidates = file.endsWith(".json") ? [file, `${file}c`] : [file];
  for (const candidate of candidates) {
    let text: string;
    try {
      text = await readFile(candidate, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new SwitchyardError(
        "config_invalid",
        `The OpenCode config "${candidate}" cannot be read: ${(error as Error).message}`,
        { path: candidate },
      );
    }
    let parsed: unknown;
    try {
      parsed = parseJsonc(text);
    } catch (error) {
      throw new SwitchyardError(
        "config_invalid",
        `The OpenCode config "${candidate}" is not valid JSON: ${(error as Error).message}. Fix the file or point the instance's configFile elsewhere.`,
        {
          path: candidate,
        },
      );
    }
    if (!isRecord(parsed))
      throw new SwitchyardError("config_invalid", `The OpenCode config "${candidate}" must be a JSON object.`, {
        path: candidate,
      });
    return { config: absoluteFileReferences(parsed, path.dirname(candidate)) as Json, path: candidate };
  }
  return { config: {}, path: null };
}

/**
 * Runtime mode → OpenCode's `permission` setting (what asks, what runs). It applies to every
 * session of the server, so OpenCode's own sub-agents (the `task` tool's child sessions, which
 * do not inherit a session's rules) obey it too.
 * - `approval-required`: shell commands, edits and web access ask; the Switchyard tools never
 *   ask (a blocking wait must not wait for an approval first).
 * - `auto-accept-edits`: edits run; shell commands and web access ask.
 * - `full-access`: nothing asks.
 * Checked against opencode 1.18.33: a `"*"` key beats specific ones there, so none is used
 * beside them.
 */
export function permissionForMode(mode: RuntimeMode, mcpServerName: string | null): string | Json {
  if (mode === "full-access") return "allow";
  const switchyardTools = mcpServerName !== null ? { [`${mcpServerName}_*`]: "allow" } : {};
  return {
    bash: "ask",
    edit: mode === "auto-accept-edits" ? "allow" : "ask",
    webfetch: "ask",
    websearch: "ask",
    ...switchyardTools,
  };
}

/** What the adapter sets in every server's config. */
export interface SwitchyardEntries {
  readonly runtimeMode: RuntimeMode;
  /** The session's MCP grant (its token travels in {@link MCP_TOKEN_ENV}), or null. */
  readonly grant: McpEndpointGrant | null;
  /** A profile's tool rules, laid over the runtime mode's permission. */
  readonly toolRules?: ToolRules | null;
  /** A profile's extra MCP servers (Switchyard's own wins a name both use). */
  readonly mcpServers?: Readonly<Record<string, ExtraMcpServer>>;
}

/**
 * The config a server runs with: the user's config with Switchyard's entries over it. `mcp`
 * keeps the user's other servers; `permission` is the runtime mode's alone (the mode is the
 * contract). It travels as
 * `OPENCODE_CONFIG_CONTENT`, which wins over any opencode.json OpenCode finds walking up from
 * the working directory.
 */
export function serverConfig(user: Json, entries: SwitchyardEntries): Json {
  const config: Json = { ...user, autoupdate: false, share: "disabled" };
  const extra = openCodeMcpEntries(entries.mcpServers);
  if (Object.keys(extra).length > 0) config["mcp"] = { ...(isRecord(user["mcp"]) ? user["mcp"] : {}), ...extra };
  if (entries.grant !== null) {
    config["mcp"] = {
      ...(isRecord(config["mcp"]) ? config["mcp"] : {}),
      [entries.grant.serverName]: {
        type: "remote",
        url: entries.grant.url,
        enabled: true,
        // A 401 is a wrong token, never an OAuth login to start.
        oauth: false,
        // Tool calls may block as long as the server's longest wait; OpenCode's default is 60 s.
        timeout: entries.grant.toolTimeoutMs,
        headers: { Authorization: `Bearer {env:${MCP_TOKEN_ENV}}` },
      },
    };
  }
  config["permission"] = permissionWithRules(
    permissionForMode(entries.runtimeMode, entries.grant?.serverName ?? null),
    entries.toolRules,
  );
  return config;
}

/** The MCP server keys of a config (tools are named `<key>_<tool>`), longest first. */
export function mcpServerKeys(config: Json): string[] {
  return isRecord(config["mcp"]) ? Object.keys(config["mcp"]).sort((a, b) => b.length - a.length) : [];
}

/**
 * The complete environment of an OpenCode server (spawned with `extendEnv: false`): the host's
 * variables without Switchyard's own and without the OpenCode ones the adapter owns, then the
 * instance's `environment` (API keys, a gateway) and a profile's, then the adapter's values:
 * isolated data, state and cache directories (the config directory stays the user's, or is a
 * profile's harness home in `OPENCODE_CONFIG_DIR`), the config content and the session's token.
 */
export function serverEnvironment(
  instance: ProviderInstanceDescriptor,
  own: Readonly<Record<string, string>>,
  hostEnv: Readonly<Record<string, string | undefined>> = process.env,
  profileEnvironment: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(hostEnv)) {
    if (value === undefined || name.startsWith(HOST_ONLY_PREFIX) || OWNED_VARIABLES.includes(name)) continue;
    env[name] = value;
  }
  // A profile's environment goes over the instance's; the adapter's own values still win.
  for (const [name, value] of [...Object.entries(instance.environment), ...Object.entries(profileEnvironment)]) {
    if (name.startsWith(HOST_ONLY_PREFIX)) continue;
    env[name] = value;
  }
  return { ...env, OPENCODE_DISABLE_AUTOUPDATE: "1", ...own };
}
