/**
 * Shared fixtures for the Cursor plugin tests: the fake Cursor backend, an isolated Cursor data
 * folder, a plugin context with real process groups
 * and a recording logger, and helpers to open sessions and run turns against the real
 * `@cursor/sdk`. Nothing of the plugin or the SDK is mocked; Cursor's backend (its agent loop
 * and model) is the only stand-in.
 */
import { fileURLToPath } from "node:url";
import type { OpenSessionInput, OrchestrationAdapter, ProviderInstanceDescriptor } from "@switchyard/sdk";
import {
  FakeCursorBackend,
  createAcpTestContext,
  createCursorHome,
  createEventRecorder,
  type AcpTestContext,
  type AdapterEventRecorder,
  type CursorHome,
  type FakeCursorBackendOptions,
} from "@switchyard/testkit";
import plugin, { createCursorAdapter, type CursorOptions, type CursorProviderSession } from "../src/index.js";

/** The plugin folder, as the plugin host loads it. */
export const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** Validates driver options through the plugin's own schema. */
export async function cursorOptions(raw: Record<string, unknown> = {}): Promise<CursorOptions> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === "cursor");
  if (!driver?.optionsSchema) throw new Error("the cursor driver is missing");
  const result = await driver.optionsSchema["~standard"].validate(raw);
  if (result.issues) throw new Error(JSON.stringify(result.issues));
  return result.value as CursorOptions;
}

/** The instance descriptor for a Cursor home. */
export function cursorInstance(home: CursorHome, environment: Record<string, string> = {}, customModels: readonly string[] = []): ProviderInstanceDescriptor {
  return { id: "cursor-test", driver: "cursor", displayName: "Cursor", homePath: home.home, environment: { ...home.env, ...environment }, customModels };
}

/** One lab: fake backend, Cursor home, plugin context, adapter. */
export interface CursorLab {
  readonly backend: FakeCursorBackend;
  readonly home: CursorHome;
  readonly ctx: AcpTestContext;
  readonly adapter: OrchestrationAdapter;
  /** Opens a session; its events go to the returned recorder. */
  open(overrides?: Partial<OpenSessionInput>): Promise<{ session: CursorProviderSession; events: AdapterEventRecorder }>;
  dispose(): Promise<void>;
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
  const home = await createCursorHome({ backendUrl: backend.url, ...(options.backend?.apiKey !== undefined ? { apiKey: options.backend.apiKey } : {}) });
  for (const name of options.withoutEnv ?? []) delete home.env[name];
  const ctx = await createAcpTestContext();
  const adapter = createCursorAdapter({
    instance: cursorInstance(home, options.environment, options.customModels),
    options: await cursorOptions(options.driverOptions),
    context: ctx.context,
  });
  const sessions: CursorProviderSession[] = [];
  let counter = 0;
  return {
    backend,
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
      })) as CursorProviderSession;
      sessions.push(session);
      return { session, events };
    },
    async dispose() {
      for (const session of sessions) await session.close();
      await adapter.dispose?.();
      await ctx.dispose();
      await backend.close();
      await home.cleanup();
    },
  };
}
