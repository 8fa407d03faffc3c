import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSilentLogger } from "../../core/src/logging/logger.js";
import { ProcessRunner } from "../../core/src/plugin-host/process-runner.js";
import {
  findHarness,
  globalNpmRoots,
  harnessNotFoundMessage,
  harnessNotFoundStatus,
  harnessVersionVerdict,
  withHarnessVerdict,
  type HarnessSpec,
} from "../src/index.js";

// The harness search every plugin uses, against real folders: a PATH of its own, a global npm
// prefix of its own and a plugin module with a node_modules beside it, each holding a real
// executable or package. Nothing is installed or run.

const SPEC: HarnessSpec = {
  displayName: "Acme",
  option: "acmePath",
  commands: ["acme"],
  packages: ["@acme/cli"],
  install: "npm i -g @acme/cli",
  testedVersions: "~1.4.0",
  supportedVersions: { range: ">=1.2.0", why: "older releases do not speak the v2 protocol." },
};

const context = { process: new ProcessRunner(createSilentLogger(), null) };

let root: string;
let bin: string;
let prefix: string;
let plugin: string;
let env: Record<string, string>;

/** An npm package with a `bin/acme.js`, as npm lays one out. */
function writePackage(dir: string, version: string): string {
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "@acme/cli", version, bin: { acme: "bin/acme.js" } }),
  );
  // A nested manifest without a name is not the package (npm packages ship these in dist/).
  writeFileSync(join(dir, "bin", "package.json"), JSON.stringify({ type: "module" }));
  const cli = join(dir, "bin", "acme.js");
  writeFileSync(cli, "#!/usr/bin/env node\nconsole.log('acme');\n");
  chmodSync(cli, 0o755);
  return cli;
}

function writeExecutable(file: string): string {
  writeFileSync(file, "#!/bin/sh\necho acme 1.4.2\n");
  chmodSync(file, 0o755);
  return file;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "switchyard-find-harness-"));
  bin = join(root, "bin");
  prefix = join(root, "prefix");
  plugin = join(root, "plugin");
  mkdirSync(bin);
  mkdirSync(join(plugin, "dist"), { recursive: true });
  writeFileSync(join(plugin, "dist", "index.js"), "export {};\n");
  // A HOME without an .npmrc, a prefix of its own: nothing of this machine's npm leaks in.
  env = { PATH: bin, HOME: root, npm_config_global_prefix: prefix };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const from = () => pathToFileURL(join(plugin, "dist", "index.js")).href;

describe("findHarness", () => {
  it("reports every place it tried and the install command when the harness is nowhere", async () => {
    const search = await findHarness(SPEC, { env, context, from: from() });
    expect(search.found).toBeNull();
    const roots = globalNpmRoots(env);
    expect(roots[0]).toBe(join(prefix, "lib", "node_modules"));
    expect(search.searched).toEqual([
      { source: "path", what: "`acme` on PATH", found: null },
      ...roots.map((dir) => ({ source: "global", what: `@acme/cli in the global npm root ${dir}`, found: null })),
      { source: "local", what: "@acme/cli next to the plugin", found: null },
    ]);
    const message = harnessNotFoundMessage(search);
    expect(message).toContain("Acme was not found. Looked for: `acme` on PATH; @acme/cli in the global npm root ");
    expect(message).toContain("Install it: npm i -g @acme/cli, or set the instance's acmePath option.");
    expect(harnessNotFoundStatus(search)).toMatchObject({
      installed: false,
      executable: false,
      message,
      harness: { source: null, location: null, install: "npm i -g @acme/cli" },
    });
  });

  it("takes a command on PATH first, and knows the package an npm bin links into", async () => {
    const cli = writePackage(join(root, "elsewhere", "node_modules", "@acme", "cli"), "1.4.1");
    symlinkSync(cli, join(bin, "acme"));
    // Also installed globally and next to the plugin: PATH still wins.
    writePackage(join(prefix, "lib", "node_modules", "@acme", "cli"), "1.0.0");
    writePackage(join(plugin, "node_modules", "@acme", "cli"), "1.0.0");
    const search = await findHarness(SPEC, { env, context, from: from() });
    expect(search.found).toEqual({
      source: "path",
      command: join(bin, "acme"),
      packageDir: join(root, "elsewhere", "node_modules", "@acme", "cli"),
      packageName: "@acme/cli",
      packageVersion: "1.4.1",
    });
    expect(search.searched).toEqual([{ source: "path", what: "`acme` on PATH", found: join(bin, "acme") }]);
  });

  it("a native executable on PATH belongs to no package", async () => {
    writeExecutable(join(bin, "acme"));
    const search = await findHarness(SPEC, { env, context, from: from() });
    expect(search.found).toMatchObject({
      source: "path",
      command: join(bin, "acme"),
      packageDir: null,
      packageName: null,
      packageVersion: null,
    });
  });

  it("then the global npm root, then the package next to the plugin", async () => {
    writePackage(join(plugin, "node_modules", "@acme", "cli"), "1.4.0");
    const local = await findHarness(SPEC, { env, context, from: from() });
    expect(local.found).toMatchObject({
      source: "local",
      packageDir: join(plugin, "node_modules", "@acme", "cli"),
      command: join(plugin, "node_modules", "@acme", "cli", "bin", "acme.js"),
      packageVersion: "1.4.0",
    });

    const globalDir = join(prefix, "lib", "node_modules", "@acme", "cli");
    writePackage(globalDir, "1.4.3");
    const global = await findHarness(SPEC, { env, context, from: from() });
    expect(global.found).toMatchObject({ source: "global", packageDir: globalDir, packageVersion: "1.4.3" });
    expect(global.searched.at(-1)).toEqual({
      source: "global",
      what: `@acme/cli in the global npm root ${join(prefix, "lib", "node_modules")}`,
      found: globalDir,
    });
  });

  it("goes on past a place the plugin cannot use, and says why", async () => {
    const globalDir = join(prefix, "lib", "node_modules", "@acme", "cli");
    writePackage(globalDir, "1.4.3");
    writePackage(join(plugin, "node_modules", "@acme", "cli"), "1.4.0");
    const search = await findHarness(SPEC, {
      env,
      context,
      from: from(),
      usable: (found) =>
        found.source === "global" ? "its linux-x64 binary is missing (installed with --omit=optional?)" : null,
    });
    expect(search.found?.source).toBe("local");
    expect(search.searched).toContainEqual({
      source: "global",
      what: expect.stringContaining("@acme/cli in the global npm root"),
      found: globalDir,
      problem: "its linux-x64 binary is missing (installed with --omit=optional?)",
    });
  });

  it("a configured executable is the only place tried, found or not", async () => {
    writeExecutable(join(bin, "acme"));
    const custom = writeExecutable(join(root, "acme-nightly"));
    const found = await findHarness(SPEC, { configured: custom, env, context, from: from() });
    expect(found.found).toMatchObject({ source: "configured", command: custom });
    expect(found.searched).toEqual([{ source: "configured", what: `${custom} (the acmePath option)`, found: custom }]);

    const missing = await findHarness(SPEC, { configured: join(root, "nope"), env, context, from: from() });
    expect(missing.found).toBeNull();
    expect(harnessNotFoundMessage(missing)).toBe(
      `Acme was not found at ${join(root, "nope")} (the acmePath option). Fix the option, or remove it to look on PATH and in installed packages (npm i -g @acme/cli).`,
    );
  });

  it("reads the global prefix from the user's .npmrc when npm's environment does not set it", () => {
    writeFileSync(join(root, ".npmrc"), "fund=false\nprefix=~/.npm-global\n");
    const roots = globalNpmRoots({ HOME: root }, "/opt/node/bin/node");
    expect(roots).toEqual([join(root, ".npm-global", "lib", "node_modules"), "/opt/node/lib/node_modules"]);
  });
});

