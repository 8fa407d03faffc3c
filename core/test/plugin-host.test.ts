import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../src/host/tokens.js";
import { SwitchyardHost } from "../src/host/switchyard-host.js";
import { createLogger, createSilentLogger } from "../src/logging/logger.js";
import { pinsOneMajor } from "../src/plugin-host/manifest.js";
import { PluginHost, type PluginRecord } from "../src/plugin-host/plugin-host.js";
import { SpecVersionResolver, type SpecVersionAdapter } from "../src/plugin-host/spec-version-resolver.js";
import type { PluginDefinition } from "../src/spec/index.js";

const fixtures = fileURLToPath(new URL("./fixtures/plugins/", import.meta.url));
const names = [
  "good",
  "malformed-manifest",
  "bad-json",
  "incompatible",
  "throws-on-import",
  "throws-on-create",
  "wrong-literal",
  "undeclared-driver",
  "conflict",
  "entry-escape",
  "unpinned-star",
  "unpinned-or",
  "unpinned-gte",
  "commands-good",
  "commands-host-name",
  "commands-undefined",
  "commands-malformed",
  "commands-conflict",
  "no-drivers-no-commands",
  "routes-undeclared",
];

describe("plugin host: loading real plugin folders", () => {
  let host: SwitchyardHost;
  let home: string;
  const record = (name: string): PluginRecord => {
    const found = host.pluginHost.list().find((p) => p.name === name || p.dir?.endsWith(`/${name}`));
    if (!found) throw new Error(`no record for ${name}`);
    return found;
  };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "switchyard-plugins-"));
    host = await SwitchyardHost.create({
      home,
      builtinPluginsDir: null,
      logger: createSilentLogger(),
      config: {
        plugins: [...names.map((name) => join(fixtures, name)), join(fixtures, "does-not-exist")],
        providers: [
          { id: "echo-1", driver: "echo" },
          { id: "fragile-1", driver: "fragile" },
          { id: "future-1", driver: "future" },
        ],
      },
    });
  });
  afterAll(async () => {
    await host.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("loads a good plugin and creates its instances", () => {
    expect(record("fixture-good")).toMatchObject({
      status: "loaded",
      version: "1.2.3",
      drivers: ["echo"],
      source: "config",
      refusal: null,
    });
    expect(host.providers.get("echo-1")?.adapter).not.toBeNull();
  });

  it.each([
    ["fixture-malformed", "manifest_invalid", "switchyard.drivers"],
    ["bad-json", "manifest_invalid", "not valid JSON"],
    ["fixture-incompatible", "spec_incompatible", "supports spec ^2.0.0"],
    ["fixture-throws-on-import", "import_failed", "harness SDK missing"],
    [
      "fixture-wrong-literal",
      "spec_incompatible",
      'declares specificationVersion "v0", which this host does not implement (it supports "v1")',
    ],
    ["fixture-undeclared-driver", "definition_invalid", 'driver "sneaky" is not listed'],
    ["fixture-conflict", "driver_conflict", 'already provided by plugin "fixture-good"'],
    ["fixture-entry-escape", "manifest_invalid", "points outside the plugin folder"],
    [
      "fixture-unpinned-star",
      "manifest_invalid",
      'switchyard.specVersion: "*" spans more than one spec major; pin the major the plugin was written for (for example "^1.0.0")',
    ],
    ["fixture-unpinned-or", "manifest_invalid", '"^1.0.0 || ^2.0.0" spans more than one spec major'],
    ["fixture-unpinned-gte", "manifest_invalid", '">=1" spans more than one spec major'],
    [
      "fixture-commands-host-name",
      "manifest_invalid",
      'switchyard.commands: "serve" is one of switchyard\'s own commands',
    ],
    [
      "fixture-commands-undefined",
      "definition_invalid",
      'its manifest lists command "ghost" but its definition has no commands',
    ],
    [
      "fixture-commands-malformed",
      "definition_invalid",
      'command group "badopt": command "go" option "--home" belongs to the host',
    ],
    [
      "fixture-commands-conflict",
      "command_conflict",
      'command "hello" is already contributed by plugin "fixture-commands-good"',
    ],
    [
      "fixture-routes-undeclared",
      "definition_invalid",
      'its definition has routes but its manifest does not declare "routes": true',
    ],
    [
      "fixture-no-drivers-no-commands",
      "manifest_invalid",
      "switchyard.drivers: a plugin must provide at least one driver, command or API routes",
    ],
  ])(
    "refuses %s (%s) with a message naming the plugin, the problem, the range and the host spec",
    (name, code, problem) => {
      const refused = record(name);
      expect(refused.status).toBe("refused");
      expect(refused.refusal?.code).toBe(code);
      expect(refused.refusal?.message).toContain(problem);
      expect(refused.refusal?.message).toMatch(/^Plugin "[^"]+"/);
      expect(refused.refusal?.message).toContain("Wanted spec range:");
      expect(refused.refusal?.message).toContain("this host implements spec 1.0.0 (v1)");
    },
  );

  it("never imports a plugin whose manifest or range is refused", () => {
    // These fixtures throw at import; their refusal is about the manifest, not the import.
    expect(record("fixture-malformed").refusal?.code).toBe("manifest_invalid");
    expect(record("fixture-incompatible").refusal?.code).toBe("spec_incompatible");
    expect(record("fixture-incompatible").wantedRange).toBe("^2.0.0");
    for (const name of [
      "fixture-unpinned-star",
      "fixture-unpinned-or",
      "fixture-unpinned-gte",
      "fixture-commands-host-name",
      "fixture-commands-conflict",
    ]) {
      expect(record(name).refusal?.code, name).not.toBe("import_failed");
    }
    expect(record("fixture-unpinned-or").wantedRange).toBe("^1.0.0 || ^2.0.0");
  });

  it("loads a plugin that contributes commands, and lists them with its drivers", () => {
    expect(record("fixture-commands-good")).toMatchObject({
      status: "loaded",
      drivers: ["greeter"],
      commands: ["hello"],
      warning: null,
    });
  });

  it("refuses a config entry that does not exist", () => {
    const missing = host.pluginHost.list().find((p) => p.name.endsWith("does-not-exist"));
    expect(missing?.refusal?.code).toBe("not_found");
  });

  it("makes an instance whose create() throws unavailable, naming the plugin and the error, while others run", async () => {
    const fragile = host.providers.get("fragile-1");
    expect(fragile?.adapter).toBeNull();
    expect(fragile?.refusal?.code).toBe("create_failed");
    expect(fragile?.refusal?.message).toContain('Plugin "fixture-throws-on-create"');
    expect(fragile?.refusal?.message).toContain("no API key configured");
    expect(fragile?.refusal?.message).toContain("this host implements spec 1.0.0");
    const availability = await host.providers.availability("fragile-1");
    expect(availability).toMatchObject({ available: false, hasAdapter: false });
    expect((await host.providers.availability("echo-1"))?.available).toBe(true);
  });

  it("explains an instance whose driver no loaded plugin provides", () => {
    const future = host.providers.get("future-1");
    expect(future?.refusal?.code).toBe("unknown_driver");
    expect(future?.refusal?.message).toContain('No loaded plugin provides driver "future"');
  });
});

