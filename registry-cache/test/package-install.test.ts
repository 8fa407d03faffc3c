import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryCatalog, type RegistryCatalogOptions } from "../src/index.js";
import { run } from "./support/archives.js";
import { PLATFORM, agentEntry, makeTempDir, registryIndex } from "./support/fixtures.js";
import { TestServer, serveBytes, serveJson } from "./support/http-server.js";

/**
 * npx agents are installed for real: a tiny package is `npm pack`ed and served by a minimal
 * npm registry (packument + tarball) on 127.0.0.1, and the catalog runs the real
 * `npm install --global <name>@<version>` against it through `npm_config_registry`. This keeps
 * the production code path exactly as it is for registry.npmjs.org (no special "local source"
 * branch), including npm's own integrity check of the tarball. The install goes into a
 * test-only prefix, so the machine's global npm is never touched.
 */
describe("npx and uvx distributions", () => {
  const PACKAGE = "switchyard-fixture-agent";
  const VERSION = "1.2.3";
  let server: TestServer;
  let work: Awaited<ReturnType<typeof makeTempDir>>;
  let npmEnv: Record<string, string | undefined>;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await TestServer.start();
    work = await makeTempDir("npm");
    const source = join(work.path, "package");
    await mkdir(join(source, "bin"), { recursive: true });
    await writeFile(
      join(source, "package.json"),
      JSON.stringify({ name: PACKAGE, version: VERSION, bin: { [PACKAGE]: "bin/agent.js" }, license: "MIT" }),
    );
    await writeFile(
      join(source, "bin", "agent.js"),
      '#!/usr/bin/env node\nconsole.log(["ok", ...process.argv.slice(2), process.env.FIXTURE_MODE ?? ""].join(" ").trim());\n',
    );
    await chmod(join(source, "bin", "agent.js"), 0o755);
    await run("npm", ["pack", "--pack-destination", work.path, "--loglevel=error"], {
      cwd: source,
      env: { ...process.env, npm_config_update_notifier: "false", npm_config_cache: join(work.path, "npm-cache") },
    });
    const tarball = await readFile(join(work.path, `${PACKAGE}-${VERSION}.tgz`));

    const tarballPath = `/${PACKAGE}/-/${PACKAGE}-${VERSION}.tgz`;
    server.route(tarballPath, serveBytes(tarball));
    server.route(
      `/${PACKAGE}`,
      serveJson({
        name: PACKAGE,
        "dist-tags": { latest: VERSION },
        versions: {
          [VERSION]: {
            name: PACKAGE,
            version: VERSION,
            bin: { [PACKAGE]: "bin/agent.js" },
            dist: {
              tarball: server.url(tarballPath),
              shasum: createHash("sha1").update(tarball).digest("hex"),
              integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
            },
          },
        },
      }),
    );
    // Empty user and global configs: a developer's ~/.npmrc (auth, mirrors) must not leak in.
    await writeFile(join(work.path, "user-npmrc"), "");
    await writeFile(join(work.path, "global-npmrc"), "");
    npmEnv = {
      ...process.env,
      npm_config_registry: server.url("/"),
      npm_config_cache: join(work.path, "npm-cache"),
      npm_config_userconfig: join(work.path, "user-npmrc"),
      npm_config_globalconfig: join(work.path, "global-npmrc"),
    };
  });

  afterAll(async () => {
    await server.close();
    for (const cleanup of cleanups) await cleanup();
    await work.cleanup();
  });

  async function catalogFor(
    agents: unknown[],
    options: Partial<RegistryCatalogOptions> = {},
  ): Promise<{ catalog: RegistryCatalog; cacheDir: string }> {
    const cache = await makeTempDir("pkg-cache");
    cleanups.push(cache.cleanup);
    const path = `/index-${Math.random().toString(36).slice(2)}/registry.json`;
    server.route(path, serveJson(registryIndex(agents)));
    return {
      catalog: new RegistryCatalog({
        cacheDir: cache.path,
        registryUrl: server.url(path),
        platform: PLATFORM,
        ...options,
      }),
      cacheDir: cache.path,
    };
  }

  it("installs a pinned npx package with npm into the given prefix, and the installed bin runs", async () => {
    const prefix = join(work.path, "prefix");
    const { catalog, cacheDir } = await catalogFor(
      [
        agentEntry("fixture-npx", {
          npx: { package: `${PACKAGE}@${VERSION}`, args: ["--acp"], env: { FIXTURE_MODE: "acp" } },
        }),
      ],
      { env: npmEnv, npmPrefix: prefix, limits: { postPrepareReservationMs: 0 } },
    );
    expect(await catalog.inspect("fixture-npx")).toMatchObject({ state: "unprepared", distribution: "npx" });
    const phases: string[] = [];

    const prepared = await catalog.prepare("fixture-npx", { onProgress: (event) => phases.push(event.phase) });

    expect(prepared).toMatchObject({
      distribution: "npx",
      alreadyInstalled: false,
      integrity: "package_version",
      location: prefix,
    });
    expect(prepared.launch).toMatchObject({
      command: join(prefix, "bin", PACKAGE),
      args: ["--acp"],
      env: { FIXTURE_MODE: "acp" },
    });
    expect(phases).toEqual(["installing_package", "done"]);
    const { stdout } = await run(prepared.launch.command, [...prepared.launch.args], {
      env: { ...process.env, ...prepared.launch.env },
    });
    expect(stdout.trim()).toBe("ok --acp acp");

    const receipts = await readdir(join(cacheDir, "package-installs"));
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatch(/^fixture-npx-[0-9a-f]{16}\.json$/);
    expect(await catalog.inspect("fixture-npx")).toMatchObject({ state: "ready" });
    expect((await catalog.prepare("fixture-npx")).alreadyInstalled).toBe(true);
    expect(await catalog.list()).toEqual([
      expect.objectContaining({
        agentId: "fixture-npx",
        distribution: "npx",
        source: `${PACKAGE}@${VERSION}`,
        integrity: "package_version",
      }),
    ]);

    const removed = await catalog.uninstall("fixture-npx");
    expect(removed.removed).toHaveLength(1);
    await expect(readFile(join(prefix, "lib", "node_modules", PACKAGE, "package.json"))).rejects.toMatchObject({
      code: "ENOENT",
    });
    expect(await catalog.inspect("fixture-npx")).toMatchObject({ state: "unprepared" });
  });

  it("reports npm's failure as package_install_failed with npm's output", async () => {
    const { catalog } = await catalogFor(
      [agentEntry("missing-pkg", { npx: { package: "switchyard-no-such-package@9.9.9" } })],
      {
        env: npmEnv,
        npmPrefix: join(work.path, "prefix-missing"),
      },
    );
    const error = await catalog.prepare("missing-pkg").catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: "package_install_failed" });
    expect((error as Error).message).toMatch(/404|Not Found/i);
  });

  it("refuses a uvx agent with runner_unavailable when uv is missing, and says so in search and inspect", async () => {
    const emptyPath = join(work.path, "empty-bin");
    await mkdir(emptyPath, { recursive: true });
    for (const options of [{ uvCommand: join(work.path, "no-such-uv") }, { env: { PATH: emptyPath } }]) {
      const { catalog } = await catalogFor(
        [agentEntry("python-agent", { uvx: { package: "python-agent==0.3.1" } })],
        options,
      );

      const error = await catalog.prepare("python-agent").catch((e: unknown) => e);

      expect(error).toMatchObject({
        name: "RegistryError",
        reason: "runner_unavailable",
        details: { runners: ["uv"] },
      });
      expect((error as Error).message).toMatch(/uv/);
      expect(await catalog.inspect("python-agent")).toMatchObject({ state: "missing_runner", missingRunners: ["uv"] });
      expect((await catalog.search("python")).agents).toEqual([]);
      expect((await catalog.search("python", { includeUnavailable: true })).agents[0]).toMatchObject({
        available: false,
        unavailableReason: "missing_runner",
      });
    }
  });

  it("falls back from npx to uvx by runner availability, and keeps declared args for a command override", async () => {
    const { catalog } = await catalogFor(
      [
        agentEntry("both", {
          npx: { package: `${PACKAGE}@${VERSION}`, args: ["from-npx"] },
          uvx: { package: "both==1.0.0", args: ["from-uvx"] },
        }),
      ],
      { npmCommand: join(work.path, "no-such-npm"), uvCommand: join(work.path, "no-such-uv") },
    );
    expect(await catalog.inspect("both")).toMatchObject({ state: "missing_runner", missingRunners: ["npm", "uv"] });
    const launch = await catalog.resolveLaunch("both", { commandOverride: process.execPath });
    expect(launch).toMatchObject({ command: process.execPath, args: ["from-npx"], commandOverridden: true });
  });
});