describe("harness versions", () => {
  it("tested, untested (a warning) and unsupported (a refusal that says what differs)", () => {
    expect(harnessVersionVerdict(SPEC, "1.4.9")).toEqual({ kind: "tested" });
    expect(harnessVersionVerdict(SPEC, "acme 1.4.0 (build 7)")).toEqual({ kind: "tested" });
    expect(harnessVersionVerdict(SPEC, "1.5.0-beta.1")).toMatchObject({ kind: "untested" });
    expect(harnessVersionVerdict(SPEC, "1.6.0", "/usr/bin/acme")).toEqual({
      kind: "untested",
      warning:
        "Acme 1.6.0 (/usr/bin/acme) is outside the versions this plugin was tested with (~1.4.0): it may work; if it misbehaves, install a tested version (npm i -g @acme/cli, at a version in ~1.4.0).",
    });
    expect(harnessVersionVerdict(SPEC, "1.1.9", "/usr/bin/acme")).toEqual({
      kind: "unsupported",
      refusal:
        "Acme 1.1.9 (/usr/bin/acme) is outside the versions this plugin supports (>=1.2.0): older releases do not speak the v2 protocol. Install a supported one (npm i -g @acme/cli, or point the instance's acmePath option at one).",
    });
    expect(harnessVersionVerdict(SPEC, "nightly")).toEqual({ kind: "unknown" });
    expect(harnessVersionVerdict(SPEC, undefined)).toEqual({ kind: "unknown" });
  });

  it("withHarnessVerdict adds the report, a warning, or turns the status into a refusal", async () => {
    writeExecutable(join(bin, "acme"));
    const search = await findHarness(SPEC, { env, context, from: from() });
    const ready = { installed: true, executable: true, authenticated: true, models: [] } as const;

    const tested = withHarnessVerdict(search, { ...ready, version: "1.4.2" });
    expect(tested).toEqual({
      ...ready,
      version: "1.4.2",
      harness: expect.objectContaining({
        source: "path",
        location: join(bin, "acme"),
        version: "1.4.2",
        testedVersions: "~1.4.0",
        inTestedRange: true,
      }),
    });
    expect(tested.warnings).toBeUndefined();

    const untested = withHarnessVerdict(search, { ...ready, version: "1.7.0" });
    expect(untested).toMatchObject({
      executable: true,
      harness: { inTestedRange: false },
      warnings: [expect.stringContaining("Acme 1.7.0")],
    });

    const refused = withHarnessVerdict(search, { ...ready, version: "1.0.0" });
    expect(refused).toMatchObject({
      installed: true,
      executable: false,
      message: expect.stringContaining("outside the versions this plugin supports (>=1.2.0)"),
      harness: { inTestedRange: false },
    });

    const unknown = withHarnessVerdict(search, { ...ready });
    expect(unknown).toMatchObject({ executable: true, harness: { inTestedRange: null } });
  });
});
