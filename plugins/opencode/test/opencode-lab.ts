/**
 * Shared fixtures for the OpenCode plugin tests: the scripted model server, an isolated OpenCode
 * home (a `fake` Chat Completions provider), and the testkit's session lab (a plugin context with
 * real process groups) around the real `opencode serve`. Nothing of the plugin is mocked; the
 * model is the only stand-in.
 */
import { fileURLToPath } from "node:url";
import type { McpEndpointGrant, ProviderInstanceDescriptor } from "@switchyard/sdk";
import {
  ScriptedModelServer,
  createOpenCodeHome,
  createSessionLab,
  mcpGrantFor,
  validateDriverOptions,
  type OpenCodeHome,
  type SessionLab,
} from "@switchyard/testkit";
import plugin, { createOpenCodeAdapter, type OpenCodeOptions, type OpenCodeProviderSession } from "../src/index.js";

/** The plugin folder, as the plugin host loads it. */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** A second model of the fake provider, for model switches and per-thread models. */
export const SECOND_MODEL = "fake/fake-model-2";

/** The opencode.json `provider` entry of a home with two fake models. */
export function twoModelProvider(modelServerUrl: string): Record<string, unknown> {
  return {
    fake: {
      npm: "@ai-sdk/openai-compatible",
      name: "Fake",
      options: { baseURL: `${modelServerUrl}/v1`, apiKey: "sk-switchyard-testkit-dummy" },
      models: {
        // A price, so the cost OpenCode reports on each step-finish part is not zero.
        "fake-model": {
          name: "Fake Model",
          tool_call: true,
          cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
        },
        // A variant, as OpenCode defines reasoning settings: the effort `high` of this model.
        "fake-model-2": {
          name: "Fake Model 2",
          tool_call: true,
          reasoning: true,
          variants: { high: { reasoningEffort: "high" } },
        },
      },
    },
  };
}

/** Creates an OpenCode home for the scripted server with two fake models. */
export async function createTwoModelHome(server: ScriptedModelServer): Promise<OpenCodeHome> {
  return createOpenCodeHome({ modelServerUrl: server.url, config: { provider: twoModelProvider(server.url) } });
}

/** The instance config a host test gives an OpenCode home (its opencode.json is merged under Switchyard's entries). */
export function hostInstance(
  id: string,
  home: OpenCodeHome,
): { id: string; driver: string; options: Record<string, unknown>; environment: Record<string, string> } {
  return { id, driver: "opencode", options: { configFile: home.configPath }, environment: home.env };
}

/** Validates driver options through the plugin's own schema. */
export function openCodeOptions(raw: Record<string, unknown> = {}): Promise<OpenCodeOptions> {
  return validateDriverOptions<OpenCodeOptions>(plugin, "opencode", raw);
}

/** One lab: model server, OpenCode home, plugin context, adapter. */
export interface OpenCodeLab extends SessionLab<
  OpenCodeProviderSession,
  ReturnType<typeof createOpenCodeAdapter>,
  OpenCodeHome
> {
  readonly server: ScriptedModelServer;
}

/** The instance descriptor of a lab. */
function instanceOf(home: OpenCodeHome): ProviderInstanceDescriptor {
  return {
    id: "opencode-test",
    driver: "opencode",
    displayName: "OpenCode",
    homePath: null,
    environment: home.env,
    customModels: [],
  };
}

/** Builds a lab. */
export async function createOpenCodeLab(
  options: { driverOptions?: Record<string, unknown> } = {},
): Promise<OpenCodeLab> {
  const server = await ScriptedModelServer.start();
  const home = await createTwoModelHome(server);
  const driverOptions = await openCodeOptions({ configFile: home.configPath, ...options.driverOptions });
  const lab = await createSessionLab<OpenCodeProviderSession, ReturnType<typeof createOpenCodeAdapter>, OpenCodeHome>({
    home,
    standIn: server,
    createAdapter: (context) => createOpenCodeAdapter({ instance: instanceOf(home), options: driverOptions, context }),
  });
  return Object.assign(lab, { server });
}

/** An MCP grant for an endpoint (the same shape the host issues). */
export function grantFor(url: string, token: string, serverName = "switchyard"): McpEndpointGrant {
  return mcpGrantFor(url, token, {
    serverName,
    instructions: "<switchyard_instructions>ORCHESTRATION-MARKER: use the switchyard tools.</switchyard_instructions>",
  });
}
