/**
 * Shared fixtures for the Claude plugin tests: the scripted model server, an isolated
 * CLAUDE_CONFIG_DIR, a plugin context with real process groups and a recording logger, and
 * helpers to open sessions and run turns against the real Agent SDK and its bundled `claude`.
 * Nothing of the plugin or the SDK is mocked; the model is the only stand-in.
 */
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { McpEndpointGrant, OpenSessionInput, OrchestrationAdapter, ProviderInstanceDescriptor, RuntimeMode, TurnInput } from "@switchyard/sdk";
import {
  ScriptedModelServer,
  createAcpTestContext,
  createClaudeHome,
  createEventRecorder,
  type AcpTestContext,
  type AdapterEventRecorder,
  type ClaudeHome,
  type ClaudeHomeOptions,
} from "@switchyard/testkit";
import plugin, { createClaudeAdapter, type ClaudeOptions, type ClaudeProviderSession } from "../src/index.js";

/** The plugin folder, as the plugin host loads it. */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** The model name the scripted server answers as. */
export const FAKE_MODEL = "claude-fake";

/** Validates driver options through the plugin's own schema. */
export async function claudeOptions(raw: Record<string, unknown> = {}): Promise<ClaudeOptions> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === "claude");
  if (!driver?.optionsSchema) throw new Error("the claude driver is missing");
  const result = await driver.optionsSchema["~standard"].validate(raw);
  if (result.issues) throw new Error(JSON.stringify(result.issues));
  return result.value as ClaudeOptions;
}

/** The instance descriptor for a Claude home. */
export function claudeInstance(home: ClaudeHome, environment: Record<string, string> = {}, customModels: readonly string[] = []): ProviderInstanceDescriptor {
  return { id: "claude-test", driver: "claude", displayName: "Claude", homePath: home.home, environment: { ...home.env, ...environment }, customModels };
}

/** One lab: model server, Claude home, plugin context, adapter. */
export interface ClaudeLab {
  readonly server: ScriptedModelServer;
  readonly home: ClaudeHome;
  readonly ctx: AcpTestContext;
  readonly adapter: OrchestrationAdapter;
  /** Opens a session; its events go to the returned recorder. */
  open(overrides?: Partial<OpenSessionInput>): Promise<{ session: ClaudeProviderSession; events: AdapterEventRecorder }>;
  dispose(): Promise<void>;
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
  const ctx = await createAcpTestContext();
  const adapter = createClaudeAdapter({ instance: claudeInstance(home, options.environment, options.customModels), options: await claudeOptions(options.driverOptions), context: ctx.context });
  const sessions: ClaudeProviderSession[] = [];
  let counter = 0;
  return {
    server,
    home,
    ctx,
    adapter,
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
      })) as ClaudeProviderSession;
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
export function grantFor(url: string, token: string, serverName = "switchyard"): McpEndpointGrant {
  return {
    serverName,
    url,
    token,
    toolTimeoutMs: 60_000,
    blockingToolNames: ["delegate_task", "t3_thread_wait"],
    directToolNames: ["t3_thread_wait"],
    instructions: "Use the switchyard tools to delegate.",
    stdioBridge: { command: "unused", args: [], env: {} },
  };
}

/** A process's argv, as the kernel shows it to every local user. */
export function commandLineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "");
}

/**
 * The argv of every process this test process started, directly or not (what `ps` shows every
 * local user). Other people's processes on a shared machine are left out.
 */
export function descendantCommandLines(root = process.pid): string[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // the process is gone
    }
  }
  const lines: string[] = [];
  const pending = [...(children.get(root) ?? [])];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    try {
      lines.push(commandLineOf(pid).join(" "));
    } catch {
      // the process is gone
    }
    pending.push(...(children.get(pid) ?? []));
  }
  return lines;
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
