import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLUGIN_TEMPLATE_NAMES, PLUGIN_TEMPLATES_DIR } from "../../src/plugin-host/plugin-scaffold.js";
import { HOST_VERSION } from "../../src/util/host-version.js";
import { SDK_TARBALLS_DIR } from "../../src/util/package-paths.js";
import { CLI, runCli } from "../support/cli.js";

// `switchyard plugin new`: each template becomes a package of its own, renamed to the new id and
// laid out like the built-in plugins. The whole path outside the repository (install, build,
// conformance, plugin install, a thread) is core/test/e2e/plugin-author.test.ts.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

interface PackageJson {
  name: string;
  private?: boolean;
  switchyard: { specVersion: string; drivers: string[]; entry: string };
  peerDependencies: Record<string, string>;
  dependencies: Record<string, string>;
  bundleDependencies: string[];
  devDependencies: Record<string, string>;
}

function allFiles(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? allFiles(path, base) : [relative(base, path)];
  });
}

describe("switchyard plugin new", () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-plugin-new-"));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("offers exactly the templates in templates/", () => {
    const folders = readdirSync(PLUGIN_TEMPLATES_DIR).filter((entry) =>
      statSync(join(PLUGIN_TEMPLATES_DIR, entry)).isDirectory(),
    );
    expect(folders.sort()).toEqual([...PLUGIN_TEMPLATE_NAMES].sort());
  });

  for (const template of PLUGIN_TEMPLATE_NAMES) {
    it(`scaffolds the ${template} template as a package of its own, with every name renamed to the id`, async () => {
      const parent = join(scratch, template);
      mkdirSync(parent);
      const created = await runCli(["plugin", "new", "acme-agent", "--template", template, "--dir", parent]);
      expect(created.code, created.stderr).toBe(0);
      const dir = join(parent, "acme-agent");
      expect(created.stdout).toContain(`Created switchyard-plugin-acme-agent in ${dir} (template ${template})`);
      expect(created.stdout).toContain("npm install");
      // The install line names the command that ran, which exists (core has no bin of its own).
      const launcher = /^ {2}node (\S+) plugin install /m.exec(created.stdout)?.[1];
      expect(launcher).toBe(realpathSync(CLI));
      const files = allFiles(dir).sort();
      // The plugin folder shape every plugin shares.
      for (const file of [
        "package.json",
        "README.md",
        "tsconfig.json",
        "vitest.config.ts",
        "src/index.ts",
        "src/acme-agent-adapter.ts",
        "src/acme-agent-capabilities.ts",
        "src/acme-agent-wire.ts",
        "test/acme-agent.conformance.test.ts",
        "test/acme-agent-adapter.test.ts",
      ]) {
        expect(files, file).toContain(file);
      }
      // Nothing of the template's own name is left, in names or contents.
      const leftovers = files.filter(
        (file) => /template/i.test(file) || /template/i.test(readFileSync(join(dir, file), "utf8")),
      );
      expect(leftovers).toEqual([]);
      expect(readFileSync(join(dir, "src", "acme-agent-capabilities.ts"), "utf8")).toContain(
        "export const ACME_AGENT_CAPABILITIES",
      );
      const readme = readFileSync(join(dir, "README.md"), "utf8");
      expect(readme).toContain("## Capabilities");
      expect(readme).toMatch(/\| capability \| value \| why \|/);

      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
      expect(pkg.name).toBe("switchyard-plugin-acme-agent");
      expect(pkg.private).toBeUndefined();
      expect(pkg.switchyard).toEqual({ specVersion: "^1.0.0", drivers: ["acme-agent"], entry: "./dist/index.js" });
      expect(pkg.peerDependencies).toEqual({ "@switchyard/sdk": `^${HOST_VERSION}` });
      expect(pkg.bundleDependencies).toEqual(Object.keys(pkg.dependencies));
      for (const name of ["spec", "sdk", "testkit", "core"]) {
        expect(pkg.devDependencies[`@switchyard/${name}`]).toBe(
          `file:${join(SDK_TARBALLS_DIR, `switchyard-${name}-${HOST_VERSION}.tgz`)}`,
        );
      }
      const tsconfig = JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8")) as {
        extends?: string;
        compilerOptions: Record<string, unknown>;
      };
      expect(tsconfig.extends).toBeUndefined();
      expect(tsconfig.compilerOptions).toMatchObject({
        strict: true,
        noUncheckedIndexedAccess: true,
        rootDir: "src",
        outDir: "dist",
      });
    });
  }

  it("pins the tools and runtime dependencies the checkout itself builds, tests and runs with", () => {
    const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    const core = JSON.parse(readFileSync(join(ROOT, "core", "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    for (const template of PLUGIN_TEMPLATE_NAMES) {
      const pkg = JSON.parse(readFileSync(join(PLUGIN_TEMPLATES_DIR, template, "package.json"), "utf8")) as PackageJson;
      for (const tool of ["typescript", "vitest", "@types/node"])
        expect(pkg.devDependencies[tool], `${template}: ${tool}`).toBe(root.devDependencies[tool]);
      expect(pkg.dependencies.zod, `${template}: zod`).toBe(core.dependencies.zod);
    }
  });

  it("scaffolds code that typechecks, sources and tests, for an id that is not an identifier", async () => {
    // Inside the repository, so the new plugin resolves the sdk, testkit and TypeScript from its
    // node_modules (outside it, its own `npm install` does: the e2e test).
    const parent = fileURLToPath(new URL("./.plugin-new-tmp/", import.meta.url));
    rmSync(parent, { recursive: true, force: true });
    mkdirSync(parent, { recursive: true });
    try {
      for (const template of PLUGIN_TEMPLATE_NAMES) {
        const created = await runCli(["plugin", "new", `acme-${template}`, "--template", template, "--dir", parent]);
        expect(created.code, created.stderr).toBe(0);
        const dir = join(parent, `acme-${template}`);
        writeFileSync(
          join(dir, "tsconfig.check.json"),
          JSON.stringify({
            extends: "./tsconfig.json",
            compilerOptions: { noEmit: true, rootDir: "." },
            include: ["src", "test"],
          }),
        );
        const typed = await execa(
          process.execPath,
          [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(dir, "tsconfig.check.json")],
          { reject: false, timeout: 120_000 },
        );
        expect(typed.exitCode, `${template}: ${typed.stdout}${typed.stderr}`).toBe(0);
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 300_000);

  it("names the Switchyard packages by the host's version with --sdk-source npm", async () => {
    const parent = join(scratch, "npm");
    mkdirSync(parent);
    const created = await runCli(["plugin", "new", "acme", "--sdk-source", "npm", "--dir", parent]);
    expect(created.code, created.stderr).toBe(0);
    const pkg = JSON.parse(readFileSync(join(parent, "acme", "package.json"), "utf8")) as PackageJson;
    for (const name of ["spec", "sdk", "testkit", "core"])
      expect(pkg.devDependencies[`@switchyard/${name}`]).toBe(HOST_VERSION);
  });

  it("refuses an unknown template, a taken folder and a bad id, saying what to do", async () => {
    const parent = join(scratch, "refusals");
    mkdirSync(join(parent, "taken"), { recursive: true });
    const unknown = await runCli(["plugin", "new", "acme", "--template", "plugin", "--dir", parent]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'There is no plugin template "plugin"; choose one of: process-harness, acp-flavor.',
    );
    const taken = await runCli(["plugin", "new", "taken", "--dir", parent]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`${join(parent, "taken")} already exists; choose another id or folder.`);
    const bad = await runCli(["plugin", "new", "Acme", "--dir", parent]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"Acme" is not a valid plugin id');
    const source = await runCli(["plugin", "new", "acme", "--sdk-source", "git", "--dir", parent]);
    expect(source.code).toBe(2);
    expect(source.stderr).toContain('--sdk-source is "tarballs" or "npm", not "git".');
    expect(readdirSync(parent)).toEqual(["taken"]);
  });
});
