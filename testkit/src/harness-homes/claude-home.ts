import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { HarnessHome, HarnessMcpServer } from "./sandbox.js";
import { DUMMY_API_KEY, createHarnessSandbox, isRoot, serverOrigin } from "./sandbox.js";

/** Options for {@link createClaudeHome}. */
export interface ClaudeHomeOptions {
  /** The scripted model server URL (`server.url`). */
  modelServerUrl: string;
  /** MCP servers by name; tools appear as `mcp__<name>__<tool>`. */
  mcpServers?: Record<string, HarnessMcpServer>;
  /** `ANTHROPIC_MODEL` (default: the CLI's own default, e.g. `claude-opus-4-8` for 2.1.197). */
  model?: string;
  /**
   * Leave MCP tools deferred behind `ToolSearch` (Agent SDK ≥0.3 default). Default false:
   * `ENABLE_TOOL_SEARCH=false` puts MCP tools straight into `tools[]`, which the script can call.
   */
  toolSearch?: boolean;
}

/** A Claude Code home: `CLAUDE_CONFIG_DIR` plus env pointing at the scripted server. */
export interface ClaudeHome extends HarnessHome {
  harness: "claude";
  /** The `--mcp-config` file written for `mcpServers`, if any. */
  mcpConfigPath?: string;
  /**
   * Arguments for `claude -p`: `--output-format stream-json --verbose`, plus
   * `--mcp-config <file> --strict-mcp-config --allowedTools Bash,mcp__<name>…` when MCP servers are set.
   */
  args: string[];
}

/**
 * Creates an isolated `CLAUDE_CONFIG_DIR` and the env Claude Code needs offline:
 * `ANTHROPIC_BASE_URL`, a dummy `ANTHROPIC_API_KEY`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`
 * (one model request per step, no side traffic), no autoupdater/telemetry, and `IS_SANDBOX=1`
 * when running as root (otherwise permission bypass and the ACP adapters refuse to run).
 * Not exercised against a real binary in this repo (Claude Code is not a devDependency here).
 */
export async function createClaudeHome(options: ClaudeHomeOptions): Promise<ClaudeHome> {
  const sandbox = await createHarnessSandbox("claude");
  const configDir = join(sandbox.root, "claude-config");
  await mkdir(configDir, { recursive: true });
  const env: Record<string, string> = {
    ...sandbox.env,
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: serverOrigin(options.modelServerUrl),
    ANTHROPIC_API_KEY: DUMMY_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  if (!options.toolSearch) env["ENABLE_TOOL_SEARCH"] = "false";
  if (isRoot()) env["IS_SANDBOX"] = "1";
  if (options.model) env["ANTHROPIC_MODEL"] = options.model;

  const args = ["--output-format", "stream-json", "--verbose"];
  let mcpConfigPath: string | undefined;
  const servers = Object.entries(options.mcpServers ?? {});
  if (servers.length > 0) {
    mcpConfigPath = join(configDir, "mcp.json");
    const mcpServers: Record<string, unknown> = {};
    for (const [name, server] of servers) {
      const headers = {
        ...server.headers,
        ...(server.bearerToken !== undefined ? { Authorization: `Bearer ${server.bearerToken}` } : {}),
      };
      mcpServers[name] = { type: "http", url: server.url, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
    }
    await writeFile(mcpConfigPath, JSON.stringify({ mcpServers }, null, 2));
    args.push(
      "--mcp-config",
      mcpConfigPath,
      "--strict-mcp-config",
      "--allowedTools",
      ["Bash", ...servers.map(([name]) => `mcp__${name}`)].join(","),
    );
  }
  return {
    harness: "claude",
    root: sandbox.root,
    home: configDir,
    cwd: sandbox.cwd,
    env,
    cleanup: sandbox.cleanup,
    ...(mcpConfigPath !== undefined ? { mcpConfigPath } : {}),
    args,
  };
}
