import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { HarnessHome, HarnessMcpServer } from "./sandbox.js";
import { DUMMY_API_KEY, createHarnessSandbox, openAiBaseUrl } from "./sandbox.js";

/** Options for {@link createOpenCodeHome}. */
export interface OpenCodeHomeOptions {
  /** The scripted model server URL (`server.url`). */
  modelServerUrl: string;
  /** MCP servers by name; tools appear as `<name>_<tool>`. */
  mcpServers?: Record<string, HarnessMcpServer>;
  /** Model id under the `fake` provider (default `fake-model`). */
  modelId?: string;
  /** Extra top-level opencode.json entries (merged shallowly). */
  config?: Record<string, unknown>;
}

/** An OpenCode home: config in `OPENCODE_CONFIG_CONTENT`, XDG dirs and a clean cwd. */
export interface OpenCodeHome extends HarnessHome {
  harness: "opencode";
  /** The opencode.json content. */
  config: Record<string, unknown>;
  /** The same config written to a file outside `cwd` (for `OPENCODE_CONFIG` or the SDK's `config`). */
  configPath: string;
  /** The `provider/model` id. */
  model: string;
}

/**
 * Creates an isolated OpenCode setup: a `fake` provider through `@ai-sdk/openai-compatible`
 * (Chat Completions), permissions that allow bash and edits, and the config passed as
 * `OPENCODE_CONFIG_CONTENT`, which wins over any opencode.json OpenCode finds walking up from the
 * cwd. XDG dirs hold its sqlite db and logs (`$XDG_DATA_HOME/opencode/log/`).
 * Exercised against the real binary by plugins/opencode's tests (which pass `configPath` as the
 * instance's `configFile`; the plugin sets its own data dirs and config content).
 */
export async function createOpenCodeHome(options: OpenCodeHomeOptions): Promise<OpenCodeHome> {
  const sandbox = await createHarnessSandbox("opencode");
  const modelId = options.modelId ?? "fake-model";
  const mcp: Record<string, unknown> = {};
  for (const [name, server] of Object.entries(options.mcpServers ?? {})) {
    const headers = {
      ...server.headers,
      ...(server.bearerToken !== undefined ? { Authorization: `Bearer ${server.bearerToken}` } : {}),
    };
    mcp[name] = {
      type: "remote",
      url: server.url,
      enabled: true,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
  }
  const config: Record<string, unknown> = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake",
        options: { baseURL: openAiBaseUrl(options.modelServerUrl), apiKey: DUMMY_API_KEY },
        models: { [modelId]: { name: "Fake Model", tool_call: true } },
      },
    },
    model: `fake/${modelId}`,
    small_model: `fake/${modelId}`,
    autoupdate: false,
    share: "disabled",
    permission: { bash: "allow", edit: "allow" },
    ...(Object.keys(mcp).length > 0 ? { mcp } : {}),
    ...options.config,
  };
  const configPath = join(sandbox.root, "opencode.json");
  await writeFile(configPath, JSON.stringify(config, null, 2));
  return {
    harness: "opencode",
    root: sandbox.root,
    home: sandbox.xdg.config,
    cwd: sandbox.cwd,
    env: {
      ...sandbox.env,
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
    },
    cleanup: sandbox.cleanup,
    config,
    configPath,
    model: `fake/${modelId}`,
  };
}
