/**
 * Shared fixtures for the Cursor plugin tests: the fake Cursor backend, an isolated Cursor data
 * folder, and the testkit's session lab (a plugin context with real process groups and a
 * recording logger) around the real `@cursor/sdk`. Nothing of the plugin or the SDK is mocked;
 * Cursor's backend (its agent loop and model) is the only stand-in.
 */
import { fileURLToPath } from "node:url";
import type { OrchestrationAdapter, ProviderInstanceDescriptor } from "@switchyard/sdk";
import {
  FakeCursorBackend,
  createCursorHome,
  createSessionLab,
  validateDriverOptions,
  type CursorHome,
  type FakeCursorBackendOptions,
  type SessionLab,
} from "@switchyard/testkit";
import plugin, { createCursorAdapter, type CursorOptions, type CursorProviderSession } from "../src/index.js";

/** The plugin folder, as the plugin host loads it. */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** The instance descriptor for a Cursor home. */
export function cursorInstance(
  home: CursorHome,
  environment: Record<string, string> = {},
  customModels: readonly string[] = [],
): ProviderInstanceDescriptor {
  return {
    id: "cursor-test",
    driver: "cursor",
    displayName: "Cursor",
    homePath: home.home,
    environment: { ...home.env, ...environment },
    customModels,
  };
}

/** One lab: fake backend, Cursor home, plugin context, adapter. */
export interface CursorLab extends SessionLab<CursorProviderSession, OrchestrationAdapter, CursorHome> {
  readonly backend: FakeCursorBackend;
}

/** Builds a lab. `environment` is laid over the home's; `withoutEnv` removes variables from the home's first. */
export async function createCursorLab(
  options: {
    backend?: FakeCursorBackendOptions;
    environment?: Record<string, string>;
    withoutEnv?: readonly string[];
    customModels?: readonly string[];
    driverOptions?: Record<string, unknown>;
  } = {},
): Promise<CursorLab> {
  const backend = await FakeCursorBackend.start(options.backend);
  const home = await createCursorHome({
    backendUrl: backend.url,
    ...(options.backend?.apiKey !== undefined ? { apiKey: options.backend.apiKey } : {}),
  });
  for (const name of options.withoutEnv ?? []) delete home.env[name];
  const instance = cursorInstance(home, options.environment, options.customModels);
  const driverOptions = await validateDriverOptions<CursorOptions>(plugin, "cursor", options.driverOptions);
  const lab = await createSessionLab<CursorProviderSession, OrchestrationAdapter, CursorHome>({
    home,
    standIn: backend,
    createAdapter: (context) => createCursorAdapter({ instance, options: driverOptions, context }),
  });
  return Object.assign(lab, { backend });
}
