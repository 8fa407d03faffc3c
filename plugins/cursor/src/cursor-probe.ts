import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ModelDescriptor, PluginContext, ProbeDepth, ProviderInstanceDescriptor, ProviderStatus } from "@switchyard/sdk";
import { resolveCursorNode } from "./cursor-node.js";
import type { CursorOptions } from "./cursor-options.js";
import { CursorSidecar } from "./cursor-sidecar-process.js";
import { CURSOR_SDK_VERSION } from "./cursor-wire.js";

/** What a probe needs. */
export interface CursorProbeInput {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: CursorOptions;
  readonly context: PluginContext;
  readonly env: Readonly<Record<string, string>>;
}

/** The installed `@cursor/sdk`'s version, read from its package.json without loading it (its exports hide the file). */
export function installedCursorSdkVersion(): string | null {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve("@cursor/sdk");
  } catch {
    return null;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
    if (parsed.name === "@cursor/sdk") return parsed.version ?? null;
  }
  return null;
}

const NO_CREDENTIALS = "The Cursor SDK has no API key: set CURSOR_API_KEY in the instance environment (a key from the Cursor dashboard), or sign in once with Cursor.auth.login() under the instance's HOME.";

/**
 * Whether the environment carries a Cursor key: `CURSOR_API_KEY`, else a stored sign-in
 * (`~/.cursor/sdk/auth.json`, which only a call can prove still valid).
 */
export function cursorCredentials(env: Readonly<Record<string, string>>): boolean | "unknown" {
  if ((env["CURSOR_API_KEY"] ?? "") !== "") return true;
  return existsSync(join(env["HOME"] ?? homedir(), ".cursor", "sdk", "auth.json")) ? "unknown" : false;
}

/** The catalog's models, then the instance's custom ones it does not list. */
export function cursorModels(models: readonly { readonly id: string; readonly displayName?: string }[], customModels: readonly string[]): ModelDescriptor[] {
  const listed: ModelDescriptor[] = models.map((model) => ({ id: model.id, ...(model.displayName ? { displayName: model.displayName } : {}) }));
  return [...listed, ...customModels.filter((id) => !listed.some((model) => model.id === id)).map((id) => ({ id }))];
}

/**
 * The instance's status. `inspect` looks without touching: the SDK's package, the Node that
 * would run it (`--version`), a key in the environment; its model list is the custom models.
 * `full` (the default) also starts the sidecar, loads the SDK and lists the account's models
 * (`Cursor.models.list()`, which proves the key); no agent is created and no run starts.
 */
export async function probeCursor(input: CursorProbeInput, depth: ProbeDepth = "full"): Promise<ProviderStatus> {
  const custom = input.instance.customModels.map((id) => ({ id }));
  const sdkVersion = installedCursorSdkVersion();
  if (sdkVersion === null) {
    return { installed: false, executable: false, authenticated: false, models: custom, message: `@cursor/sdk is not installed. Install the plugin with its dependencies (npm install @switchyard/plugin-cursor, which brings @cursor/sdk ${CURSOR_SDK_VERSION}).` };
  }
  const node = await resolveCursorNode(input.context.process, input.options.nodePath, input.env);
  if (!node.ok) return { installed: true, executable: false, authenticated: false, version: sdkVersion, models: custom, message: node.reason };
  const credentials = cursorCredentials(input.env);
  if (depth === "inspect" || credentials === false) {
    return { installed: true, executable: true, authenticated: credentials, version: sdkVersion, models: custom, ...(credentials === false ? { message: NO_CREDENTIALS } : {}) };
  }
  const sidecar = CursorSidecar.start({ helpers: input.context.process, node: node.node.path, cwd: tmpdir(), env: input.env, logger: input.context.logger, label: "cursor probe", listener: null });
  try {
    await sidecar.initialize(input.options.probeTimeoutMs);
    const { models } = await sidecar.listModels(input.options.probeTimeoutMs);
    return { installed: true, executable: true, authenticated: true, version: sdkVersion, models: cursorModels(models, input.instance.customModels) };
  } catch (error) {
    const failure = error as { code?: string; details?: { cursorErrorKind?: string }; message: string };
    const rejected = failure.details?.cursorErrorKind === "authentication";
    return {
      installed: true,
      executable: failure.code !== "session_closed" && failure.code !== "timeout",
      authenticated: rejected ? false : "unknown",
      version: sdkVersion,
      models: custom,
      message: sidecar.describe(rejected ? `Cursor refused the API key: ${failure.message}` : `The Cursor SDK could not list models: ${failure.message}`),
    };
  } finally {
    await sidecar.stop();
  }
}
