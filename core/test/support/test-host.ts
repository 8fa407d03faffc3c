import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import type { DependencyContainer } from "tsyringe";
import { SwitchyardHost } from "../../src/host/switchyard-host.js";
import { createLogger, createSilentLogger, type Logger } from "../../src/logging/logger.js";

export { SCRIPTED_PROVIDER_PLUGIN_DIR };

/** A scripted provider instance for a test config. */
export function scriptedInstance(
  id: string,
  options: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return { id, driver: "scripted", options, ...extra };
}

export interface TestHost {
  readonly host: SwitchyardHost;
  readonly home: string;
  readonly gateDir: string;
  readonly workspace: string;
  cleanup(): Promise<void>;
}

/** Starts a host on a temporary home with the scripted provider plugin loaded. */
export async function startTestHost(
  options: {
    providers?: unknown[] | ((dirs: { home: string; gateDir: string }) => unknown[]);
    plugins?: string[];
    builtinPluginsDir?: string | null;
    overrides?: (container: DependencyContainer) => void;
    home?: string;
    start?: boolean;
    server?: Record<string, unknown>;
    budgets?: Record<string, unknown>;
    pricing?: Record<string, unknown>;
    scheduling?: Record<string, unknown>;
    reach?: Record<string, unknown>;
    workspaces?: Record<string, unknown>;
    profiles?: unknown[];
    /** The host's logger (default silent, or SWITCHYARD_TEST_LOG's level on stderr). */
    logger?: Logger;
  } = {},
): Promise<TestHost> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "switchyard-test-"));
  const gateDir = join(home, "gates");
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-ws-"));
  const host = await SwitchyardHost.create({
    home,
    config: {
      providers:
        typeof options.providers === "function"
          ? options.providers({ home, gateDir })
          : (options.providers ?? [scriptedInstance("scripted", { gateDir, stateDir: join(home, "scripted-state") })]),
      plugins: options.plugins ?? [SCRIPTED_PROVIDER_PLUGIN_DIR],
      ...(options.server ? { server: options.server } : {}),
      ...(options.budgets ? { budgets: options.budgets } : {}),
      ...(options.pricing ? { pricing: options.pricing } : {}),
      ...(options.scheduling ? { scheduling: options.scheduling } : {}),
      ...(options.reach ? { reach: options.reach } : {}),
      ...(options.workspaces ? { workspaces: options.workspaces } : {}),
      ...(options.profiles ? { profiles: options.profiles } : {}),
    },
    builtinPluginsDir: options.builtinPluginsDir ?? null,
    logger:
      options.logger ??
      (process.env.SWITCHYARD_TEST_LOG
        ? createLogger({ level: process.env.SWITCHYARD_TEST_LOG })
        : createSilentLogger()),
    ...(options.overrides ? { overrides: options.overrides } : {}),
  });
  if (options.start !== false) await host.start();
  return {
    host,
    home,
    gateDir,
    workspace,
    cleanup: async () => {
      await host.stop();
      if (options.home === undefined) rmSync(home, { recursive: true, force: true });
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}
