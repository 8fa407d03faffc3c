import { existsSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type {
  ModelDescriptor,
  PluginContext,
  ProbeDepth,
  ProviderInstanceDescriptor,
  ProviderStatus,
} from "@switchyard/sdk";
import { resolveCursorNode } from "./cursor-node.js";
import type { CursorOptions } from "./cursor-options.js";
import { locateCursorSdk } from "./cursor-sdk-location.js";
import { CursorSidecar } from "./cursor-sidecar-process.js";

/** What a probe needs. */
export interface CursorProbeInput {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: CursorOptions;
  readonly context: PluginContext;
  readonly env: Readonly<Record<string, string>>;
}

const NO_CREDENTIALS =
  "The Cursor SDK has no API key: set CURSOR_API_KEY in the instance environment (a key from the Cursor dashboard), or sign in once with Cursor.auth.login() under the instance's HOME.";

/**
 * Whether the environment carries a Cursor key: `CURSOR_API_KEY`, else a stored sign-in
 * (`~/.cursor/sdk/auth.json`, which only a call can prove still valid).
 */
export function cursorCredentials(env: Readonly<Record<string, string>>): boolean | "unknown" {
  if ((env["CURSOR_API_KEY"] ?? "") !== "") return true;
  return existsSync(join(env["HOME"] ?? homedir(), ".cursor", "sdk", "auth.json")) ? "unknown" : false;
}

/** The catalog's models (what Cursor's backend lists for the account), then the instance's custom ones it does not list. */
export function cursorModels(
  models: readonly { readonly id: string; readonly displayName?: string }[],
  customModels: readonly string[],
): ModelDescriptor[] {
  const listed: ModelDescriptor[] = models.map((model) => ({
    id: model.id,
    ...(model.displayName ? { displayName: model.displayName } : {}),
    source: "endpoint",
  }));
  return [...listed, ...customModels.filter((id) => !listed.some((model) => model.id === id)).map((id) => ({ id }))];
}

/**
 * The instance's status. `inspect` looks without touching: the Node that would run the sidecar
 * (`--version`), the SDK's package (see locateCursorSdk), a key in the environment; its model list is the custom models.
 * `full` (the default) also starts the sidecar, loads the SDK and lists the account's models
 * (`Cursor.models.list()`, which proves the key); no agent is created and no run starts.
 */
export async function probeCursor(input: CursorProbeInput, depth: ProbeDepth = "full"): Promise<ProviderStatus> {
  const custom = input.instance.customModels.map((id) => ({ id }));
  const node = await resolveCursorNode(input.context.process, input.options.nodePath, input.env);
  const located = locateCursorSdk({ sdkPath: input.options.sdkPath, nodePath: node.ok ? node.node.path : null });
  if (!located.ok) {
    return {
      installed: false,
      executable: false,
      authenticated: false,
      models: custom,
      message: node.ok ? located.reason : `${located.reason} ${node.reason}`,
    };
  }
  const sdkVersion = located.sdk.version;
  // A release the plugin is not tested with is usable, with the warning in the message.
  const notes = (message?: string): { message?: string } => {
    const text = [located.warning, message]
      .filter((part): part is string => part !== undefined && part !== null)
      .join(" ");
    return text === "" ? {} : { message: text };
  };
  if (!node.ok)
    return {
      installed: true,
      executable: false,
      authenticated: false,
      version: sdkVersion,
      models: custom,
      ...notes(node.reason),
    };
  const credentials = cursorCredentials(input.env);
  if (depth === "inspect" || credentials === false) {
    return {
      installed: true,
      executable: true,
      authenticated: credentials,
      version: sdkVersion,
      models: custom,
      ...notes(credentials === false ? NO_CREDENTIALS : undefined),
    };
  }
  const sidecar = CursorSidecar.start({
    helpers: input.context.process,
    node: node.node.path,
    cwd: tmpdir(),
    env: input.env,
    logger: input.context.logger,
    label: "cursor probe",
    listener: null,
  });
  let loaded = false;
  try {
    await sidecar.initialize({ sdkDir: located.sdk.dir }, input.options.probeTimeoutMs);
    loaded = true;
    const { models } = await sidecar.listModels(input.options.probeTimeoutMs);
    return {
      installed: true,
      executable: true,
      authenticated: true,
      version: sdkVersion,
      models: cursorModels(models, input.instance.customModels),
      ...notes(),
    };
  } catch (error) {
    const failure = error as { code?: string; details?: { cursorErrorKind?: string }; message: string };
    const rejected = failure.details?.cursorErrorKind === "authentication";
    return {
      installed: true,
      executable: failure.code !== "session_closed" && failure.code !== "timeout",
      authenticated: rejected ? false : "unknown",
      version: sdkVersion,
      models: custom,
      ...notes(
        sidecar.describe(
          !loaded
            ? `The Cursor SDK in ${located.sdk.dir} did not load in its sidecar (${node.node.path}, ${node.node.version}): ${failure.message}`
            : rejected
              ? `Cursor refused the API key: ${failure.message}`
              : `The Cursor SDK could not list models: ${failure.message}`,
        ),
      ),
    };
  } finally {
    await sidecar.stop();
  }
}
