/**
 * Shared fixtures for the OpenCode plugin tests: the scripted model server, an isolated OpenCode
 * home (a `fake` Chat Completions provider), a plugin context with real process groups, and
 * helpers to open sessions and run turns against the real `opencode serve`. Nothing of the
 * plugin is mocked; the model is the only stand-in.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { McpEndpointGrant, OpenSessionInput, ProviderInstanceDescriptor, TurnInput } from "@switchyard/sdk";
import {
  ScriptedModelServer,
  createAcpTestContext,
  createEventRecorder,
  createOpenCodeHome,
  type AcpTestContext,
  type AdapterEventRecorder,
  type OpenCodeHome,
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
        "fake-model": { name: "Fake Model", tool_call: true, cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } },
        // A variant, as OpenCode defines reasoning settings: the effort `high` of this model.
        "fake-model-2": { name: "Fake Model 2", tool_call: true, reasoning: true, variants: { high: { reasoningEffort: "high" } } },
      },
    },
  };
}

/** Creates an OpenCode home for the scripted server with two fake models. */
export async function createTwoModelHome(server: ScriptedModelServer): Promise<OpenCodeHome> {
  return createOpenCodeHome({ modelServerUrl: server.url, config: { provider: twoModelProvider(server.url) } });
}

/** The instance config a host test gives an OpenCode home (its opencode.json is merged under Switchyard's entries). */
export function hostInstance(id: string, home: OpenCodeHome): { id: string; driver: string; options: Record<string, unknown>; environment: Record<string, string> } {
  return { id, driver: "opencode", options: { configFile: home.configPath }, environment: home.env };
}

/** Validates driver options through the plugin's own schema. */
export async function openCodeOptions(raw: Record<string, unknown> = {}): Promise<OpenCodeOptions> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === "opencode");
  if (!driver?.optionsSchema) throw new Error("the opencode driver is missing");
  const result = await driver.optionsSchema["~standard"].validate(raw);
  if (result.issues) throw new Error(JSON.stringify(result.issues));
  return result.value as OpenCodeOptions;
}

/** One lab: model server, OpenCode home, plugin context, adapter. */
export interface OpenCodeLab {
  readonly server: ScriptedModelServer;
  readonly home: OpenCodeHome;
  readonly ctx: AcpTestContext;
  readonly adapter: ReturnType<typeof createOpenCodeAdapter>;
  /** Opens a session; its events go to the returned recorder. */
  open(overrides?: Partial<OpenSessionInput>): Promise<{ session: OpenCodeProviderSession; events: AdapterEventRecorder }>;
  /** A new adapter on the same plugin directories (what a restarted host builds). */
  restartAdapter(): ReturnType<typeof createOpenCodeAdapter>;
  dispose(): Promise<void>;
}

/** The instance descriptor of a lab. */
function instanceOf(home: OpenCodeHome): ProviderInstanceDescriptor {
  return { id: "opencode-test", driver: "opencode", displayName: "OpenCode", homePath: null, environment: home.env, customModels: [] };
}

/** Builds a lab. */
export async function createOpenCodeLab(options: { driverOptions?: Record<string, unknown> } = {}): Promise<OpenCodeLab> {
  const server = await ScriptedModelServer.start();
  const home = await createTwoModelHome(server);
  const ctx = await createAcpTestContext();
  const driverOptions = await openCodeOptions({ configFile: home.configPath, ...options.driverOptions });
  const build = () => createOpenCodeAdapter({ instance: instanceOf(home), options: driverOptions, context: ctx.context });
  let adapter = build();
  const adapters = [adapter];
  let counter = 0;
  return {
    server,
    home,
    ctx,
    get adapter() {
      return adapter;
    },
    async open(overrides = {}) {
      const events = createEventRecorder();
      counter += 1;
      const session = (await adapter.openSession({
        threadId: `thread-${counter}`,
        providerSessionId: `psess-${counter}`,
        cwd: home.cwd,
        model: null,
        runtimeMode: "full-access",
        interactionMode: "default",
        resumeCursor: null,
        mcp: null,
        emit: events.emit,
        ...overrides,
      })) as OpenCodeProviderSession;
      return { session, events };
    },
    restartAdapter() {
      adapter = build();
      adapters.push(adapter);
      return adapter;
    },
    async dispose() {
      for (const each of adapters) await each.dispose?.();
      await ctx.dispose();
      await server.close();
      await home.cleanup();
    },
  };
}

let turnCounter = 0;

/** A turn input with defaults. */
export function turn(text: string, overrides: Partial<TurnInput> = {}): TurnInput {
  turnCounter += 1;
  return {
    turnId: `turn-${turnCounter}`,
    runId: `run-${turnCounter}`,
    text,
    instructions: null,
    model: null,
    runtimeMode: "full-access",
    interactionMode: "default",
    restartOfTurnId: null,
    ...overrides,
  };
}

/** An MCP grant for an endpoint (the same shape the host issues). */
export function grantFor(url: string, token: string, serverName = "switchyard"): McpEndpointGrant {
  return {
    serverName,
    url,
    token,
    toolTimeoutMs: 60_000,
    blockingToolNames: ["delegate_task", "t3_thread_wait"],
    instructions: "<switchyard_instructions>ORCHESTRATION-MARKER: use the switchyard tools.</switchyard_instructions>",
    stdioBridge: { command: "unused", args: [], env: {} },
  };
}

/** A process's argv, as the kernel shows it to every local user. */
export function commandLineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "");
}

/** A process's environment (readable by its owner only). */
export function environmentOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** True while a process exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
