import { createRequire } from "node:module";
import {
  findHarness,
  packageEntry,
  type HarnessLookup,
  type HarnessSearch,
  type HarnessSource,
  type HarnessSpec,
  type PluginContext,
} from "@switchyard/sdk";

/**
 * The Claude harness is two things: the Claude Agent SDK, a library this plugin runs
 * in-process, and the `claude` executable the SDK starts. Neither is a dependency of the
 * plugin (the SDK's optional platform package bundles a 384 MB native `claude`, which a lean
 * install must not pull for a user who does not run Claude): the plugin uses the SDK the user
 * installed (`npm i -g @anthropic-ai/claude-agent-sdk`, or next to the plugin) and the `claude`
 * the instance names, else the one bundled with that SDK (made for it), else `claude` on PATH.
 */

/** The Claude Agent SDK as this plugin looks for it. */
export const CLAUDE_SDK_HARNESS: HarnessSpec = {
  displayName: "The Claude Agent SDK (@anthropic-ai/claude-agent-sdk)",
  commands: [],
  packages: ["@anthropic-ai/claude-agent-sdk"],
  install:
    "npm i -g @anthropic-ai/claude-agent-sdk (it brings its own claude; add --omit=optional to use the claude on your PATH instead)",
  testedVersions: "~0.3.337",
};

/**
 * The `claude` executable. Releases before 2.1.332 do not read the MCP servers the SDK sends in
 * its initialize request, so Switchyard's tools would never reach the model: those are refused.
 */
export const CLAUDE_CODE_HARNESS: HarnessSpec = {
  displayName: "Claude Code",
  option: "claudePath",
  commands: ["claude"],
  packages: ["@anthropic-ai/claude-code"],
  install: "npm i -g @anthropic-ai/claude-agent-sdk (its bundled claude), or npm i -g @anthropic-ai/claude-code",
  testedVersions: "~2.1.332",
  supportedVersions: {
    range: ">=2.1.332",
    why: "older releases do not read the MCP servers the Agent SDK sends in its initialize request, so Switchyard's tools would not reach the model.",
  },
};

/** Where the `claude` a session runs comes from. */
export interface ClaudeBinary {
  readonly path: string;
  /** Where it was found (for the bundled one: where its SDK was). */
  readonly source: HarnessSource;
  /** The one the SDK bundles for this platform. */
  readonly bundled: boolean;
}

/** What a search for the Claude harness found. */
export interface ClaudeLookup {
  /** Where the SDK was looked for. */
  readonly sdk: HarnessSearch;
  /** Where `claude` was looked for (the bundled one counts as found where its SDK was). */
  readonly search: HarnessSearch;
  readonly binary: ClaudeBinary | null;
}

/** Where the Claude Agent SDK is: the global npm root, else next to the plugin. */
export function findClaudeSdk(
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<HarnessSearch> {
  return findHarness(CLAUDE_SDK_HARNESS, { env, context, from: import.meta.url });
}

/**
 * The native `claude` bundled with the SDK in `sdkDir` (its optional
 * `@anthropic-ai/claude-agent-sdk-<platform>-<arch>[-musl]` package, found the way the SDK
 * finds it), or null when it was installed without it.
 */
export function bundledClaude(sdkDir: string): string | null {
  const sdk = "@anthropic-ai/claude-agent-sdk";
  const fromSdk = createRequire(packageEntry(sdkDir));
  const platform = process.platform === "win32" || process.platform === "darwin" ? process.platform : "linux";
  const suffix = process.platform === "win32" ? ".exe" : "";
  const packages =
    platform === "linux"
      ? [`${sdk}-linux-${process.arch}`, `${sdk}-linux-${process.arch}-musl`]
      : [`${sdk}-${platform}-${process.arch}`];
  for (const name of packages) {
    try {
      return fromSdk.resolve(`${name}/claude${suffix}`);
    } catch {
      // not installed for this platform
    }
  }
  return null;
}

/**
 * Finds the SDK and the `claude` a session runs (see the module comment for the order), without
 * starting anything.
 */
export async function findClaude(
  claudePath: string | undefined,
  context: PluginContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ClaudeLookup> {
  const sdk = await findClaudeSdk(context, env);
  if (claudePath !== undefined) {
    const search = await findHarness(CLAUDE_CODE_HARNESS, {
      configured: claudePath,
      env,
      context,
      from: import.meta.url,
    });
    const found = search.found?.command ?? null;
    return { sdk, search, binary: found === null ? null : { path: found, source: "configured", bundled: false } };
  }
  const searched: HarnessLookup[] = [];
  if (sdk.found?.packageDir) {
    const bundled = bundledClaude(sdk.found.packageDir);
    searched.push({
      source: sdk.found.source,
      what: `the claude bundled with the Claude Agent SDK in ${sdk.found.packageDir}`,
      found: bundled,
    });
    if (bundled !== null) {
      const search: HarnessSearch = {
        spec: CLAUDE_CODE_HARNESS,
        found: {
          source: sdk.found.source,
          command: bundled,
          packageDir: null,
          packageName: null,
          packageVersion: null,
        },
        searched,
      };
      return { sdk, search, binary: { path: bundled, source: sdk.found.source, bundled: true } };
    }
  }
  const rest = await findHarness(CLAUDE_CODE_HARNESS, { env, context, from: import.meta.url });
  const search: HarnessSearch = { ...rest, searched: [...searched, ...rest.searched] };
  const found = rest.found?.command ?? null;
  return {
    sdk,
    search,
    binary: found === null || rest.found === null ? null : { path: found, source: rest.found.source, bundled: false },
  };
}
