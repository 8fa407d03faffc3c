import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI_DIR = join(ROOT, "cli");
const LAUNCHER = join(CLI_DIR, "bin", "switchyard.js");

interface Manifest {
  name: string;
  version: string;
  bin?: Record<string, string>;
  files?: string[];
  dependencies?: Record<string, string>;
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

describe("the switchyard bin (@switchyard/cli, cli/bin/switchyard.js)", () => {
  it("is the only package that declares it, so npm links it at install time, before any build", () => {
    const manifest = manifestOf(CLI_DIR);
    expect(manifest.name).toBe("@switchyard/cli");
    expect(manifest.bin).toEqual({ switchyard: "./bin/switchyard.js" });
    expect(manifest.files).toContain("bin");
    // npm ci links bins from the lock file's copy of the manifest, not from package.json.
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { bin?: Record<string, string> }>;
    };
    expect(lock.packages["cli"]?.bin).toEqual({ switchyard: "bin/switchyard.js" });
    const others = [
      "spec",
      "core",
      "sdk",
      "testkit",
      "registry-cache",
      ...readdirSync(join(ROOT, "plugins")).map((name) => `plugins/${name}`),
    ];
    for (const folder of others) expect(manifestOf(join(ROOT, folder)).bin?.["switchyard"], folder).toBeUndefined();
  });

  it("ships every built-in plugin and no harness", () => {
    const dependencies = Object.keys(manifestOf(CLI_DIR).dependencies ?? {});
    const plugins = readdirSync(join(ROOT, "plugins")).map((name) => manifestOf(join(ROOT, "plugins", name)).name);
    expect(dependencies.filter((name) => name.startsWith("@switchyard/plugin-")).sort()).toEqual(plugins.sort());
    for (const name of dependencies) expect(name.startsWith("@switchyard/"), name).toBe(true);
  });

  it("runs the built CLI with its version", async () => {
    const result = await execa(process.execPath, [LAUNCHER, "--version"], { reject: false });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(manifestOf(CLI_DIR).version);
  });

  it("loads its plugins as built-ins, the same ones a checkout's plugins/ folder holds", async () => {
    const home = mkdtempSync(join(tmpdir(), "switchyard-launcher-home-"));
    try {
      const listed = await execa(process.execPath, [LAUNCHER, "plugins", "list", "--json", "--home", home], {
        reject: false,
      });
      expect(listed.exitCode, listed.stderr).toBe(0);
      const plugins = JSON.parse(listed.stdout) as { name: string; source: string; status: string }[];
      const expected = readdirSync(join(ROOT, "plugins"))
        .map((name) => manifestOf(join(ROOT, "plugins", name)).name)
        .sort();
      expect(
        plugins
          .filter((plugin) => plugin.source === "builtin")
          .map((plugin) => plugin.name)
          .sort(),
      ).toEqual(expected);
      expect(plugins.filter((plugin) => plugin.status !== "loaded")).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("refuses a Node older than its engines range, with exit code 2, saying which Node and what to do", async () => {
    // The bin beside a manifest that asks for a Node newer than this one: the check reads the range
    // from package.json, so this is the check an older Node meets.
    const copy = mkdtempSync(join(tmpdir(), "switchyard-old-node-"));
    try {
      mkdirSync(join(copy, "bin"));
      copyFileSync(LAUNCHER, join(copy, "bin", "switchyard.js"));
      const newer = `>=${Number(process.versions.node.split(".")[0]) + 1}.0`;
      writeFileSync(join(copy, "package.json"), JSON.stringify({ ...manifestOf(CLI_DIR), engines: { node: newer } }));
      const result = await execa(process.execPath, [join(copy, "bin", "switchyard.js"), "--version"], {
        reject: false,
      });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(
        `error: Switchyard needs Node.js ${newer} (an LTS: 22 or 24); this is ${process.version} (${process.execPath}).`,
      );
      expect(result.stdout).toBe("");
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it("says to build first, with exit code 2, when the CLI is not built", async () => {
    // A checkout laid out like this one, but never built: cli/ and a core/ that npm linked.
    const checkout = mkdtempSync(join(tmpdir(), "switchyard-unbuilt-"));
    try {
      mkdirSync(join(checkout, "cli", "bin"), { recursive: true });
      mkdirSync(join(checkout, "core"), { recursive: true });
      mkdirSync(join(checkout, "node_modules", "@switchyard"), { recursive: true });
      copyFileSync(LAUNCHER, join(checkout, "cli", "bin", "switchyard.js"));
      writeFileSync(
        join(checkout, "cli", "package.json"),
        JSON.stringify({
          name: "@switchyard/cli",
          version: "0.0.0",
          type: "module",
          dependencies: { "@switchyard/core": "0.0.0" },
        }),
      );
      writeFileSync(
        join(checkout, "core", "package.json"),
        JSON.stringify({
          name: "@switchyard/core",
          version: "0.0.0",
          type: "module",
          exports: { "./package.json": "./package.json" },
        }),
      );
      symlinkSync(join("..", "..", "core"), join(checkout, "node_modules", "@switchyard", "core"));
      const result = await execa(process.execPath, [join(checkout, "cli", "bin", "switchyard.js"), "demo"], {
        reject: false,
      });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(
        `Switchyard is not built yet (${join(checkout, "core", "dist", "cli", "run-cli.js")} is missing)`,
      );
      expect(result.stderr).toContain(`Run \`npm run build\` in ${checkout}, then run the command again.`);
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });
});
