import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createSilentLogger,
  McpSessionRegistry,
  startServer,
  SwitchyardHost,
  type CredentialCapability,
  type RunningServer,
  type RunRecord,
} from "@switchyard/core";

/** A provider instance for a test config (the shape of one `providers[]` entry). */
export interface TestProviderInstance {
  readonly id: string;
  readonly driver: string;
  readonly options?: Record<string, unknown>;
  readonly homePath?: string | null;
  readonly environment?: Record<string, string>;
  readonly customModels?: readonly string[];
  readonly enabled?: boolean;
  readonly displayName?: string;
}

/** Options for {@link startTestHost}. */
export interface StartTestHostOptions {
  /** Plugin folders to load (your plugin's folder, the scripted provider's…). */
  readonly plugins: readonly string[];
  readonly providers: readonly TestProviderInstance[];
  /** Start the HTTP server with the MCP endpoint (default true), so sessions get credentials. */
  readonly server?: boolean;
  /** Extra `server` config (maxWaitMs…). */
  readonly serverConfig?: Record<string, unknown>;
  /** Replace host services before the host is built. */
  readonly overrides?: NonNullable<Parameters<typeof SwitchyardHost.create>[0]>["overrides"];
  /** Load the repository's built-in plugins too (default false: only `plugins`). */
  readonly builtinPlugins?: boolean;
  /** The config's `profiles` (docs/profiles.md): the user's own, trusted with harness homes and environment. */
  readonly profiles?: readonly Record<string, unknown>[];
}

/** A running host on a temporary home, with one project on a temporary workspace. */
export interface TestHost {
  readonly host: SwitchyardHost;
  readonly server: RunningServer | null;
  readonly home: string;
  readonly workspace: string;
  readonly projectId: string;
  /** Issues an outside-client token (for an MCP client in the test). */
  issueClientToken(capabilities?: readonly CredentialCapability[]): string;
  /** Creates a thread on an instance, optionally with a first prompt. */
  createThread(
    instanceId: string,
    prompt?: string,
    options?: { runtimeMode?: "approval-required" | "auto-accept-edits" | "full-access"; model?: string },
  ): Promise<string>;
  /** Waits for the thread's latest run to end (or the given run). */
  waitForRun(threadId: string, options?: { runId?: string; timeoutMs?: number }): Promise<RunRecord>;
  stop(): Promise<void>;
}

/**
 * Starts a whole Switchyard host for a test in one call: temporary home, the given plugins and
 * provider instances, the MCP endpoint on 127.0.0.1, and a project on a temporary workspace.
 */
export async function startTestHost(options: StartTestHostOptions): Promise<TestHost> {
  const home = mkdtempSync(join(tmpdir(), "switchyard-host-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-workspace-"));
  const host = await SwitchyardHost.create({
    home,
    config: {
      providers: options.providers,
      plugins: options.plugins,
      ...(options.serverConfig ? { server: options.serverConfig } : {}),
      ...(options.profiles ? { profiles: options.profiles } : {}),
    },
    builtinPluginsDir: options.builtinPlugins ? undefined : null,
    logger: createSilentLogger(),
    ...(options.overrides ? { overrides: options.overrides } : {}),
  });
  // With a server, startServer starts the host once the MCP endpoint is wired.
  const server = options.server === false ? null : await startServer(host, { port: 0 });
  if (server === null) await host.start();
  const project = await host.projects.add(workspace, "workspace");
  return {
    host,
    server,
    home,
    workspace,
    projectId: project.id,
    issueClientToken: (capabilities = ["orchestration:read", "orchestration:operate"]) =>
      host.container.resolve(McpSessionRegistry).issueClientToken({ ttlMs: 3_600_000, capabilities }).token,
    createThread: async (instanceId, prompt, threadOptions = {}) =>
      (
        await host.threads.createThread({
          projectId: project.id,
          providerInstanceId: instanceId,
          prompt: prompt ?? null,
          createdBy: "user",
          creationSource: "cli",
          ...(threadOptions.runtimeMode ? { runtimeMode: threadOptions.runtimeMode } : {}),
          ...(threadOptions.model ? { model: threadOptions.model } : {}),
        })
      ).thread.id,
    waitForRun: async (threadId, waitOptions = {}) => {
      const result = await host.threads.waitForRun({
        threadId,
        timeoutMs: waitOptions.timeoutMs ?? 120_000,
        ...(waitOptions.runId ? { runId: waitOptions.runId } : {}),
      });
      if (result.run === null) throw new Error(`thread ${threadId} has no run`);
      if (result.timedOut) throw new Error(`run ${result.run.id} did not finish in time (status ${result.run.status})`);
      return result.run;
    },
    stop: async () => {
      await server?.close();
      await host.stop();
      rmSync(home, { recursive: true, force: true });
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}
