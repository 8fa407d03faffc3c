import type { ProcessHelpers } from "@switchyard/sdk";
import { CURSOR_SDK_MIN_NODE } from "./cursor-wire.js";

/** The Node a sidecar runs on. */
export interface CursorNode {
  readonly path: string;
  readonly version: string;
  /** The `nodePath` option, or the Node that runs the host itself. */
  readonly source: "option" | "host";
}

/** A Node found for the sidecar, or why there is none (in words a user can act on). */
export type CursorNodeResolution =
  { readonly ok: true; readonly node: CursorNode } | { readonly ok: false; readonly reason: string };

/** True when `version` (`v22.13.0`) is at least the SDK's minimum. */
export function satisfiesCursorSdk(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return (
    major > CURSOR_SDK_MIN_NODE.major || (major === CURSOR_SDK_MIN_NODE.major && minor >= CURSOR_SDK_MIN_NODE.minor)
  );
}

const WANTED = `Node >= ${CURSOR_SDK_MIN_NODE.major}.${CURSOR_SDK_MIN_NODE.minor}`;
const HOW =
  "Point the instance's nodePath option at a newer Node, or remove it to run the SDK on the Node that runs Switchyard.";

/**
 * The Node that runs the Cursor SDK: the `nodePath` option (asked `--version`), else the Node that
 * runs the host. Switchyard itself needs Node >= 22.19, above the SDK's minimum, so the host's
 * Node always qualifies; it is still checked, for a host started on an older Node by hand.
 */
export async function resolveCursorNode(
  helpers: ProcessHelpers,
  nodePath: string | undefined,
  env: Readonly<Record<string, string>>,
): Promise<CursorNodeResolution> {
  if (nodePath === undefined) {
    if (!satisfiesCursorSdk(process.version))
      return {
        ok: false,
        reason: `Switchyard runs on Node ${process.version} (${process.execPath}), and the Cursor SDK needs ${WANTED}. Run Switchyard on a Node >= 22.19, as it requires.`,
      };
    return { ok: true, node: { path: process.execPath, version: process.version, source: "host" } };
  }
  const named = `nodePath "${nodePath}"`;
  const result = await helpers.run(nodePath, ["--version"], {
    cwd: process.cwd(),
    env,
    extendEnv: false,
    timeoutMs: 15_000,
    label: "node --version",
  });
  const version = /v?\d+\.\d+\.\d+\S*/.exec(result.stdout)?.[0];
  if (result.failed || result.exitCode !== 0 || version === undefined) {
    return {
      ok: false,
      reason: `${named} did not answer --version (${(result.stderr || result.stdout).trim().slice(-200) || `exit code ${result.exitCode ?? "none"}`}). ${HOW}`,
    };
  }
  if (!satisfiesCursorSdk(version))
    return { ok: false, reason: `${named} is ${version}, and the Cursor SDK needs ${WANTED}. ${HOW}` };
  return { ok: true, node: { path: nodePath, version, source: "option" } };
}
