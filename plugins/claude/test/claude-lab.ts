/**
 * Shared fixtures for the Claude plugin tests: the scripted model server, an isolated
 * CLAUDE_CONFIG_DIR, and the testkit's session lab (a plugin context with real process groups
 * and a recording logger) around the real Agent SDK and its bundled `claude`. Nothing of the
 * plugin or the SDK is mocked; the model is the only stand-in.
 */
import { fileURLToPath } from "node:url";
import type { McpEndpointGrant, OrchestrationAdapter, ProviderInstanceDescriptor } from "@switchyard/sdk";
import {
  ScriptedModelServer,
  createClaudeHome,
  createSessionLab,
  mcpGrantFor,
  validateDriverOptions,
  type ClaudeHome,
  type ClaudeHomeOptions,
  type SessionLab,
} from "@switchyard/testkit";
import plugin, { createClaudeAdapter, type ClaudeOptions, type ClaudeProviderSession } from "../src/index.js";

/** The plugin folder, as the plugin host loads it. */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** The model name the scripted server answers as. */
export const FAKE_MODEL = "claude-fake";

/** The instance descriptor for a Claude home. */
export function claudeInstance(
  home: ClaudeHome,
  environment: Record<string, string> = {},
  customModels: readonly string[] = [],
): ProviderInstanceDescriptor {
  return {
    id: "claude-test",
    driver: "claude",
    displayName: "Claude",
    homePath: home.home,
    environment: { ...home.env, ...environment },
    customModels,
  };
}

/** One lab: model server, Claude home, plugin context, adapter. */
export interface ClaudeLab extends SessionLab<ClaudeProviderSession, OrchestrationAdapter, ClaudeHome> {
  readonly server: ScriptedModelServer;
}

/** Builds a lab. `environment` is laid over the home's; `withoutEnv` removes variables from the home's first. */
export async function createClaudeLab(
  options: {
    home?: Omit<ClaudeHomeOptions, "modelServerUrl">;
    environment?: Record<string, string>;
    withoutEnv?: readonly string[];
    customModels?: readonly string[];
    driverOptions?: Record<string, unknown>;
  } = {},
): Promise<ClaudeLab> {
  const server = await ScriptedModelServer.start();
  const home = await createClaudeHome({ modelServerUrl: server.url, model: FAKE_MODEL, ...options.home });
  for (const name of options.withoutEnv ?? []) delete home.env[name];
  const instance = claudeInstance(home, options.environment, options.customModels);
  const driverOptions = await validateDriverOptions<ClaudeOptions>(plugin, "claude", options.driverOptions);
  const lab = await createSessionLab<ClaudeProviderSession, OrchestrationAdapter, ClaudeHome>({
    home,
    standIn: server,
    createAdapter: (context) => createClaudeAdapter({ instance, options: driverOptions, context }),
  });
  return Object.assign(lab, { server });
}

/** An MCP grant for an endpoint (the same shape the host issues). */
export function grantFor(url: string, token: string, serverName = "switchyard"): McpEndpointGrant {
  return mcpGrantFor(url, token, { serverName });
}
