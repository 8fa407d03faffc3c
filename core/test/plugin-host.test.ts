import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SwitchyardHost } from "../src/host/switchyard-host.js";
import { createSilentLogger } from "../src/logging/logger.js";
import type { PluginRecord } from "../src/plugin-host/plugin-host.js";

const fixtures = fileURLToPath(new URL("./fixtures/plugins/", import.meta.url));
const names = ["good", "malformed-manifest", "bad-json", "incompatible", "throws-on-import", "throws-on-create", "wrong-literal", "undeclared-driver", "conflict", "entry-escape"];

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
    expect(record("fixture-good")).toMatchObject({ status: "loaded", version: "1.2.3", drivers: ["echo"], source: "config", refusal: null });
    expect(host.providers.get("echo-1")?.adapter).not.toBeNull();
  });

  it.each([
    ["fixture-malformed", "manifest_invalid", "switchyard.drivers"],
    ["bad-json", "manifest_invalid", "not valid JSON"],
    ["fixture-incompatible", "spec_incompatible", "supports spec ^2.0.0"],
    ["fixture-throws-on-import", "import_failed", "harness SDK missing"],
    ["fixture-wrong-literal", "spec_incompatible", 'specificationVersion "v0"'],
    ["fixture-undeclared-driver", "definition_invalid", 'driver "sneaky" is not listed'],
    ["fixture-conflict", "driver_conflict", 'already provided by plugin "fixture-good"'],
    ["fixture-entry-escape", "manifest_invalid", "points outside the plugin folder"],
  ])("refuses %s (%s) with a message naming the plugin, the problem, the range and the host spec", (name, code, problem) => {
    const refused = record(name);
    expect(refused.status).toBe("refused");
    expect(refused.refusal?.code).toBe(code);
    expect(refused.refusal?.message).toContain(problem);
    expect(refused.refusal?.message).toMatch(/^Plugin "[^"]+"/);
    expect(refused.refusal?.message).toContain("Wanted spec range:");
    expect(refused.refusal?.message).toContain("this host implements spec 1.0.0 (v1)");
  });

  it("never imports a plugin whose manifest or range is refused", () => {
    // Both fixtures throw at import; their refusal is about the manifest, not the import.
    expect(record("fixture-malformed").refusal?.code).toBe("manifest_invalid");
    expect(record("fixture-incompatible").refusal?.code).toBe("spec_incompatible");
    expect(record("fixture-incompatible").wantedRange).toBe("^2.0.0");
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
    const host = await SwitchyardHost.create({ home, logger: createSilentLogger(), config: {}, builtinPluginsDir: fixtures });
    try {
      const loaded = host.pluginHost.list().find((p) => p.name === "fixture-throws-on-create");
      expect(loaded).toMatchObject({ status: "loaded", source: "builtin" });
      expect(host.pluginHost.list().find((p) => p.name === "fixture-incompatible")?.refusal?.code).toBe("spec_incompatible");
    } finally {
      await host.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
