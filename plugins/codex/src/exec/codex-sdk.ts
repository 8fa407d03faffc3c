import type * as CodexSdkModule from "@openai/codex-sdk";
import {
  findHarness,
  importHarnessPackage,
  type HarnessSearch,
  type HarnessSpec,
  type PluginContext,
} from "@switchyard/sdk";

/** The Codex SDK module (`@openai/codex-sdk`), which the `codex-exec` driver runs in-process. */
export type CodexSdk = typeof CodexSdkModule;

/**
 * The Codex SDK as this plugin looks for it. It is a library, not a command: the driver imports
 * it from the user's global install or from next to the plugin, and never depends on it itself
 * (the SDK pins its own `@openai/codex`, a 400 MB native binary a lean install must not pull).
 * The `codex` it runs is found like the `codex` driver's (codexPath, PATH, packages).
 */
export const CODEX_SDK_HARNESS: HarnessSpec = {
  displayName: "The Codex SDK (@openai/codex-sdk, which the codex-exec driver runs)",
  commands: [],
  packages: ["@openai/codex-sdk"],
  install: "npm i -g @openai/codex-sdk",
  testedVersions: "~0.163.0",
};

/** Where the Codex SDK is (global npm root, else next to the plugin). */
export function findCodexSdk(
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<HarnessSearch> {
  return findHarness(CODEX_SDK_HARNESS, { env, context, from: import.meta.url });
}

let loading: Promise<CodexSdk> | null = null;

/**
 * Imports the Codex SDK on first use (a host with no `codex-exec` session never loads it), or
 * throws `provider_unavailable` saying where it looked and how to install it.
 */
export function loadCodexSdk(
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CodexSdk> {
  loading ??= findCodexSdk(context, env)
    .then((search) => importHarnessPackage<CodexSdk>(search))
    .catch((error: unknown) => {
      loading = null;
      throw error;
    });
  return loading;
}
