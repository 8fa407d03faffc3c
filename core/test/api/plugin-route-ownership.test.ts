import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PluginRoutes, RouteContext } from "../../src/spec/index.js";
import { createPluginApiRoutes } from "../../src/transports/http/api/plugin-routes.js";
import { ApiClient } from "../support/api-client.js";
import { runCli } from "../support/cli.js";
import { ServeProcess, writeHomeConfig, type ServeEndpoint } from "../support/serve-process.js";

const IMPOSTOR = fileURLToPath(new URL("../fixtures/plugins/routes-impostor/", import.meta.url));

/**
 * A plugin's API route segment belongs to its identity. A real `switchyard serve` (with the
 * checkout's built-in plugins) and a third-party package named `plugin-acp-registry` in the
 * config, which loads before the built-ins: `/api/v1/plugins/acp-registry/…` stays the built-in
 * ACP Registry plugin's, and the newcomer is refused with a message naming both.
 */
describe("plugin route segments belong to the plugin that owns the name", () => {
  let home: string;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;
  let api: ApiClient;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "switchyard-route-owner-"));
    writeHomeConfig(home, { plugins: [IMPOSTOR] });
    const issued = await runCli(["token", "issue", "--json", "--verbs", "read,operate", "--home", home]);
    expect(issued.code, issued.stderr).toBe(0);
    serve = ServeProcess.start(home);
    endpoint = await serve.ready;
    api = new ApiClient(`${endpoint.url}/api/v1`, (JSON.parse(issued.stdout) as { token: string }).token);
  }, 60_000);

  afterAll(async () => {
    await serve?.terminate();
    rmSync(home, { recursive: true, force: true });
  });

  it("answers the built-in's routes, never the third-party package's, and says why", async () => {
    const installed = await api.get<{ agents: unknown[] }>("/plugins/acp-registry/installed");
    expect(installed.status, installed.text).toBe(200);
    expect(installed.body).toEqual({ agents: [] });
    const jobs = await api.get<{ jobs: unknown[] }>("/plugins/acp-registry/install-jobs");
    expect([jobs.status, jobs.body]).toEqual([200, { jobs: [] }]);
    const document = await api.get<{ paths: Record<string, unknown> }>("/openapi.json");
    expect(
      Object.keys(document.body.paths).filter((path) => path.startsWith("/api/v1/plugins/acp-registry/")),
    ).toContain("/api/v1/plugins/acp-registry/installed");
    expect(serve.stderr).toContain("plugin routes refused");
    expect(serve.stderr).toMatch(
      /plugin-acp-registry.*belong to the built-in plugin \\"@switchyard\/plugin-acp-registry\\"/,
    );
  });
});

describe("createPluginApiRoutes: a built-in keeps its segment whatever the load order", () => {
  const context = (): RouteContext => ({
    specVersion: "1.0.0",
    hostVersion: "0.0.0",
    paths: { home: "/nowhere", data: "/nowhere", cache: "/nowhere" } as never,
    logger: { debug() {}, info() {}, warn() {}, error() {} } as never,
    signal: new AbortController().signal,
  });
  const routes = (answer: string): PluginRoutes => ({
    create: () => [
      {
        method: "GET",
        path: "/who",
        operationId: "who",
        summary: "Who answers",
        scope: "orchestration:read",
        handle: () => ({ answer }),
      },
    ],
  });
  const builtin = { routes: routes("built-in"), plugin: { name: "@switchyard/plugin-acp-registry" } };
  const newcomer = { routes: routes("newcomer"), plugin: { name: "@someone/acp-registry" } };

  it.each([
    ["newcomer first", [newcomer, builtin]],
    ["built-in first", [builtin, newcomer]],
  ])("%s: the newcomer is refused, naming both", async (_order, contributions) => {
    const created = await createPluginApiRoutes(contributions, context, [], [builtin.plugin.name]);
    expect(created.routes.map((route) => route.path)).toEqual(["/plugins/acp-registry/who"]);
    expect(
      await (created.routes[0]!.handle as (input: unknown, context: unknown) => Promise<unknown>)(
        { params: {}, query: {}, body: {} },
        { caller: { capabilities: new Set(), requestScope: "x" }, signal: new AbortController().signal },
      ),
    ).toEqual({ answer: "built-in" });
    expect(created.refused).toEqual([
      {
        plugin: "@someone/acp-registry",
        problem: expect.stringContaining('belong to the built-in plugin "@switchyard/plugin-acp-registry"'),
      },
    ]);
  });

  it("a built-in that mounts no routes still owns its segment", async () => {
    const created = await createPluginApiRoutes([newcomer], context, [], [builtin.plugin.name]);
    expect(created.routes).toEqual([]);
    expect(created.refused[0]?.plugin).toBe("@someone/acp-registry");
  });
});
