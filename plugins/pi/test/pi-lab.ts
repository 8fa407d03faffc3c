/**
 * Shared fixtures for the Pi plugin tests: the scripted model server, an isolated Pi home, and
 * the testkit's session lab (a plugin context with real process groups) around the real `pi`
 * binary, with every process start the adapter asks for recorded. Nothing of the plugin is mocked.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { McpEndpointGrant, PluginContext, ProviderInstanceDescriptor } from "@switchyard/sdk";
import {
  ScriptedModelServer,
  createPiHome,
  createSessionLab,
  mcpGrantFor,
  validateDriverOptions,
  type PiHome,
  type PiHomeOptions,
  type SessionLab,
} from "@switchyard/testkit";
import plugin, { createPiAdapter, type PiAdapter, type PiOptions, type PiProviderSession } from "../src/index.js";

/** The plugin folder, as the plugin host loads it. */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** Adds a second model to a Pi home's models.json (`fake/fake-model-2`). */
export async function addSecondModel(home: PiHome): Promise<string> {
  const file = path.join(home.home, "models.json");
  const models = JSON.parse(await readFile(file, "utf8")) as {
    providers: Record<string, { models: { id: string }[] }>;
  };
  for (const provider of Object.values(models.providers)) provider.models.push({ id: "fake-model-2" });
  await writeFile(file, JSON.stringify(models, null, 2));
  return "fake/fake-model-2";
}

/** The instance descriptor for a Pi home. */
export function piInstance(home: PiHome, extraEnvironment: Record<string, string> = {}): ProviderInstanceDescriptor {
  return {
    id: "pi-test",
    driver: "pi",
    displayName: "Pi",
    homePath: home.home,
    environment: { ...home.env, ...extraEnvironment },
    customModels: [],
  };
}

/** Validates driver options through the plugin's own schema. */
export function piOptions(raw: Record<string, unknown> = {}): Promise<PiOptions> {
  return validateDriverOptions<PiOptions>(plugin, "pi", raw);
}

/** A process start, as the adapter asked for it. */
export interface RecordedSpawn {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly extendEnv: boolean | undefined;
}

/** One lab: model server, Pi home, plugin context, adapter. */
export interface PiLab extends SessionLab<PiProviderSession, PiAdapter, PiHome> {
  readonly server: ScriptedModelServer;
  /** Every process the adapter started, with the argv and environment it passed. */
  readonly spawns: readonly RecordedSpawn[];
}

/** The host's process helpers of `context`, recording in `spawns` what the adapter asked for (argv and environment). */
function recordingSpawns(context: PluginContext, spawns: RecordedSpawn[]): PluginContext {
  const helpers = context.process;
  return {
    ...context,
    process: {
      run: helpers.run.bind(helpers),
      which: helpers.which.bind(helpers),
      spawn: (command: string, args: readonly string[], spawnOptions: Parameters<typeof helpers.spawn>[2]) => {
        spawns.push({ command, args: [...args], env: { ...spawnOptions.env }, extendEnv: spawnOptions.extendEnv });
        return helpers.spawn(command, args, spawnOptions);
      },
    },
  };
}

/** Builds a lab. */
export async function createPiLab(
  options: {
    home?: Omit<PiHomeOptions, "modelServerUrl">;
    driverOptions?: Record<string, unknown>;
    instanceEnvironment?: Record<string, string>;
  } = {},
): Promise<PiLab> {
  const server = await ScriptedModelServer.start();
  const home = await createPiHome({ modelServerUrl: server.url, ...options.home });
  const driverOptions = await piOptions(options.driverOptions);
  const spawns: RecordedSpawn[] = [];
  const lab = await createSessionLab<PiProviderSession, PiAdapter, PiHome>({
    home,
    standIn: server,
    createAdapter: (context) =>
      createPiAdapter(piInstance(home, options.instanceEnvironment), driverOptions, recordingSpawns(context, spawns)),
  });
  return Object.assign(lab, { server, spawns });
}

/** An MCP grant for an endpoint (the same shape the host issues). */
export function grantFor(url: string, token: string): McpEndpointGrant {
  return mcpGrantFor(url, token, {
    instructions: "<switchyard_instructions>Use the switchyard tools.</switchyard_instructions>",
  });
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
