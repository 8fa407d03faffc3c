/**
 * Shared fixtures for the Pi plugin tests: the scripted model server, an isolated Pi home, a
 * plugin context with real process groups, and helpers to open sessions and run turns against
 * the real `pi` binary. Nothing of the plugin is mocked.
 */
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type McpEndpointGrant,
  type OpenSessionInput,
  type ProviderInstanceDescriptor,
  type RuntimeMode,
  type TurnInput,
} from "@switchyard/sdk";
import {
  ScriptedModelServer,
  createAcpTestContext,
  createEventRecorder,
  createPiHome,
  type AcpTestContext,
  type AdapterEventRecorder,
  type PiHome,
  type PiHomeOptions,
} from "@switchyard/testkit";
import plugin, { createPiAdapter, type PiAdapter, type PiOptions, type PiProviderSession } from "../src/index.js";

/** The plugin folder, as the plugin host loads it. */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** Adds a second model to a Pi home's models.json (`fake/fake-model-2`). */
export async function addSecondModel(home: PiHome): Promise<string> {
  const file = path.join(home.home, "models.json");
  const models = JSON.parse(await readFile(file, "utf8")) as { providers: Record<string, { models: { id: string }[] }> };
  for (const provider of Object.values(models.providers)) provider.models.push({ id: "fake-model-2" });
  await writeFile(file, JSON.stringify(models, null, 2));
  return "fake/fake-model-2";
}

/** The instance descriptor for a Pi home. */
export function piInstance(home: PiHome, extraEnvironment: Record<string, string> = {}): ProviderInstanceDescriptor {
  return { id: "pi-test", driver: "pi", displayName: "Pi", homePath: home.home, environment: { ...home.env, ...extraEnvironment }, customModels: [] };
}

/** Validates driver options through the plugin's own schema. */
export async function piOptions(raw: Record<string, unknown> = {}): Promise<PiOptions> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === "pi");
  if (!driver?.optionsSchema) throw new Error("the pi driver is missing");
  const result = await driver.optionsSchema["~standard"].validate(raw);
  if (result.issues) throw new Error(JSON.stringify(result.issues));
  return result.value as PiOptions;
}

/** A process start, as the adapter asked for it. */
export interface RecordedSpawn {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly extendEnv: boolean | undefined;
}

/** One lab: model server, Pi home, plugin context, adapter. */
export interface PiLab {
  readonly server: ScriptedModelServer;
  readonly home: PiHome;
  readonly ctx: AcpTestContext;
  readonly adapter: PiAdapter;
  /** Every process the adapter started, with the argv and environment it passed. */
  readonly spawns: readonly RecordedSpawn[];
  /** Opens a session; its events go to the returned recorder. */
  open(overrides?: Partial<OpenSessionInput>): Promise<{ session: PiProviderSession; events: AdapterEventRecorder }>;
  dispose(): Promise<void>;
}

/** Builds a lab. */
export async function createPiLab(
  options: { home?: Omit<PiHomeOptions, "modelServerUrl">; driverOptions?: Record<string, unknown>; instanceEnvironment?: Record<string, string> } = {},
): Promise<PiLab> {
  const server = await ScriptedModelServer.start();
  const home = await createPiHome({ modelServerUrl: server.url, ...options.home });
  const ctx = await createAcpTestContext();
  // The host's process helpers, recording what the adapter asked for (argv and environment).
  const spawns: RecordedSpawn[] = [];
  const helpers = ctx.context.process;
  const context = {
    ...ctx.context,
    process: {
      run: helpers.run.bind(helpers),
      which: helpers.which.bind(helpers),
      spawn: (command: string, args: readonly string[], spawnOptions: Parameters<typeof helpers.spawn>[2]) => {
        spawns.push({ command, args: [...args], env: { ...spawnOptions.env }, extendEnv: spawnOptions.extendEnv });
        return helpers.spawn(command, args, spawnOptions);
      },
    },
  };
  const adapter = createPiAdapter(piInstance(home, options.instanceEnvironment), await piOptions(options.driverOptions), context);
  const sessions: PiProviderSession[] = [];
  let counter = 0;
  return {
    server,
    home,
    ctx,
    adapter,
    spawns,
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
      })) as PiProviderSession;
      sessions.push(session);
      return { session, events };
    },
    async dispose() {
      for (const session of sessions) await session.close();
      await adapter.dispose?.();
      await ctx.dispose();
      await server.close();
      await home.cleanup();
    },
  };
}

let turnCounter = 0;

/** A turn input with defaults. */
export function turn(text: string, overrides: Partial<TurnInput> & { runtimeMode?: RuntimeMode } = {}): TurnInput {
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
export function grantFor(url: string, token: string): McpEndpointGrant {
  return {
    serverName: "switchyard",
    url,
    token,
    toolTimeoutMs: 60_000,
    blockingToolNames: ["delegate_task", "t3_thread_wait"],
    instructions: "<switchyard_instructions>Use the switchyard tools.</switchyard_instructions>",
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

/** True while a process exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A Pi extension that consumes input the way Pi 0.99+ acknowledges as `handled`: the command
 * `/switchyard-noop` (no model run) and an input handler that swallows any text with `swallowed steer` in it.
 */
export const ACKNOWLEDGING_EXTENSION = `export default function (pi) {
  pi.registerCommand("switchyard-noop", { description: "does nothing", handler: async () => {} });
  pi.on("input", (event) => (event.text.includes("swallowed steer") ? { action: "handled" } : { action: "continue" }));
}
`;
