import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/plugins/", import.meta.url));

/** A plugin folder with its own name and driver, like one a user wrote. */
function pluginFolder(parent: string, name: string, driver: string): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name,
      version: "1.0.0",
      type: "module",
      switchyard: { specVersion: "^1.0.0", drivers: [driver], entry: "./index.js" },
    }),
  );
  writeFileSync(
    join(dir, "index.js"),
    `const adapter = (id) => ({ specificationVersion: "v1", instanceId: id, driverKind: "${driver}", capabilities: () => ({}), probe: async () => ({ installed: true, executable: true, authenticated: true, models: [] }), openSession: async () => { throw new Error("not used"); } });
export default { specificationVersion: "v1", drivers: [{ specificationVersion: "v1", driverKind: "${driver}", displayName: "${driver}", capabilities: {}, create: ({ instance }) => adapter(instance.id) }] };
`,
  );
  return dir;
}

describe("switchyard plugin install keeps what it installs under the home", () => {
  let scratch: string;
  let home: string;
  let tmp: string;
  let sources: string;
  // The system temp folder of the CLI runs: emptied below the way a reboot or tmp cleaner would.
  const cli = (args: string[]) => runCli(args, { env: { TMPDIR: tmp }, timeoutMs: 180_000 });
  const managed = () => join(home, "plugins");
  const dependencies = () =>
    (JSON.parse(readFileSync(join(managed(), "package.json"), "utf8")) as { dependencies: Record<string, string> })
      .dependencies;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-plugin-install-"));
    home = join(scratch, "home");
    tmp = join(scratch, "tmp");
    sources = join(scratch, "sources");
    mkdirSync(tmp);
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("installs a folder, survives the temp folder being cleaned, installs another, and leaves no temporary files", async () => {
    const first = await cli([
      "plugin",
      "install",
      pluginFolder(sources, "plugin-first", "first"),
      "--json",
      "--home",
      home,
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ name: "plugin-first", source: "folder", drivers: ["first"] });

    // What a tmp cleaner does; npm reinstalls every dependency the manifest records on the next install.
    for (const entry of readdirSync(tmp)) rmSync(join(tmp, entry), { recursive: true, force: true });
    const second = await cli([
      "plugin",
      "install",
      pluginFolder(sources, "plugin-second", "second"),
      "--json",
      "--home",
      home,
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ name: "plugin-second", source: "folder" });
    expect(dependencies()["plugin-first"]).toMatch(/^file:tarballs\/plugin-first-1\.0\.0-[0-9a-f]{12}\.tgz$/);

    const listed = JSON.parse((await cli(["plugins", "list", "--json", "--home", home])).stdout) as {
      name: string;
      status: string;
    }[];
    expect(
      listed
        .filter((p) => p.name.startsWith("plugin-"))
        .map((p) => [p.name, p.status])
        .sort(),
    ).toEqual([
      ["plugin-first", "loaded"],
      ["plugin-second", "loaded"],
    ]);
    expect(readdirSync(tmp).filter((entry) => entry.startsWith("switchyard-pack-"))).toEqual([]);
    expect(readdirSync(managed()).filter((entry) => entry.startsWith(".staging-"))).toEqual([]);
    expect(readdirSync(join(managed(), "tarballs")).sort()).toEqual(
      [basenameOf(dependencies()["plugin-first"]!), basenameOf(dependencies()["plugin-second"]!)].sort(),
    );
  }, 300_000);

  it("cleans up after a refused install and after a failed integrity check", async () => {
    const before = readdirSync(join(managed(), "tarballs")).sort();
    const refused = await cli(["plugin", "install", join(FIXTURES, "incompatible"), "--home", home]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("fixture-incompatible");
    expect(Object.keys(dependencies())).not.toContain("fixture-incompatible");

    const tampered = await cli([
      "plugin",
      "install",
      join(sources, "plugin-first"),
      "--integrity",
      "sha512-AAAA",
      "--home",
      home,
    ]);
    expect(tampered.code).toBe(2);
    expect(tampered.stderr).toContain("Integrity check failed");

    expect(readdirSync(join(managed(), "tarballs")).sort()).toEqual(before);
    expect(readdirSync(tmp).filter((entry) => entry.startsWith("switchyard-pack-"))).toEqual([]);
    expect(readdirSync(managed()).filter((entry) => entry.startsWith(".staging-"))).toEqual([]);
  }, 300_000);

  it("keeps a copy of an installed tarball, so deleting the user's file breaks nothing, and drops it on remove", async () => {
    const tarballs = join(scratch, "tarballs");
    mkdirSync(tarballs);
    // A tarball the user made with npm pack, then deleted after installing it.
    const packed = await cli([
      "plugin",
      "install",
      pluginFolder(sources, "plugin-third", "third"),
      "--json",
      "--home",
      home,
    ]);
    expect(packed.code, packed.stderr).toBe(0);
    const kept = join(managed(), "tarballs", basenameOf(dependencies()["plugin-third"]!));
    cpSync(kept, join(tarballs, "plugin-third-1.0.0.tgz"));
    const removedFirst = await cli(["plugin", "remove", "plugin-third", "--home", home]);
    expect(removedFirst.code, removedFirst.stderr).toBe(0);
    expect(existsSync(kept)).toBe(false);

    const fromTarball = await cli([
      "plugin",
      "install",
      join(tarballs, "plugin-third-1.0.0.tgz"),
      "--json",
      "--home",
      home,
    ]);
    expect(fromTarball.code, fromTarball.stderr).toBe(0);
    expect(JSON.parse(fromTarball.stdout)).toMatchObject({ name: "plugin-third", source: "tarball" });
    rmSync(tarballs, { recursive: true, force: true });
    const another = await cli(["plugin", "install", pluginFolder(sources, "plugin-fourth", "fourth"), "--home", home]);
    expect(another.code, another.stderr).toBe(0);

    const unknown = await cli(["plugin", "remove", "plugin-nope", "--home", home]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("Plugin plugin-nope is not installed");
  }, 300_000);

  it("says what is wrong with a path that names nothing, a file that is not a tarball, and a name the registry does not know", async () => {
    const missing = await cli(["plugin", "install", join(scratch, "no-such-folder"), "--home", home]);
    expect(missing.code).toBe(3);
    expect(missing.stderr.trim()).toBe(
      `error: There is no folder or tarball at ${join(scratch, "no-such-folder")}. A plugin installs from a folder with a package.json, a .tgz, or an npm package name.`,
    );
    const relative = await runCli(["plugin", "install", "./nothing-here.tgz", "--home", home], { cwd: scratch });
    expect(relative.code).toBe(3);
    expect(relative.stderr).toContain(`There is no folder or tarball at ${join(scratch, "nothing-here.tgz")}.`);
    const notes = join(scratch, "notes.txt");
    writeFileSync(notes, "not a plugin");
    const file = await cli(["plugin", "install", notes, "--home", home]);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain(`${notes} is a file but not a tarball (.tgz)`);

    // The registry's answer for a name it does not know: 404 (a loopback registry stands in for npm's).
    const registry = createServer((_request, response) =>
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}'),
    );
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    try {
      const port = (registry.address() as AddressInfo).port;
      const unknown = await runCli(["plugin", "install", "switchyard-plugin-nobody-published", "--home", home], {
        env: { TMPDIR: tmp, npm_config_registry: `http://127.0.0.1:${port}/` },
        timeoutMs: 180_000,
      });
      expect(unknown.code).toBe(3);
      expect(unknown.stderr.trim()).toBe(
        "error: npm has no package switchyard-plugin-nobody-published (the registry answered 404). Check the name, or install the plugin from a folder or a .tgz.",
      );
    } finally {
      registry.close();
    }
    expect(Object.keys(dependencies())).not.toContain("switchyard-plugin-nobody-published");
  }, 300_000);
});

function basenameOf(spec: string): string {
  return spec.slice(spec.lastIndexOf("/") + 1);
}
