import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bareImports, packageOf } from "../../spec/test/import-graph.js";

// A plugin installs the sdk, so whatever the sdk imports ends up in every plugin. It must not
// reach the host (@switchyard/core brings better-sqlite3, tsyringe, the MCP SDK…).

const SDK_DIR = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(`${SDK_DIR}/package.json`, "utf8")) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  exports: Record<string, unknown>;
};
const ENTRIES = [`${SDK_DIR}/dist/index.js`, `${SDK_DIR}/dist/acp/index.js`];

describe("@switchyard/sdk", () => {
  it("does not depend on @switchyard/core in any way its package.json says", () => {
    for (const field of [manifest.dependencies, manifest.peerDependencies, manifest.devDependencies]) {
      expect(Object.keys(field ?? {})).not.toContain("@switchyard/core");
    }
    expect(manifest.dependencies?.["@switchyard/spec"]).toBeDefined();
  });

  it("never imports @switchyard/core, following its built modules from every entry", () => {
    const imports = bareImports(ENTRIES);
    const core = [...imports.entries()].filter(([specifier]) => packageOf(specifier) === "@switchyard/core");
    expect(core, JSON.stringify(core)).toEqual([]);
    // The same holds for its declarations, which a plugin's typecheck reads.
    const typed = [...bareImports(ENTRIES.map((entry) => entry.replace(/\.js$/, ".d.ts"))).keys()];
    expect(typed.filter((specifier) => packageOf(specifier) === "@switchyard/core")).toEqual([]);
  });

  it("imports only packages it declares, so an installed copy finds them", () => {
    const declared = new Set(Object.keys(manifest.dependencies ?? {}));
    const used = [
      ...new Set([...bareImports(ENTRIES).keys()].filter((specifier) => !specifier.startsWith("node:")).map(packageOf)),
    ].sort();
    expect(used).toEqual(["@agentclientprotocol/sdk", "@switchyard/spec", "semver"]);
    for (const name of used) expect(declared.has(name), name).toBe(true);
  });

  it("no longer exports the test lab (it is @switchyard/testkit)", () => {
    expect(Object.keys(manifest.exports).sort()).toEqual([".", "./acp", "./package.json"]);
  });
});
