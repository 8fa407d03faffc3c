import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { HarnessHome, HarnessMcpServer } from "./sandbox.js";
import { DUMMY_API_KEY, createHarnessSandbox, openAiBaseUrl } from "./sandbox.js";
import type { TomlValue } from "./toml.js";
import { tomlKey, tomlLines } from "./toml.js";

/** An MCP server for Codex, with Codex-specific knobs. */
export interface CodexMcpServer extends HarnessMcpServer {
  /** `tool_timeout_sec` (Codex default 60). */
  toolTimeoutSec?: number;
  /**
   * `default_tools_approval_mode` (default `"approve"`): with `approval_policy = "never"` and no
   * mode, Codex refuses MCP calls ("MCP tool call requires approval, but approval policy is never").
   */
  approvalMode?: "auto" | "prompt" | "writes" | "approve";
}

/** Options for {@link createCodexHome}. */
export interface CodexHomeOptions {
  /** The scripted model server URL (`server.url`; a trailing `/v1` is fine). */
  modelServerUrl: string;
  /**
   * Model slug (default `fake-model`). Keep an unknown slug when MCP tools are involved: with a
   * known slug Codex 0.171 hides MCP tools behind the Responses `tool_search` tool, which the
   * scripted server does not play. The unknown slug costs only a "Model metadata … not found" warning.
   */
  model?: string;
  /** MCP servers by name (Codex offers their tools as namespace `mcp__<name>`). */
  mcpServers?: Record<string, CodexMcpServer>;
  /** `approval_policy` (default `never`). */
  approvalPolicy?: "never" | "on-request" | "on-failure" | "untrusted";
  /** `sandbox_mode` (default `danger-full-access`; no bubblewrap needed). */
  sandboxMode?: "danger-full-access" | "workspace-write" | "read-only";
  /** Provider `request_max_retries` (default 0, so `@@fail` fails at once instead of after backoff). */
  requestMaxRetries?: number;
  /** Provider `stream_max_retries` (default 0). */
  streamMaxRetries?: number;
  /** Raw TOML appended to config.toml. */
  extraToml?: string;
}

/** A Codex home: `CODEX_HOME` with config.toml and a custom `fake` provider. */
export interface CodexHome extends HarnessHome {
  harness: "codex";
  /** Path of the written config.toml. */
  configPath: string;
  /** The model slug configured. */
  model: string;
  /** The custom provider id (`fake`). */
  providerId: string;
  /** The env var the provider reads its (dummy) key from. */
  apiKeyEnvVar: string;
  /**
   * Arguments for a one-shot turn: `exec --skip-git-repo-check --json <prompt>`. Spawn with
   * stdin closed (`spawnHarness`'s default), or `codex exec` waits for EOF on stdin.
   */
  execArgs(prompt: string, extra?: readonly string[]): string[];
}

/** The env var Codex reads the dummy provider key from. */
export const CODEX_API_KEY_ENV = "SWITCHYARD_FAKE_API_KEY";

/**
 * Creates an isolated `CODEX_HOME` whose config.toml points Codex at the scripted server through a
 * custom provider (`wire_api = "responses"`; custom providers never try the WebSocket transport).
 */
export async function createCodexHome(options: CodexHomeOptions): Promise<CodexHome> {
  const sandbox = await createHarnessSandbox("codex");
  const codexHome = join(sandbox.root, "codex-home");
  await mkdir(codexHome, { recursive: true });
  const model = options.model ?? "fake-model";
  const providerId = "fake";
  const env: Record<string, string> = { ...sandbox.env, CODEX_HOME: codexHome, [CODEX_API_KEY_ENV]: DUMMY_API_KEY };

  const sections: string[] = [
    tomlLines({
      model,
      model_provider: providerId,
      approval_policy: options.approvalPolicy ?? "never",
      sandbox_mode: options.sandboxMode ?? "danger-full-access",
    }),
    `[model_providers.${providerId}]\n${tomlLines({
      name: providerId,
      base_url: openAiBaseUrl(options.modelServerUrl),
      env_key: CODEX_API_KEY_ENV,
      wire_api: "responses",
      request_max_retries: options.requestMaxRetries ?? 0,
      stream_max_retries: options.streamMaxRetries ?? 0,
    })}`,
  ];
  for (const [name, server] of Object.entries(options.mcpServers ?? {})) {
    const entries: Record<string, TomlValue | undefined> = {
      url: server.url,
      default_tools_approval_mode: server.approvalMode ?? "approve",
      tool_timeout_sec: server.toolTimeoutSec,
    };
    if (server.bearerToken !== undefined) {
      const tokenVar = `SWITCHYARD_MCP_TOKEN_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
      env[tokenVar] = server.bearerToken;
      entries["bearer_token_env_var"] = tokenVar;
    }
    if (server.headers) entries["http_headers"] = server.headers;
    sections.push(`[mcp_servers.${tomlKey(name)}]\n${tomlLines(entries)}`);
  }
  sections.push(`[projects.${tomlKey(sandbox.cwd)}]\n${tomlLines({ trust_level: "trusted" })}`);
  if (options.extraToml) sections.push(options.extraToml);
  const configPath = join(codexHome, "config.toml");
  await writeFile(configPath, `${sections.join("\n\n")}\n`);

  return {
    harness: "codex",
    root: sandbox.root,
    home: codexHome,
    cwd: sandbox.cwd,
    env,
    cleanup: sandbox.cleanup,
    configPath,
    model,
    providerId,
    apiKeyEnvVar: CODEX_API_KEY_ENV,
    execArgs: (prompt, extra = []) => ["exec", "--skip-git-repo-check", "--json", ...extra, prompt],
  };
}
