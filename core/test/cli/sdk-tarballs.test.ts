import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSdkTarballs } from "../../src/cli/commands/plugin-sdk-path.js";
import { runCli } from "../support/cli.js";
import { tarballPackageJson, writeOfflineProject } from "../support/offline-project.js";

// What a plugin author outside the checkout gets: `npm run build` packs @switchyard/spec, sdk,
// testkit and core into core/dist/sdk-tarballs, `switchyard plugin sdk-path` points at them,
// and `npm install` of those files works with no registry (only npm's cache, --offline).

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TARBALLS = join(ROOT, "core", "dist", "sdk-tarballs");

interface PackageJson {
  name: string;
  version: string;
  files?: string[];
  exports?: Record<string, string | { types: string; default: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}

interface SdkPath {
  dir: string;
  hostVersion: string;
  packages: { name: string; version: string; path: string; integrity: string }[];
  install: string;
  installDev: string;
}

/** The file names in a tarball, without npm's `package/` prefix. */
async function entriesOf(file: string): Promise<string[]> {
  const names: string[] = [];
  await tar.t({ file, onReadEntry: (entry) => void names.push(entry.path.replace(/^package\//, "")) });
  return names;
}

async function packageJsonOf(file: string): Promise<PackageJson> {
  return (await tarballPackageJson(file)) as unknown as PackageJson;
}

/** npm as a user runs it: none of vitest's npm_* variables, never the network. */
function npm(args: string[], cwd: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith("npm_")));
  return execa("npm", [...args, "--offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    env,
    extendEnv: false,
    reject: false,
    timeout: 300_000,
  });
}

describe("the sdk tarballs a running Switchyard ships", () => {
  let sdkPath: SdkPath;
  let project: string;
  const tarball = (name: string) => sdkPath.packages.find((entry) => entry.name === name)!.path;

  beforeAll(async () => {
    // The build step itself (it skips packages whose files did not change).
    await execa(process.execPath, [join(ROOT, "core", "scripts", "pack-sdk-tarballs.mjs")], { timeout: 300_000 });
    const printed = await runCli(["plugin", "sdk-path", "--json"]);
    expect(printed.code, printed.stderr).toBe(0);
    sdkPath = JSON.parse(printed.stdout) as SdkPath;
    project = mkdtempSync(join(tmpdir(), "switchyard-plugin-author-"));
  }, 300_000);
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it("are where switchyard plugin sdk-path says, one per package, of the host's version", async () => {
    const plain = await runCli(["plugin", "sdk-path"]);
    expect(plain).toMatchObject({ code: 0, stdout: TARBALLS });
    expect(sdkPath.dir).toBe(TARBALLS);
    expect(sdkPath.packages.map((entry) => entry.name)).toEqual([
      "@switchyard/spec",
      "@switchyard/sdk",
      "@switchyard/testkit",
      "@switchyard/core",
    ]);
    for (const entry of sdkPath.packages) {
      expect(entry.version).toBe(sdkPath.hostVersion);
      expect(existsSync(entry.path), entry.path).toBe(true);
      expect(entry.integrity).toMatch(/^sha512-/);
    }
    expect(sdkPath.install).toBe(`npm install ${tarball("@switchyard/spec")} ${tarball("@switchyard/sdk")}`);
    expect(sdkPath.installDev).toBe(
      `npm install --save-dev ${tarball("@switchyard/testkit")} ${tarball("@switchyard/core")}`,
    );
  });

  it("are missing from a build that never packed them, and the command says how to get them", () => {
    const empty = mkdtempSync(join(tmpdir(), "switchyard-no-tarballs-"));
    try {
      expect(() => readSdkTarballs(join(empty, "core", "dist", "sdk-tarballs"))).toThrow(
        `This Switchyard was built without its sdk tarballs (${join(empty, "core", "dist", "sdk-tarballs", "index.json")} is missing). Run \`npm run build\` in ${empty}, then run the command again.`,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("hold every file their exports name, and no build leftovers", async () => {
    for (const entry of sdkPath.packages) {
      const files = new Set(await entriesOf(entry.path));
      const manifest = await packageJsonOf(entry.path);
      for (const target of Object.values(manifest.exports ?? {}).flatMap((value) =>
        typeof value === "string" ? [value] : [value.types, value.default],
      )) {
        expect(files.has(target.replace(/^\.\//, "")), `${entry.name}: ${target}`).toBe(true);
      }
      expect(
        [...files].filter((file) => file.endsWith(".tsbuildinfo")),
        entry.name,
      ).toEqual([]);
      expect(files.has("README.md"), `${entry.name} README`).toBe(true);
    }
    const sdkFiles = await entriesOf(tarball("@switchyard/sdk"));
    expect(sdkFiles.filter((file) => file.includes("testkit") || file.includes("demo"))).toEqual([]);
    const testkitFiles = await entriesOf(tarball("@switchyard/testkit"));
    expect(testkitFiles).toContain("plugins/scripted-provider/package.json");
    expect(testkitFiles).toContain("dist/acp-agent/bin.js");
    // Core ships the other three (and their index), never a copy of itself.
    const coreFiles = await entriesOf(tarball("@switchyard/core"));
    expect(coreFiles.filter((file) => file.startsWith("dist/sdk-tarballs/")).sort()).toEqual([
      "dist/sdk-tarballs/index.json",
      "dist/sdk-tarballs/switchyard-sdk-0.1.0.tgz",
      "dist/sdk-tarballs/switchyard-spec-0.1.0.tgz",
      "dist/sdk-tarballs/switchyard-testkit-0.1.0.tgz",
    ]);
    // And the plugin templates, so `switchyard plugin new` works where core is installed from npm.
    for (const template of ["process-harness", "acp-flavor"])
      expect(coreFiles, template).toContain(`dist/templates/${template}/package.json`);
    expect(coreFiles.filter((file) => /^dist\/templates\/[^/]+\/(dist|node_modules)\//.test(file))).toEqual([]);
  });

  it("declare their dependencies in lockstep: the spec none, the sdk no core, the testkit core as its host", async () => {
    const spec = await packageJsonOf(tarball("@switchyard/spec"));
    expect(spec.dependencies).toBeUndefined();
    const sdk = await packageJsonOf(tarball("@switchyard/sdk"));
    expect(sdk.dependencies).toEqual({
      "@agentclientprotocol/sdk": "2.4.0",
      "@switchyard/spec": sdkPath.hostVersion,
      semver: "7.8.6",
    });
    expect(sdk.peerDependencies).toBeUndefined();
    const testkit = await packageJsonOf(tarball("@switchyard/testkit"));
    expect(testkit.dependencies).toMatchObject({
      "@switchyard/sdk": sdkPath.hostVersion,
      "@switchyard/spec": sdkPath.hostVersion,
    });
    // The fake Cursor backend's tests drive the real Cursor SDK when an author installs it.
    expect(testkit.peerDependencies).toEqual({
      "@cursor/sdk": "1.0.32",
      "@switchyard/core": sdkPath.hostVersion,
      vitest: "^4.1.0",
    });
    expect(testkit.peerDependenciesMeta).toEqual({ "@cursor/sdk": { optional: true }, vitest: { optional: true } });
    const core = await packageJsonOf(tarball("@switchyard/core"));
    expect(core.dependencies?.["@switchyard/spec"]).toBe(sdkPath.hostVersion);
    expect(Object.keys(core.dependencies ?? {}).filter((name) => name.startsWith("@switchyard/"))).toEqual([
      "@switchyard/spec",
    ]);
  });

  it("install into a project outside the checkout from npm's cache alone, and work there", async () => {
    // npm's cache holds every dependency's tarball but no registry metadata, so a project with
    // no lockfile cannot resolve offline (ENOTCACHED); writeOfflineProject pins what the
    // tarballs need from the checkout's own lockfile (see support/offline-project.ts).
    await writeOfflineProject(project, {
      dependencies: [tarball("@switchyard/spec"), tarball("@switchyard/sdk")],
      devDependencies: [tarball("@switchyard/testkit"), tarball("@switchyard/core")],
    });
    // Scripts are skipped only because better-sqlite3's would compile SQLite (minutes, or a
    // prebuilt binary from the network); nothing below opens a database.
    const installed = await npm(["install", "--ignore-scripts"], project);
    expect(installed.exitCode, installed.stderr).toBe(0);
    for (const name of ["spec", "sdk", "testkit", "core"]) {
      const manifest = JSON.parse(
        readFileSync(join(project, "node_modules", "@switchyard", name, "package.json"), "utf8"),
      ) as PackageJson;
      expect(manifest.version).toBe(sdkPath.hostVersion);
    }
    // One copy of each: the sdk, testkit and core use the spec the project installed.
    for (const nested of [
      "@switchyard/sdk/node_modules/@switchyard",
      "@switchyard/testkit/node_modules/@switchyard",
      "@switchyard/core/node_modules/@switchyard",
    ]) {
      expect(existsSync(join(project, "node_modules", nested)), nested).toBe(false);
    }

    writeFileSync(
      join(project, "check.mjs"),
      [
        'import { SPECIFICATION_VERSION, SPEC_SEMVER, decodeCapabilities } from "@switchyard/spec";',
        'import { definePlugin, defineDriver } from "@switchyard/sdk";',
        'import { createAcpDriver } from "@switchyard/sdk/acp";',
        'import { ScriptedModelServer, SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit";',
        'import { existsSync } from "node:fs";',
        'const plugin = definePlugin({ drivers: [defineDriver({ driverKind: "acme", displayName: "Acme", capabilities: {}, create: () => { throw new Error("unused"); } })] });',
        "const server = await ScriptedModelServer.start();",
        "const models = await (await fetch(`${server.url}/v1/models`)).json();",
        "await server.close();",
        "console.log(JSON.stringify({ literal: SPECIFICATION_VERSION, semver: SPEC_SEMVER, plugin: plugin.specificationVersion, decoded: decodeCapabilities({}).capabilities.turns.interrupt, acp: typeof createAcpDriver, models: models.data.map((m) => m.id), scripted: existsSync(`${SCRIPTED_PROVIDER_PLUGIN_DIR}/package.json`) }));",
      ].join("\n"),
    );
    const ran = await execa(process.execPath, ["check.mjs"], { cwd: project, reject: false, timeout: 60_000 });
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({
      literal: "v1",
      semver: "1.0.0",
      plugin: "v1",
      decoded: false,
      acp: "function",
      models: ["fake-model"],
      scripted: true,
    });

    // The published types resolve through each package's exports, as a plugin's tsc sees them.
    mkdirSync(join(project, "src"));
    writeFileSync(
      join(project, "src", "check.ts"),
      [
        'import type { OrchestrationAdapter, OrchestrationAdapterV1, CommandGroupV1 } from "@switchyard/spec";',
        'import { defineCommandGroup, type ProviderSession } from "@switchyard/sdk";',
        'import type { AcpFlavor } from "@switchyard/sdk/acp";',
        'import type { StartTestHostOptions } from "@switchyard/testkit";',
        "export const same: OrchestrationAdapterV1 | null = null as OrchestrationAdapter | null;",
        'export const group: CommandGroupV1 = defineCommandGroup({ name: "acme", description: "Acme", commands: [{ name: "hi", description: "Hi", run: () => 0 }] });',
        "export type Used = [ProviderSession, AcpFlavor, StartTestHostOptions];",
      ].join("\n"),
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
          typeRoots: [join(ROOT, "node_modules", "@types")],
        },
        include: ["src"],
      }),
    );
    const typed = await execa(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "."], {
      cwd: project,
      reject: false,
      timeout: 120_000,
    });
    expect(typed.exitCode, `${typed.stdout}${typed.stderr}`).toBe(0);

    // The installed core scaffolds from the templates it ships, naming its own tarballs, and core
    // (which ships no tarball of itself) by version, as a Switchyard installed from npm would.
    const installedCore = join(project, "node_modules", "@switchyard", "core");
    const scaffolded = await execa(
      process.execPath,
      [join(installedCore, "dist", "cli", "main.js"), "plugin", "new", "acme", "--dir", project],
      { reject: false, timeout: 60_000 },
    );
    expect(scaffolded.exitCode, scaffolded.stderr).toBe(0);
    const scaffold = JSON.parse(readFileSync(join(project, "acme", "package.json"), "utf8")) as PackageJson;
    expect(scaffold.devDependencies).toMatchObject({
      "@switchyard/sdk": `file:${join(installedCore, "dist", "sdk-tarballs", `switchyard-sdk-${sdkPath.hostVersion}.tgz`)}`,
      "@switchyard/core": sdkPath.hostVersion,
    });
  }, 600_000);
});
