import { createServer, type Server } from "node:http";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { runCli } from "./support/cli.js";

/** Every file and folder under `dir`, relative to it. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: false })
    .map((entry) => relative(dir, join(dir, String(entry))))
    .sort();
}

describe("switchyard providers (listing has no side effects)", () => {
  let userHome: string;
  let switchyardHome: string;
  let scratch: string;
  let registry: Server;
  let registryRequests = 0;
  let env: Record<string, string>;
  beforeAll(async () => {
    userHome = mkdtempSync(join(tmpdir(), "switchyard-user-home-"));
    switchyardHome = mkdtempSync(join(tmpdir(), "switchyard-listing-"));
    // Its own TMPDIR: Codex refuses to write its helper links under the temp dir, so a home
    // elsewhere is what shows whether a probe writes into it; and probes must leave no scratch.
    scratch = mkdtempSync(join(tmpdir(), "switchyard-listing-tmp-"));
    registry = createServer((_req, res) => {
      registryRequests += 1;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    const registryUrl = `http://127.0.0.1:${(registry.address() as { port: number }).port}/registry.json`;
    writeFileSync(
      join(switchyardHome, "config.json"),
      JSON.stringify({
        plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
        providers: [
          // No homePath: Codex and Pi would use ~/.codex and ~/.pi/agent.
          { id: "codex", driver: "codex" },
          { id: "codex-exec", driver: "codex-exec" },
          { id: "pi", driver: "pi" },
          { id: "registry", driver: "acp-registry", options: { agentId: "gemini", registryUrl } },
          { id: "scripted", driver: "scripted" },
        ],
      }),
    );
    const xdg = (dir: string) => join(userHome, dir);
    env = {
      HOME: userHome,
      XDG_CONFIG_HOME: xdg(".config"),
      XDG_DATA_HOME: xdg(".local/share"),
      XDG_CACHE_HOME: xdg(".cache"),
      XDG_STATE_HOME: xdg(".local/state"),
      SWITCHYARD_HOME: switchyardHome,
      TMPDIR: scratch,
    };
  });
  afterAll(async () => {
    await new Promise((resolve) => registry.close(resolve));
    rmSync(userHome, { recursive: true, force: true });
    rmSync(switchyardHome, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  it("writes nothing into harness homes, creates no database and uses no network, and still says why not", async () => {
    const result = await runCli(["providers", "--json"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(tree(userHome)).toEqual([]);
    expect(tree(switchyardHome)).toEqual(["config.json"]);
    expect(tree(scratch)).toEqual([]);
    expect(registryRequests).toBe(0);
    const listed = JSON.parse(result.stdout) as {
      id: string;
      available: boolean;
      reason: string | null;
      depth: string;
    }[];
    expect(listed.map((p) => p.id)).toEqual(["codex", "codex-exec", "pi", "registry", "scripted"]);
    expect(listed.every((p) => p.depth === "inspect")).toBe(true);
    expect(listed.find((p) => p.id === "codex")).toMatchObject({
      available: false,
      reason: expect.stringContaining("not logged in"),
    });
    expect(listed.find((p) => p.id === "registry")).toMatchObject({
      available: false,
      reason: expect.stringContaining("No registry index"),
    });
    expect(listed.find((p) => p.id === "scripted")).toMatchObject({ available: true });
  });

  it("says in --help which commands and options may write into harness homes or use the network", async () => {
    const help = await runCli(["providers", "--help"], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("no network");
    expect(help.stdout).toMatch(/--full[\s\S]*use the network/);
    for (const command of ["search", "show", "install"]) {
      const registryHelp = await runCli(["registry", command, "--help"], { env });
      expect(registryHelp.stdout, command).toContain("network");
    }
  });
});

describe("switchyard providers: where each model comes from", () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "switchyard-model-sources-"));
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
        providers: [
          // As a harness pointed at a gateway reports it: its configured model, then its own catalog.
          {
            id: "gateway",
            driver: "scripted",
            customModels: ["served-too"],
            options: {
              models: ["configured", "catalog-a", "catalog-b", "unsaid"],
              modelSources: {
                configured: "harness_config",
                "catalog-a": "harness_catalog",
                "catalog-b": "harness_catalog",
              },
            },
          },
          {
            id: "plain",
            driver: "scripted",
            options: { models: ["configured"], modelSources: { configured: "harness_config" } },
          },
        ],
      }),
    );
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("groups the models by source in --json, and the table notes a harness's own catalog", async () => {
    const json = await runCli(["providers", "--json", "--home", home]);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as {
      id: string;
      models: string[];
      modelSources: Record<string, string[]>;
    }[];
    expect(listed.find((p) => p.id === "gateway")).toMatchObject({
      models: ["served-too", "configured", "catalog-a", "catalog-b", "unsaid"],
      modelSources: {
        custom: ["served-too"],
        harness_config: ["configured"],
        harness_catalog: ["catalog-a", "catalog-b"],
        unknown: ["unsaid"],
      },
    });
    expect(listed.find((p) => p.id === "plain")?.modelSources).toEqual({ harness_config: ["configured"] });

    const table = await runCli(["providers", "--home", home]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(
      "note: gateway: 2 of its 5 models come from scripted's own catalog, which it lists whatever endpoint it is pointed at",
    );
    expect(table.stdout).toContain("name the models that serves in customModels (docs/models.md)");
    expect(table.stdout).not.toContain("note: plain");
  });
});