describe("plugin host: built-in plugins", () => {
  it("load through the same path as third-party plugins", async () => {
    const home = mkdtempSync(join(tmpdir(), "switchyard-builtin-"));
    const host = await SwitchyardHost.create({
      home,
      logger: createSilentLogger(),
      config: {},
      builtinPluginsDir: fixtures,
    });
    try {
      const loaded = host.pluginHost.list().find((p) => p.name === "fixture-throws-on-create");
      expect(loaded).toMatchObject({ status: "loaded", source: "builtin" });
      expect(host.pluginHost.list().find((p) => p.name === "fixture-incompatible")?.refusal?.code).toBe(
        "spec_incompatible",
      );
    } finally {
      await host.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("plugin host: spec versions", () => {
  it("accepts a spec range inside one major and refuses one spanning majors", () => {
    for (const range of [
      "^1.0.0",
      "~1.2",
      "1.x",
      ">=1.1.0 <2.0.0",
      "1.0.0",
      "^0.3.0",
      "^1.0.0-beta.1",
      "1.2.3 || 1.4.x",
    ])
      expect(pinsOneMajor(range), range).toBe(true);
    for (const range of ["*", ">=1", "^1 || ^2", "<2", "<=1.9", "1 - 2.1", ">0.9", "x", "^1.0.0 || 2.0.0-rc.1"])
      expect(pinsOneMajor(range), range).toBe(false);
  });

  it("resolves the current literal as is and refuses any other, naming it and what the host supports", () => {
    const resolver = new SpecVersionResolver();
    const current = { specificationVersion: "v1", drivers: [] };
    expect(resolver.resolve(current)).toEqual({ definition: current, adaptedFrom: null, warning: null });
    expect(resolver.resolve({ specificationVersion: "v2", drivers: [] })).toEqual({
      problem:
        'its definition declares specificationVersion "v2", which this host does not implement (it supports "v1")',
    });
    expect(resolver.resolve({ drivers: [] })).toEqual({
      problem:
        'its definition declares specificationVersion undefined, which this host does not implement (it supports "v1")',
    });
  });

  it("runs a plugin written for an older literal through its adapter, warning once for the whole plugin", async () => {
    // How a v2 host keeps v1 plugins: an adapter from the old literal. "v0" stands in for it.
    const fromV0: SpecVersionAdapter = {
      from: "v0",
      adapt: (definition) => {
        const old = definition as { drivers: { create(input: unknown): Promise<object> | object }[] };
        return {
          specificationVersion: "v1",
          drivers: old.drivers.map((driver) => ({
            ...(driver as object),
            specificationVersion: "v1",
            create: async (input: unknown) => ({ ...(await driver.create(input)), specificationVersion: "v1" }),
          })) as unknown as PluginDefinition["drivers"],
        };
      },
    };
    const lines: string[] = [];
    const logger = createLogger({
      level: "warn",
      format: "json",
      destination: { write: (line: string) => lines.push(line) },
    });
    const home = mkdtempSync(join(tmpdir(), "switchyard-adapted-"));
    const pluginHost = new PluginHost(
      {
        builtinDir: null,
        managedDir: join(home, "plugins"),
        configEntries: [join(fixtures, "older-literal")],
        configBaseDir: home,
      },
      logger,
      new SpecVersionResolver([fromV0]),
    );
    const host = await SwitchyardHost.create({
      home,
      builtinPluginsDir: null,
      logger: createSilentLogger(),
      config: {
        providers: [
          { id: "a", driver: "older-a" },
          { id: "b", driver: "older-b" },
        ],
      },
      overrides: (container) => container.register(TOKENS.PluginHost, { useValue: pluginHost }),
    });
    try {
      const record = host.pluginHost.list().find((p) => p.name === "fixture-older-literal");
      expect(record).toMatchObject({ status: "loaded", drivers: ["older-a", "older-b"], refusal: null });
      expect(record?.warning).toBe(
        "it implements spec v0; this host implements v1 and runs it through a v0 adapter (update the plugin to drop the adapter)",
      );
      const warnings = lines.filter((line) => line.includes("plugin loaded through a spec adapter"));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ plugin: "fixture-older-literal", adaptedFrom: "v0" });
      // Both drivers were adapted: the registry accepted their adapters as v1.
      expect(host.providers.get("a")?.adapter?.specificationVersion).toBe("v1");
      expect(host.providers.get("b")?.adapter?.specificationVersion).toBe("v1");
      expect(await host.providers.availability("a")).toMatchObject({ available: true });
    } finally {
      await host.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("plugin host: command contributions", () => {
  let scratch: string;
  let marker: string;
  let copy: string;
  const hostFor = (...entries: string[]) =>
    new PluginHost(
      { builtinDir: null, managedDir: join(scratch, "plugins"), configEntries: entries, configBaseDir: scratch },
      createSilentLogger(),
    );

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-commands-"));
    marker = join(scratch, "imported.txt");
    // A copy: the first describe block already imported the fixture in this process.
    copy = join(scratch, "commands-good");
    cpSync(join(fixtures, "commands-good"), copy, { recursive: true });
    process.env.SWITCHYARD_TEST_IMPORT_MARKER = marker;
  });
  afterAll(() => {
    delete process.env.SWITCHYARD_TEST_IMPORT_MARKER;
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lists contributed command groups from manifests alone, and imports only the plugin whose group runs", async () => {
    const host = hostFor(copy, join(fixtures, "commands-conflict"), join(fixtures, "good"));
    expect(
      host.commandContributions().map(({ name, description, plugin }) => ({ name, description, plugin: plugin.name })),
    ).toEqual([
      { name: "hello", description: "Greets people (a fixture command group)", plugin: "fixture-commands-good" },
    ]);
    expect(existsSync(marker)).toBe(false);
    const loaded = await host.loadCommandGroup("hello");
    expect(loaded.plugin.name).toBe("fixture-commands-good");
    expect(loaded.group.commands.map((command) => command.name)).toEqual(["greet", "instances", "fail"]);
    expect(readFileSync(marker, "utf8").trim().split("\n")).toHaveLength(1);
    // Nothing else was loaded: no driver, no record.
    expect(host.list()).toEqual([]);
    expect(host.driver("echo")).toBeNull();
  });

  it("refuses to run a group whose plugin is broken, with the plugin's refusal message", async () => {
    const host = hostFor(join(fixtures, "commands-undefined"));
    const failure = await host.loadCommandGroup("ghost").catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "plugin_invalid" });
    expect((failure as Error).message).toMatch(
      /^Plugin "fixture-commands-undefined" \(.*\) refused: its manifest lists command "ghost" but its definition has no commands\. Wanted spec range: \^1\.0\.0; this host implements spec 1\.0\.0 \(v1\)\.$/,
    );
  });

  it("answers not_found for a group no plugin declares", async () => {
    await expect(hostFor(join(fixtures, "good")).loadCommandGroup("nothing")).rejects.toMatchObject({
      code: "not_found",
      message: 'No plugin contributes the command "nothing".',
    });
  });
});
