import { SwitchyardHost } from "../host/switchyard-host.js";
import { createContainer } from "../host/composition-root.js";
import { resolve } from "../util/di-token.js";
import { createLogger, createSilentLogger } from "../logging/logger.js";
import { type ManagedProviders, ProviderRegistryToken } from "../providers/ports.js";
import type { SwitchyardPaths } from "../config/paths.js";
import { type HarnessProcessLedger, HarnessProcessLogToken } from "../store/ports.js";
import { type PluginRecord, PluginHostToken } from "../plugin-host/ports.js";
import { colorEnabled } from "./output.js";

/** Options every command that opens the home shares. */
export interface HomeOptions {
  readonly home?: string;
}

/** Harness processes a listing starts are not recorded: that would need the database. */
const UNRECORDED_PROCESSES: HarnessProcessLedger = {
  started: () => undefined,
  exited: () => undefined,
  leftovers: () => [],
  forgetLeftovers: () => undefined,
};

function cliLogger() {
  return process.env.SWITCHYARD_LOG_LEVEL
    ? createLogger({ color: colorEnabled(process.stderr) })
    : createSilentLogger();
}

/**
 * Opens the host for a one-shot command: plugins loaded and provider instances created, but
 * no worker started. Logs stay quiet unless SWITCHYARD_LOG_LEVEL asks for them.
 */
export async function openHost(options: HomeOptions): Promise<SwitchyardHost> {
  return SwitchyardHost.create({ ...(options.home !== undefined ? { home: options.home } : {}), logger: cliLogger() });
}

/** Runs `fn` with an opened host and always closes it. */
export async function withHost<T>(options: HomeOptions, fn: (host: SwitchyardHost) => Promise<T> | T): Promise<T> {
  const host = await openHost(options);
  try {
    return await fn(host);
  } finally {
    await host.stop();
  }
}

/**
 * Runs `fn` with the configured provider instances only: plugins loaded and adapters created,
 * but no database opened (nor created) and no harness process recorded in one. For commands
 * that only look at providers (`switchyard providers`).
 */
export async function withProviders<T>(
  options: HomeOptions,
  fn: (providers: ManagedProviders, paths: SwitchyardPaths, plugins: readonly PluginRecord[]) => Promise<T> | T,
): Promise<T> {
  const { container, paths, config } = createContainer({
    ...(options.home !== undefined ? { home: options.home } : {}),
    logger: cliLogger(),
    // Probe processes are short-lived and stopped by the probe itself.
    overrides: (c) => c.register(HarnessProcessLogToken, { useValue: UNRECORDED_PROCESSES }),
  });
  const pluginHost = resolve(container, PluginHostToken);
  await pluginHost.load();
  const providers = resolve(container, ProviderRegistryToken);
  await providers.initialize(config.providers);
  try {
    return await fn(providers, paths, pluginHost.list());
  } finally {
    await providers.dispose();
  }
}
