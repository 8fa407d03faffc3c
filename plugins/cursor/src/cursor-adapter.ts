import { join } from "node:path";
import {
  defineAdapter,
  defineDriver,
  harnessEnvironment,
  type CreateInstanceInput,
  type OrchestrationAdapter,
  type ProviderDriver,
} from "@switchyard/sdk";
import { CURSOR_CAPABILITIES } from "./cursor-capabilities.js";
import { cursorOptionsSchema, type CursorOptions } from "./cursor-options.js";
import { probeCursor } from "./cursor-probe.js";
import { CursorProviderSession } from "./cursor-session.js";

/**
 * The OrchestrationAdapter of one Cursor instance, on the harness kit's adapter shell: each
 * session runs its own sidecar (Node ≥ 22.13) with the Cursor SDK and one local agent.
 */
export function createCursorAdapter({
  instance,
  options,
  context,
}: CreateInstanceInput<CursorOptions>): OrchestrationAdapter {
  // The instance home is Cursor's data folder (CURSOR_DATA_DIR: projects, transcripts,
  // settings); its environment carries CURSOR_API_KEY and, for a test or a proxy,
  // CURSOR_BACKEND_URL.
  const env = harnessEnvironment({ instance, homeVariable: "CURSOR_DATA_DIR" });
  const storeRoot = options.storeDir ?? join(context.paths.dataDir, instance.id);
  return defineAdapter({
    instance,
    driverKind: "cursor",
    capabilities: CURSOR_CAPABILITIES,
    probe: (probeOptions) => probeCursor({ instance, options, context, env }, probeOptions?.depth),
    createSession: (input, onClosed) =>
      new CursorProviderSession({ instance, options, context, env, storeRoot }, input, onClosed),
  });
}

/** The `cursor` driver. */
export function createCursorDriver(): ProviderDriver<CursorOptions> {
  return defineDriver<CursorOptions>({
    driverKind: "cursor",
    displayName: "Cursor",
    optionsSchema: cursorOptionsSchema,
    capabilities: CURSOR_CAPABILITIES,
    create: createCursorAdapter,
  });
}
