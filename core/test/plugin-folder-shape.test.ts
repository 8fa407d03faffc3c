import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Every plugin folder has the templates' shape, so reading one teaches the others and a plugin
// scaffolded by `switchyard plugin new` looks like the built-in ones. The templates' id is
// `template` (the word `plugin new` replaces); a built-in plugin's id is its folder name.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface PluginPackageJson {
  type?: string;
  exports?: Record<string, unknown>;
  files?: string[];
  switchyard?: { specVersion?: string; drivers?: string[]; entry?: string };
  peerDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
}

function folders(parent: string): { dir: string; id: string }[] {
  const base = join(ROOT, parent);
  return readdirSync(base)
    .filter((entry) => statSync(join(base, entry)).isDirectory())
    .map((entry) => ({ dir: join(parent, entry), id: parent === "templates" ? "template" : entry }));
}

/** The text of a README's `## Capabilities` section, up to the next `## ` heading. */
function capabilitiesSection(readme: string): string | null {
  const start = readme.search(/^## Capabilities\s*$/m);
  if (start === -1) return null;
  const rest = readme.slice(start + "## Capabilities".length);
  const next = rest.search(/^## /m);
  return next === -1 ? rest : rest.slice(0, next);
}

describe("plugin folders", () => {
  const all = [...folders("templates"), ...folders("plugins")];

  it("are found: both templates and every built-in plugin", () => {
    expect(all.map(({ dir }) => dir)).toEqual(
      expect.arrayContaining([
        "templates/process-harness",
        "templates/acp-flavor",
        "plugins/codex",
        "plugins/claude",
        "plugins/opencode",
      ]),
    );
  });

  for (const { dir, id } of all) {
    it(`${dir} has the templates' shape`, () => {
      const at = (file: string) => join(ROOT, dir, file);
      const required = [
        "package.json",
        "README.md",
        "tsconfig.json",
        "src/index.ts",
        `src/${id}-adapter.ts`,
        `src/${id}-capabilities.ts`,
        `src/${id}-wire.ts`,
        `test/${id}.conformance.test.ts`,
        `test/${id}-adapter.test.ts`,
      ];
      expect(
        required.filter((file) => !existsSync(at(file))),
        "missing files",
      ).toEqual([]);

      const pkg = JSON.parse(readFileSync(at("package.json"), "utf8")) as PluginPackageJson;
      expect(pkg.type).toBe("module");
      expect(pkg.switchyard?.specVersion, "the manifest pins one spec major").toMatch(/^\^1\./);
      expect(pkg.switchyard?.entry).toBe("./dist/index.js");
      expect(pkg.switchyard?.drivers).toContain(id);
      expect(pkg.exports?.["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
      // The sdk is the host's copy (a peer); the host itself and its test lab never run inside a plugin.
      expect(pkg.peerDependencies?.["@switchyard/sdk"]).toBeDefined();
      expect(
        Object.keys(pkg.dependencies ?? {}).filter((name) =>
          ["@switchyard/sdk", "@switchyard/core", "@switchyard/testkit"].includes(name),
        ),
      ).toEqual([]);
      // What is packed: the built JavaScript and declarations, without incremental state or maps
      // (they point at sources not shipped), and the README; the TypeScript sources stay out
      // (install footprint).
      expect(pkg.files).toEqual(expect.arrayContaining(["dist", "!dist/.tsbuildinfo", "!dist/**/*.map", "README.md"]));
      expect(pkg.files).not.toContain("src");

      const tsconfig = JSON.parse(readFileSync(at("tsconfig.json"), "utf8")) as {
        compilerOptions?: Record<string, unknown>;
        include?: string[];
      };
      expect(tsconfig.compilerOptions).toMatchObject({ rootDir: "src", outDir: "dist" });
      expect(tsconfig.include).toEqual(["src"]);

      const capabilities = capabilitiesSection(readFileSync(at("README.md"), "utf8"));
      expect(capabilities, "README.md has a ## Capabilities section").not.toBeNull();
      expect(capabilities, "the Capabilities section holds a table").toMatch(/^\|.*\|\s*\n\|[\s:|-]+\|\s*$/m);
    });
  }
});
