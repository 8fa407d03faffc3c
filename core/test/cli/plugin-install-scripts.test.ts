import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

/**
 * `switchyard plugin install` runs no package's npm scripts before it has decided: the built CLI
 * installs folder plugins (packed, then installed with npm) whose every lifecycle script appends
 * its name to a marker file outside the package. A refused manifest or a package that is not a
 * plugin leaves no mark; a plugin runs only the install scripts its manifest's `installScripts`
 * names, and they run again after npm re-extracts the managed directory.
 */
describe("switchyard plugin install runs only the install scripts a valid manifest allows", () => {
  let scratch: string;
  let home: string;
  let sources: string;
  let marker: string;
  const cli = (args: string[]) => runCli([...args, "--home", home], { timeoutMs: 180_000 });
  const marks = () =>
    existsSync(marker)
      ? readFileSync(marker, "utf8")
          .split("\n")
          .filter((line) => line !== "")
      : [];

  /** Appends `<package>:<script>` to the marker file. */
  const mark = (pkg: string, script: string) =>
    `node -e "require('fs').appendFileSync(${JSON.stringify(marker).replace(/"/g, "'")}, '${pkg}:${script}\\n')"`;

  /** A folder package whose every lifecycle script leaves a mark; `switchyard` is its manifest (or none). */
  function scriptedPackage(
    name: string,
    manifest: Record<string, unknown> | null,
    extra: Record<string, unknown> = {},
  ): string {
    const dir = join(sources, name);
    mkdirSync(dir, { recursive: true });
    const scripts = Object.fromEntries(
      ["preinstall", "install", "postinstall", "prepack", "prepare", "postpack"].map((script) => [
        script,
        mark(name, script),
      ]),
    );
    // What a native build leaves in the package folder, so a test can see it survive npm's re-extraction.
    scripts.postinstall = `${scripts.postinstall} && node -e "require('fs').writeFileSync('built.txt', 'x')"`;
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({
        name,
        version: "1.0.0",
        type: "module",
        scripts,
        ...(manifest !== null ? { switchyard: manifest } : {}),
        ...extra,
      }),
    );
    const driver = (manifest?.drivers as string[] | undefined)?.[0] ?? name;
    writeFileSync(
      join(dir, "index.js"),
      `export default { specificationVersion: "v1", drivers: [{ specificationVersion: "v1", driverKind: "${driver}", displayName: "${driver}", capabilities: {}, create: () => { throw new Error("not used"); } }] };\n`,
    );
    return dir;
  }
  const manifest = (driver: string, more: Record<string, unknown> = {}) => ({
    specVersion: "^1.0.0",
    drivers: [driver],
    entry: "./index.js",
    ...more,
  });

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-plugin-scripts-"));
    home = join(scratch, "home");
    sources = join(scratch, "sources");
    marker = join(scratch, "marker.txt");
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("refuses a manifest for another spec major and a package without one, with no script run", async () => {
    const incompatible = await cli([
      "plugin",
      "install",
      scriptedPackage("plugin-future", { ...manifest("future"), specVersion: "^99.0.0" }),
    ]);
    expect(incompatible.code, incompatible.stderr).toBe(1);
    expect(incompatible.stderr).toContain("plugin-future");
    expect(incompatible.stderr).toContain("^99.0.0");
    expect(incompatible.stderr).toContain("none of its scripts ran");
    const notPlugin = await cli(["plugin", "install", scriptedPackage("not-a-plugin", null)]);
    expect(notPlugin.code, notPlugin.stderr).toBe(1);
    expect(notPlugin.stderr).toContain('no "switchyard" manifest');
    expect(marks()).toEqual([]);
    expect(existsSync(join(home, "plugins", "node_modules", "plugin-future"))).toBe(false);
    expect(existsSync(join(home, "plugins", "node_modules", "not-a-plugin"))).toBe(false);
  }, 300_000);

  it("refuses an installScripts entry that is not the plugin or one of its dependencies", async () => {
    const stray = await cli([
      "plugin",
      "install",
      scriptedPackage("plugin-stray", manifest("stray", { installScripts: ["left-pad"] })),
    ]);
    expect(stray.code, stray.stderr).toBe(1);
    expect(stray.stderr).toContain('names "left-pad" in switchyard.installScripts');
    expect(marks()).toEqual([]);
  }, 300_000);

  it("installs a plugin that allows no scripts without running any", async () => {
    const quiet = await cli(["plugin", "install", scriptedPackage("plugin-quiet", manifest("quiet")), "--json"]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(JSON.parse(quiet.stdout)).toMatchObject({ name: "plugin-quiet", drivers: ["quiet"], installScripts: [] });
    expect(marks()).toEqual([]);
  }, 300_000);

  it("runs exactly the install scripts a plugin's manifest names, and again after npm re-extracts it", async () => {
    const built = await cli([
      "plugin",
      "install",
      scriptedPackage("plugin-native", manifest("native", { installScripts: ["plugin-native"] })),
    ]);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toContain("Install scripts ran for: plugin-native");
    // Its install scripts, and none of pack's (prepack, prepare, postpack).
    expect(marks()).toEqual(["plugin-native:preinstall", "plugin-native:install", "plugin-native:postinstall"]);
    const builtFile = join(home, "plugins", "node_modules", "plugin-native", "built.txt");
    expect(existsSync(builtFile)).toBe(true);
    // Installing another plugin makes npm re-extract plugin-native: its allowed scripts run again.
    const other = await cli(["plugin", "install", scriptedPackage("plugin-other", manifest("other"))]);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toContain("No install scripts ran");
    expect(existsSync(builtFile)).toBe(true);
    expect(marks().filter((line) => line.startsWith("plugin-other:"))).toEqual([]);
    const listed = JSON.parse((await cli(["plugins", "list", "--json"])).stdout) as { name: string; status: string }[];
    expect(
      listed
        .filter((plugin) => plugin.name.startsWith("plugin-"))
        .map((plugin) => [plugin.name, plugin.status])
        .sort(),
    ).toEqual([
      ["plugin-native", "loaded"],
      ["plugin-other", "loaded"],
      ["plugin-quiet", "loaded"],
    ]);
  }, 300_000);
});
