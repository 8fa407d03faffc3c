// Shared fixtures for the Codex plugin tests: the real Codex 0.171 binary, the sdk's scripted
// model server, an isolated CODEX_HOME, and a plugin context with real process groups.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type {
  McpEndpointGrant,
  OpenSessionInput,
  OrchestrationAdapter,
  ProviderInstanceDescriptor,
  ProviderSession,
  RuntimeMode,
  TurnInput,
} from "@switchyard/sdk";
import {
  createAcpTestContext,
  createCodexHome,
  createEventRecorder,
  type AcpTestContext,
  type AdapterEventRecorder,
  type CodexHome,
} from "@switchyard/testkit";
import plugin from "../src/index.js";

/** The plugin folder, as `startTestHost({ plugins })` loads it (its built `dist/`). */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));

/** A provider instance on a test CODEX_HOME. */
export function codexInstance(home: CodexHome, driver: "codex" | "codex-exec", id = `${driver}-main`): ProviderInstanceDescriptor {
  return { id, driver, displayName: id, homePath: home.home, environment: home.env, customModels: ["custom-model-x"] };
}

/** Creates a driver's adapter with a test context. */
export async function createAdapter(
  driverKind: "codex" | "codex-exec",
  home: CodexHome,
  ctx: AcpTestContext,
  options: Record<string, unknown> = {},
  environment: Record<string, string> = {},
): Promise<OrchestrationAdapter> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === driverKind);
  if (driver?.optionsSchema === undefined) throw new Error(`driver ${driverKind} is missing`);
  const validated = await driver.optionsSchema["~standard"].validate(options);
  if (validated.issues) throw new Error(JSON.stringify(validated.issues));
  const instance = codexInstance(home, driverKind);
  return driver.create({ instance: { ...instance, environment: { ...instance.environment, ...environment } }, options: validated.value, context: ctx.context });
}

let counter = 0;

/** A grant for an MCP endpoint (a test server or the host's). */
export function grantFor(url: string, token: string, serverName = "switchyard"): McpEndpointGrant {
  return {
    serverName,
    url,
    token,
    toolTimeoutMs: 120_000,
    blockingToolNames: ["delegate_task", "t3_thread_wait"],
    directToolNames: ["t3_thread_wait"],
    instructions: "SWITCHYARD-ORCHESTRATION-INSTRUCTIONS: you can delegate work.",
    stdioBridge: { command: "switchyard", args: ["mcp-bridge"], env: {} },
  };
}

/** Opens a session and records its events. */
export async function openSession(
  adapter: OrchestrationAdapter,
  home: CodexHome,
  options: { resumeCursor?: string | null; mcp?: McpEndpointGrant | null; runtimeMode?: RuntimeMode; model?: string | null } = {},
): Promise<{ session: ProviderSession; events: AdapterEventRecorder; input: OpenSessionInput }> {
  const events = createEventRecorder();
  const input: OpenSessionInput = {
    threadId: `thread-${++counter}`,
    providerSessionId: `psess-${counter}`,
    cwd: home.cwd,
    model: options.model ?? null,
    runtimeMode: options.runtimeMode ?? "full-access",
    interactionMode: "default",
    resumeCursor: options.resumeCursor ?? null,
    mcp: options.mcp ?? null,
    emit: events.emit,
  };
  const session = await adapter.openSession(input);
  return { session, events, input };
}

/** A turn input with a fresh host turn id. */
export function turnInput(text: string, extra: Partial<TurnInput> = {}): TurnInput {
  const turnId = extra.turnId ?? `turn-${++counter}`;
  return {
    turnId,
    runId: `run-${turnId}`,
    text,
    instructions: null,
    model: null,
    runtimeMode: "full-access",
    interactionMode: "default",
    restartOfTurnId: null,
    ...extra,
  };
}

/** Creates a CODEX_HOME pointed at the scripted model server. */
export function codexHome(modelServerUrl: string): Promise<CodexHome> {
  return createCodexHome({ modelServerUrl });
}

/** Live processes whose environment or argv mention `needle` (our CODEX_HOME, a token). */
export function processesMentioning(needle: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/\) Z /.test(stat)) continue; // zombies hold no resources and die with their parent
      if (cmdline.includes(needle) || environ.includes(needle)) found.push({ pid: Number(entry), cmdline: cmdline.split("\0").join(" ") });
    } catch {
      // The process ended meanwhile, or it is not ours to read.
    }
  }
  return found;
}

/** The argv and environment of a process. */
export function processInfo(pid: number): { argv: string[]; env: Record<string, string> } {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  const env: Record<string, string> = {};
  for (const pair of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const index = pair.indexOf("=");
    if (index > 0) env[pair.slice(0, index)] = pair.slice(index + 1);
  }
  return { argv, env };
}

/** Waits until `check` holds (polling), or throws after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export { createAcpTestContext, type AcpTestContext, type AdapterEventRecorder, type CodexHome };
