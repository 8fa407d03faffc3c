import { SwitchyardHost } from "../host/switchyard-host.js";
import { createLogger, createSilentLogger } from "../logging/logger.js";
import { colorEnabled } from "./output.js";

/** Options every command that opens the home shares. */
export interface HomeOptions {
  readonly home?: string;
}

/**
 * Opens the host for a one-shot command: plugins loaded and provider instances created, but
 * no worker started. Logs stay quiet unless SWITCHYARD_LOG_LEVEL asks for them.
 */
export async function openHost(options: HomeOptions): Promise<SwitchyardHost> {
  const logger = process.env.SWITCHYARD_LOG_LEVEL ? createLogger({ color: colorEnabled(process.stderr) }) : createSilentLogger();
  return SwitchyardHost.create({ ...(options.home !== undefined ? { home: options.home } : {}), logger });
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
