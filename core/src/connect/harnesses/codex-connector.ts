import { join } from "node:path";
import { parseTomlDocument, setTomlTables, tomlValueAt } from "../toml-table-edit.js";
import { userHome, type ConnectionTarget, type EntrySpec, type HarnessConnector } from "../harness-connector.js";

/** Seconds Codex waits for the server to start (its default is 10). */
const STARTUP_TIMEOUT_SEC = 20;
/** Headroom over the longest blocking wait, so the server's own pending answer arrives first. */
const TOOL_TIMEOUT_HEADROOM_SEC = 30;
/** The blocking wait that must reach the model as a direct tool (never deferred, never in Code Mode). */
const DIRECT_TOOLS = ["t3_thread_wait"];

function codexHome(target: ConnectionTarget): string {
  const home = target.env.CODEX_HOME;
  return home !== undefined && home !== "" ? home : join(userHome(target.env), ".codex");
}

function directName(serverName: string): string {
  return `${serverName}-direct`;
}

/**
 * The two tables plugins/codex gives a session: `<key>` with every tool but the blocking wait,
 * and `<key>-direct` with only that one, offered as a direct tool call. Both read the token
 * from the environment variable `bearer_token_env_var` names.
 */
function tables(spec: EntrySpec): Record<string, Record<string, unknown>> {
  const common = {
    url: spec.url,
    bearer_token_env_var: spec.envVar,
    startup_timeout_sec: STARTUP_TIMEOUT_SEC,
    tool_timeout_sec: Math.ceil(spec.toolTimeoutMs / 1000) + TOOL_TIMEOUT_HEADROOM_SEC,
    // As plugins/codex: without it, a headless `codex exec` (approval policy "never") refuses
    // every tool that is not read-only ("MCP tool call requires approval"). What the token may
    // do is still the token's: its verbs, projects and mode ceiling.
    default_tools_approval_mode: "approve",
  };
  return {
    [spec.serverName]: { ...common, disabled_tools: DIRECT_TOOLS },
    [directName(spec.serverName)]: {
      ...common,
      enabled_tools: DIRECT_TOOLS,
      omit_tools_from: ["code_mode", "deferred"],
    },
  };
}

/**
 * Codex: `[mcp_servers.<key>]` and `[mcp_servers.<key>-direct]` in `$CODEX_HOME/config.toml`
 * (user) or `.codex/config.toml` (project), edited as text so the user's comments and other
 * tables stay; the token comes from the environment variable the entry names.
 */
export const codexConnector: HarnessConnector = {
  id: "codex",
  displayName: "Codex",
  tokenDelivery: "env",
  configFile: (target) =>
    target.scope === "project"
      ? join(target.projectDir, ".codex", "config.toml")
      : join(codexHome(target), "config.toml"),
  secretContent: (token) => token,
  tokenFromSecret: (text) => text.trim() || null,
  secretSuffix: ".token",
  apply(current, spec) {
    const comment = [
      `Written by \`switchyard connect codex\`; the token is read from $${spec.envVar} (\`switchyard connections\` says where).`,
    ];
    return setTomlTables(
      current ?? "",
      Object.entries(tables(spec)).map(([name, values]) => ({ path: ["mcp_servers", name], values, comment })),
    );
  },
  remove(current, spec) {
    return setTomlTables(
      current,
      [spec.serverName, directName(spec.serverName)].map((name) => ({ path: ["mcp_servers", name], values: null })),
    );
  },
  read(current, spec) {
    parseTomlDocument(current);
    const main = tomlValueAt(current, ["mcp_servers", spec.serverName]);
    const direct = tomlValueAt(current, ["mcp_servers", directName(spec.serverName)]);
    return main === undefined && direct === undefined
      ? undefined
      : { [spec.serverName]: main, [directName(spec.serverName)]: direct };
  },
  expected: (spec) => tables(spec),
  checkEnvironment: (target): Record<string, string> =>
    target.scope === "user" ? { CODEX_HOME: codexHome(target) } : {},
  selfCheck: () => ({
    command: "codex",
    args: ["mcp", "list", "--json"],
    interpret({ stdout, stderr, exitCode }, serverName) {
      if (exitCode !== 0) return { ok: false, detail: `failed: ${(stderr || stdout).trim().split("\n").at(-1) ?? ""}` };
      let servers: {
        name?: string;
        enabled?: boolean;
        transport?: { url?: string; bearer_token_env_var?: string | null };
        auth_status?: string;
      }[];
      try {
        servers = JSON.parse(stdout) as typeof servers;
      } catch {
        return { ok: false, detail: "its output is not the JSON list it prints" };
      }
      const names = [serverName, directName(serverName)];
      const found = names.map((name) => servers.find((server) => server.name === name));
      if (found.some((server) => server === undefined))
        return {
          ok: false,
          detail: `it does not list ${names.filter((_, i) => found[i] === undefined).join(" and ")}`,
        };
      const off = found.filter((server) => server!.enabled !== true);
      if (off.length > 0) return { ok: false, detail: `${off.map((server) => server!.name).join(", ")} disabled` };
      return {
        ok: true,
        detail: found
          .map(
            (server) =>
              `${server!.name} enabled at ${server!.transport?.url} (token from $${server!.transport?.bearer_token_env_var}, auth ${server!.auth_status})`,
          )
          .join("; "),
      };
    },
  }),
};
