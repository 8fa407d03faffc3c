// Shared fixtures for the Codex plugin tests: the real Codex 0.171 binary, the sdk's scripted
// model server, an isolated CODEX_HOME, and the testkit's session lab pieces (a plugin context
// with real process groups, sessions opened with the host's defaults).
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type {
  McpEndpointGrant,
  OpenSessionInput,
  OrchestrationAdapter,
  ProviderInstanceDescriptor,
} from "@switchyard/sdk";
import {
  commandLineOf,
  createAcpTestContext,
  createCodexHome,
  environmentVariablesOf,
  mcpGrantFor,
  openRecordedSession,
  validateDriverOptions,
  type AcpTestContext,
  type AdapterEventRecorder,
  type CodexHome,
  type RecordedSession,
} from "@switchyard/testkit";
import plugin from "../src/index.js";

/** The plugin folder, as `startTestHost({ plugins })` loads it (its built `dist/`). */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));

/** A provider instance on a test CODEX_HOME. */
export function codexInstance(
  home: CodexHome,
  driver: "codex" | "codex-exec",
  id = `${driver}-main`,
): ProviderInstanceDescriptor {
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
  const validated = await validateDriverOptions(plugin, driverKind, options);
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === driverKind)!;
  const instance = codexInstance(home, driverKind);
  return driver.create({
    instance: { ...instance, environment: { ...instance.environment, ...environment } },
    options: validated,
    context: ctx.context,
  });
}

/** A grant for an MCP endpoint (a test server or the host's). */
export function grantFor(url: string, token: string, serverName = "switchyard"): McpEndpointGrant {
  return mcpGrantFor(url, token, {
    serverName,
    toolTimeoutMs: 120_000,
    instructions: "SWITCHYARD-ORCHESTRATION-INSTRUCTIONS: you can delegate work.",
    stdioBridge: { command: "switchyard", args: ["mcp-bridge"], env: {} },
  });
}

/** Opens a session in the home's `cwd` and records its events. */
export function openSession(
  adapter: OrchestrationAdapter,
  home: CodexHome,
  overrides: Partial<OpenSessionInput> = {},
): Promise<RecordedSession> {
  return openRecordedSession(adapter, home.cwd, overrides);
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
      if (cmdline.includes(needle) || environ.includes(needle))
        found.push({ pid: Number(entry), cmdline: cmdline.split("\0").join(" ") });
    } catch {
      // The process ended meanwhile, or it is not ours to read.
    }
  }
  return found;
}

/** The argv and environment of a process. */
export function processInfo(pid: number): { argv: string[]; env: Record<string, string> } {
  return { argv: commandLineOf(pid), env: environmentVariablesOf(pid) };
}

/** Waits until `check` holds (polling), or throws after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export { createAcpTestContext, type AcpTestContext, type AdapterEventRecorder, type CodexHome };
