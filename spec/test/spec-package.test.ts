import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bareImports } from "./import-graph.js";

// @switchyard/spec is what every plugin ends up importing: it must pull in nothing else.

const SPEC_DIR = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(`${SPEC_DIR}/package.json`, "utf8")) as Record<string, unknown>;

describe("@switchyard/spec", () => {
  it("has no dependencies, and no peer it cannot do without", () => {
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.optionalDependencies).toBeUndefined();
    expect(manifest.bundleDependencies).toBeUndefined();
    // Only types may be asked of the host project, and only optionally.
    const peers = Object.keys((manifest.peerDependencies as Record<string, string> | undefined) ?? {});
    const meta = (manifest.peerDependenciesMeta as Record<string, { optional?: boolean }> | undefined) ?? {};
    for (const peer of peers) {
      expect(peer.startsWith("@types/"), peer).toBe(true);
      expect(meta[peer]?.optional, peer).toBe(true);
    }
  });

  it("loads nothing at run time but its own files, as built", () => {
    expect([...bareImports([`${SPEC_DIR}/dist/index.js`]).keys()]).toEqual([]);
  });

  it("names only Node's own types in its declarations", () => {
    const named = [...bareImports([`${SPEC_DIR}/dist/index.d.ts`]).keys()];
    expect(
      named.every((specifier) => specifier.startsWith("node:")),
      named.join(", "),
    ).toBe(true);
  });

  it("exports its types and code from one entry, types first", () => {
    expect(manifest.exports).toEqual({
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./package.json": "./package.json",
    });
    expect(manifest.files).toContain("dist");
  });
});
