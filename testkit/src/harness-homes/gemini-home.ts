import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { HarnessHome, HarnessMcpServer } from "./sandbox.js";
import { DUMMY_API_KEY, createHarnessSandbox, serverOrigin } from "./sandbox.js";

/** Options for {@link createGeminiHome}. */
export interface GeminiHomeOptions {
  /** The scripted model server URL (`server.url`; must be on localhost / 127.0.0.1, or https). */
  modelServerUrl: string;
  /** MCP servers by name (trusted, so no confirmation); tools appear as `mcp_<name>_<tool>`. */
  mcpServers?: Record<string, HarnessMcpServer>;
  /** Extra settings.json entries (merged shallowly). */
  settings?: Record<string, unknown>;
}

/** A Gemini CLI home: `GEMINI_CLI_HOME` with `.gemini/settings.json`. */
export interface GeminiHome extends HarnessHome {
  harness: "gemini";
  /** Path of the written settings.json. */
  settingsPath: string;
  /**
   * Arguments for a headless turn: `-y` (yolo: shell and MCP tools run without a prompt),
   * `-o json` (one JSON object with `response`), `-p <prompt>`.
   */
  promptArgs(prompt: string, extra?: readonly string[]): string[];
}

/**
 * Creates an isolated `GEMINI_CLI_HOME` with API-key auth, no telemetry or auto-update, and env:
 * `GOOGLE_GEMINI_BASE_URL` (the scripted server), a dummy `GEMINI_API_KEY`,
 * `GEMINI_CLI_TRUST_WORKSPACE=true` (headless mode refuses untrusted folders) and
 * `GEMINI_CLI_NO_RELAUNCH=true` (one process instead of a relaunched child).
 */
export async function createGeminiHome(options: GeminiHomeOptions): Promise<GeminiHome> {
  const sandbox = await createHarnessSandbox("gemini");
  const geminiHome = join(sandbox.root, "gemini-home");
  const settingsDir = join(geminiHome, ".gemini");
  await mkdir(settingsDir, { recursive: true });
  const mcpServers: Record<string, unknown> = {};
  for (const [name, server] of Object.entries(options.mcpServers ?? {})) {
    const headers = {
      ...server.headers,
      ...(server.bearerToken !== undefined ? { Authorization: `Bearer ${server.bearerToken}` } : {}),
    };
    mcpServers[name] = { httpUrl: server.url, trust: true, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
  }
  const settings: Record<string, unknown> = {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true },
    advanced: { autoConfigureMemory: false },
    ...(Object.keys(mcpServers).length > 0 ? { mcpServers } : {}),
    ...options.settings,
  };
  const settingsPath = join(settingsDir, "settings.json");
  await writeFile(settingsPath, JSON.stringify(settings, null, 2));
  return {
    harness: "gemini",
    root: sandbox.root,
    home: geminiHome,
    cwd: sandbox.cwd,
    env: {
      ...sandbox.env,
      GEMINI_CLI_HOME: geminiHome,
      GOOGLE_GEMINI_BASE_URL: serverOrigin(options.modelServerUrl),
      GEMINI_API_KEY: DUMMY_API_KEY,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_CLI_NO_RELAUNCH: "true",
    },
    cleanup: sandbox.cleanup,
    settingsPath,
    promptArgs: (prompt, extra = []) => ["-y", "-o", "json", ...extra, "-p", prompt],
  };
}
