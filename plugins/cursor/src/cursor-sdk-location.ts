import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import type { HarnessSpec } from "@switchyard/sdk";
import { CURSOR_SDK_VERSION } from "./cursor-wire.js";

/** An installed `@cursor/sdk` package: its folder and release. */
export interface CursorSdkLocation {
  readonly dir: string;
  readonly version: string;
  /** Where it was found: the `sdkPath` option, beside the plugin, or among the sidecar Node's global packages. */
  readonly source: "option" | "plugin" | "node-global";
}

/** The SDK the sidecar loads (with a warning when it is not the release the plugin is tested with), or why there is none. */
export type CursorSdkResolution =
  | { readonly ok: true; readonly sdk: CursorSdkLocation; readonly warning: string | null }
  | { readonly ok: false; readonly reason: string };

/** What {@link locateCursorSdk} looks at. */
export interface CursorSdkSearch {
  /** The instance's `sdkPath` option: the `@cursor/sdk` package folder. */
  readonly sdkPath?: string | undefined;
  /** The Node the sidecar runs on; `npm install -g` under it puts packages in `<prefix>/lib/node_modules`. */
  readonly nodePath: string | null;
  /** The package as this plugin resolves it (its own `node_modules`); replaceable so each branch can be tested in this repository, where it always resolves. */
  readonly besidePlugin?: () => string | null;
}

const INSTALL_COMMANDS = `npm install -g @cursor/sdk@${CURSOR_SDK_VERSION} with the Node that runs the sidecar, or npm install @cursor/sdk@${CURSOR_SDK_VERSION} beside the plugin`;

/**
 * The Cursor SDK as the sdk's harness data (what `npm run harness-currency` reads, as for every
 * plugin): the one release the plugin is tested with, from {@link CURSOR_SDK_VERSION}.
 */
export const CURSOR_SDK_HARNESS: HarnessSpec = {
  displayName: "The Cursor SDK (@cursor/sdk)",
  option: "sdkPath",
  commands: [],
  packages: ["@cursor/sdk"],
  install: INSTALL_COMMANDS,
  testedVersions: CURSOR_SDK_VERSION,
};

/** The version of the `@cursor/sdk` package in `dir`, or null when `dir` holds no such package. */
function sdkVersionIn(dir: string): string | null {
  const manifest = join(dir, "package.json");
  if (!existsSync(manifest)) return null;
  try {
    const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown; version?: unknown };
    return parsed.name === "@cursor/sdk" && typeof parsed.version === "string" ? parsed.version : null;
  } catch {
    return null;
  }
}

/** The `@cursor/sdk` folder this plugin's own resolution finds (its `exports` hide package.json, so it walks up from the entry). */
export function cursorSdkBesidePlugin(): string | null {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve("@cursor/sdk");
  } catch {
    return null;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    if (sdkVersionIn(dir) !== null) return dir;
  }
  return null;
}

/**
 * Finds the Cursor SDK for the sidecar, like a harness binary: the `sdkPath` option, else the
 * package beside this plugin, else the sidecar Node's global packages. The SDK is not a
 * dependency of the plugin (it is 50 MB, and only users of Cursor need it), so a missing one
 * gets a reason that says where it looked and how to install it. Reads files only.
 */
export function locateCursorSdk(search: CursorSdkSearch): CursorSdkResolution {
  const tried: string[] = [];
  const found = (dir: string, source: CursorSdkLocation["source"]): CursorSdkResolution | null => {
    const version = sdkVersionIn(dir);
    if (version === null) {
      tried.push(
        `${dir} (${source === "option" ? "the sdkPath option" : source === "plugin" ? "beside the plugin" : "the Node's global packages"})`,
      );
      return null;
    }
    const warning =
      version === CURSOR_SDK_VERSION
        ? null
        : `The cursor plugin is tested with @cursor/sdk ${CURSOR_SDK_VERSION}; ${dir} holds ${version}.`;
    return { ok: true, sdk: { dir, version, source }, warning };
  };
  if (search.sdkPath !== undefined) {
    // A configured folder is the user's choice: nothing else is tried behind it.
    return (
      found(resolve(search.sdkPath), "option") ?? {
        ok: false,
        reason: `The sdkPath option names ${resolve(search.sdkPath)}, which holds no @cursor/sdk package. Point it at the package's folder (…/node_modules/@cursor/sdk) once it is installed (${INSTALL_COMMANDS}).`,
      }
    );
  }
  const beside = (search.besidePlugin ?? cursorSdkBesidePlugin)();
  if (beside !== null) {
    const result = found(beside, "plugin");
    if (result !== null) return result;
  } else {
    tried.push("beside the plugin (not resolvable from it)");
  }
  if (search.nodePath !== null) {
    const result = found(
      join(dirname(dirname(search.nodePath)), "lib", "node_modules", "@cursor", "sdk"),
      "node-global",
    );
    if (result !== null) return result;
  }
  return {
    ok: false,
    reason: `The Cursor SDK (@cursor/sdk) is not installed: looked ${tried.join(", ")}. Install it (${INSTALL_COMMANDS}), or set the instance's sdkPath option to the package's folder.`,
  };
}
