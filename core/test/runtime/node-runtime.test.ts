import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";

// CI runs the core and sdk tests under Node 20 and again under Node 22 (.ci/run). This file says
// which Node a run really used, and fails when it is not the one the step asked for
// (SWITCHYARD_EXPECT_NODE_MAJOR), so a step that silently fell back to the machine's Node, or
// loaded a native addon built for another ABI, cannot pass.
describe("the Node running these tests", () => {
  it("is the one the CI step asked for, and loads better-sqlite3 built for its ABI", () => {
    process.stdout.write(`tests running under Node ${process.version} (ABI ${process.versions.modules})\n`);
    const expected = process.env.SWITCHYARD_EXPECT_NODE_MAJOR;
    if (expected !== undefined) expect(process.versions.node.split(".")[0]).toBe(expected);
    const db = new Database(":memory:");
    try {
      expect(db.prepare("SELECT sqlite_version() AS version").get()).toMatchObject({ version: expect.stringMatching(/^3\./) });
    } finally {
      db.close();
    }
  });
});
