import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryCatalog, type RegistryCatalogOptions } from "../src/index.js";
import { buildTarGz } from "./support/archives.js";
import {
  PLATFORM,
  agentEntry,
  binaryDistribution,
  makeTempDir,
  recordingLogger,
  registryIndex,
  sha256,
} from "./support/fixtures.js";
import { TestServer, serveBytes, serveChunked, serveJson } from "./support/http-server.js";
import { snapshotTree } from "./support/tree-snapshot.js";

describe("registry index", () => {
  let server: TestServer;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await TestServer.start();
  });

  afterAll(async () => {
    await server.close();
    for (const cleanup of cleanups) await cleanup();
  });

  async function cacheDir(): Promise<string> {
    const dir = await makeTempDir("index-cache");
    cleanups.push(dir.cleanup);
    return dir.path;
  }

  function serveIndex(value: unknown): string {
    const path = `/${Math.random().toString(36).slice(2)}/registry.json`;
    server.route(path, serveJson(value));
    return server.url(path);
  }

  async function catalog(registryUrl: string, options: Partial<RegistryCatalogOptions> = {}): Promise<RegistryCatalog> {
    return new RegistryCatalog({ cacheDir: await cacheDir(), registryUrl, platform: PLATFORM, ...options });
  }

  const archive = "https://example.com/agent-linux-x64.tar.gz";

  it("drops invalid agents with a warning naming the agent and the field, and keeps valid ones", async () => {
    const logger = recordingLogger();
    const url = serveIndex({
      version: "1.0.0",
      agents: [
        agentEntry("good-binary", binaryDistribution(archive, { sha256: "A".repeat(64) })),
        agentEntry("good-npx", { npx: { package: "@scope/agent@2.3.4", args: ["--acp"] } }),
        agentEntry("good-uvx", { uvx: { package: "agent-py==0.1.0" } }),
        { ...agentEntry("no-version", { npx: { package: "x@1.0.0" } }), version: undefined },
        agentEntry("Bad_Id", { npx: { package: "x@1.0.0" } }),
        agentEntry("bad-sha", binaryDistribution(archive, { sha256: "xyz" })),
        agentEntry("npx-range", { npx: { package: "agent@^1.0.0" } }),
        agentEntry("npx-tag", { npx: { package: "agent@latest" } }),
        agentEntry("uvx-range", { uvx: { package: "agent>=1.0" } }),
        agentEntry("plain-http", binaryDistribution("http://example.com/agent.tar.gz")),
        agentEntry("escaping-cmd", binaryDistribution(archive, { cmd: "../../bin/sh" })),
        agentEntry("no-distribution", {}),
        agentEntry("good-binary", { npx: { package: "dup@1.0.0" } }),
        "not an object",
      ],
      extensions: [],
    });
    const registry = await catalog(url, { logger });

    const loaded = await registry.loadIndex();

    expect(loaded.index.agents.map((agent) => agent.id)).toEqual(["good-binary", "good-npx", "good-uvx"]);
    expect(loaded.index.agents[0]?.distribution.binary?.[PLATFORM]?.sha256).toBe("a".repeat(64));
    const dropped = Object.fromEntries(loaded.dropped.map((entry) => [entry.agentId, entry.field]));
    expect(dropped).toEqual({
      "no-version": "version",
      Bad_Id: "id",
      "bad-sha": `distribution.binary.${PLATFORM}.sha256`,
      "npx-range": "distribution.npx.package",
      "npx-tag": "distribution.npx.package",
      "uvx-range": "distribution.uvx.package",
      "plain-http": `distribution.binary.${PLATFORM}.archive`,
      "escaping-cmd": `distribution.binary.${PLATFORM}.cmd`,
      "no-distribution": "distribution",
      "good-binary": "id",
      "#13": "(entry)",
    });
    expect(logger.warnings).toHaveLength(11);
    expect(logger.warnings[0]).toMatchObject({
      message: expect.stringContaining("dropped"),
      fields: { agentId: "no-version", field: "version" },
    });
    const search = await registry.search("", { includeUnavailable: true });
    expect(search.index.droppedAgents).toBe(11);
  });

  it("refuses an index whose envelope is wrong, or that is not JSON, with invalid_index", async () => {
    await expect((await catalog(serveIndex({ version: "1.0.0", agents: "nope" }))).loadIndex()).rejects.toMatchObject({
      reason: "invalid_index",
    });
    await expect((await catalog(serveIndex({ agents: [] }))).loadIndex()).rejects.toMatchObject({
      reason: "invalid_index",
    });
    const path = "/not-json/registry.json";
    server.route(path, serveBytes("<html>", { contentType: "text/html" }));
    await expect((await catalog(server.url(path))).loadIndex()).rejects.toMatchObject({ reason: "invalid_index" });
  });

  it("refuses an index over 1 MiB while streaming it (no Content-Length), leaving the cached copy untouched", async () => {
    const dir = await cacheDir();
    const path = "/big/registry.json";
    server.route(path, serveJson(registryIndex([agentEntry("kept", { npx: { package: "kept@1.0.0" } })])));
    const first = new RegistryCatalog({ cacheDir: dir, registryUrl: server.url(path), platform: PLATFORM });
    await first.loadIndex();
    const before = await snapshotTree(dir);

    server.route(path, serveChunked(1024 * 1024 + 1));
    const second = new RegistryCatalog({ cacheDir: dir, registryUrl: server.url(path), platform: PLATFORM });
    const error = await second.loadIndex().catch((e: unknown) => e);

    expect(error).toMatchObject({ reason: "index_too_large", details: { limitBytes: 1024 * 1024 } });
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it("refuses an index whose Content-Length announces more than 1 MiB without reading it", async () => {
    const path = "/big-declared/registry.json";
    server.route(path, serveBytes(Buffer.alloc(2 * 1024 * 1024, " "), { contentType: "application/json" }));
    await expect((await catalog(server.url(path))).loadIndex()).rejects.toMatchObject({
      reason: "index_too_large",
      details: { receivedBytes: 2 * 1024 * 1024 },
    });
  });

  it("falls back to the cached index when offline, reporting it as stale", async () => {
    const offline = await TestServer.start();
    const dir = await cacheDir();
    offline.route(
      "/registry.json",
      serveJson(registryIndex([agentEntry("cached-agent", { npx: { package: "cached@1.0.0" } })])),
    );
    const registryUrl = offline.url("/registry.json");
    const online = await new RegistryCatalog({ cacheDir: dir, registryUrl, platform: PLATFORM }).search("cached", {
      includeUnavailable: true,
    });
    expect(online.index).toMatchObject({ source: "network", stale: false });
    await offline.close();

    const logger = recordingLogger();
    const result = await new RegistryCatalog({ cacheDir: dir, registryUrl, platform: PLATFORM, logger }).search(
      "cached",
      { includeUnavailable: true },
    );

    expect(result.agents.map((agent) => agent.id)).toEqual(["cached-agent"]);
    expect(result.index).toMatchObject({ source: "cache", stale: true, fetchedAt: online.index.fetchedAt });
    expect(result.index.refreshError).toBeTruthy();
    expect(logger.warnings.map((warning) => warning.message)).toContain(
      "registry index refresh failed; using the cached copy",
    );

    // A cached copy from a different registry URL is never used in its place.
    const other = new RegistryCatalog({
      cacheDir: dir,
      registryUrl: registryUrl.replace("/registry.json", "/other.json"),
      platform: PLATFORM,
    });
    await expect(other.loadIndex()).rejects.toMatchObject({ reason: "index_unavailable" });
  });

  it("reports index_unavailable when offline with no cached copy", async () => {
    const gone = await TestServer.start();
    const registryUrl = gone.url("/registry.json");
    await gone.close();
    const registry = await catalog(registryUrl);
    await expect(registry.loadIndex()).rejects.toMatchObject({ reason: "index_unavailable" });
    expect(await registry.inspect("anything")).toMatchObject({ state: "unconfigured", reason: "index_unavailable" });
  });

  it("inspects offline from the cached index only, never fetching it (a provider listing)", async () => {
    const path = "/offline-inspect/registry.json";
    server.route(path, serveJson(registryIndex([agentEntry("cached-agent", binaryDistribution(archive))])));
    const dir = await cacheDir();
    const registryUrl = server.url(path);
    const fresh = new RegistryCatalog({ cacheDir: dir, registryUrl, platform: PLATFORM });
    expect(await fresh.inspect("cached-agent", { offline: true })).toMatchObject({
      state: "unconfigured",
      reason: "index_unavailable",
      message: expect.stringContaining("switchyard registry search"),
    });
    await expect(fresh.resolveLaunch("cached-agent", { offline: true })).rejects.toMatchObject({
      reason: "index_unavailable",
    });
    expect(server.hits(path)).toBe(0);

    await new RegistryCatalog({ cacheDir: dir, registryUrl, platform: PLATFORM }).loadIndex();
    expect(server.hits(path)).toBe(1);
    const later = new RegistryCatalog({ cacheDir: dir, registryUrl, platform: PLATFORM });
    expect(await later.inspect("cached-agent", { offline: true })).toMatchObject({
      state: "unprepared",
      distribution: "binary",
    });
    expect(server.hits(path)).toBe(1);
  });

  it("accepts https anywhere and http only on loopback, and never URLs with credentials", async () => {
    const dir = await cacheDir();
    expect(() => new RegistryCatalog({ cacheDir: dir, registryUrl: "http://example.com/registry.json" })).toThrow(
      expect.objectContaining({ reason: "url_not_allowed" }),
    );
    expect(
      () => new RegistryCatalog({ cacheDir: dir, registryUrl: "https://user:secret@example.com/registry.json" }),
    ).toThrow(expect.objectContaining({ reason: "url_not_allowed", message: expect.not.stringContaining("secret") }));
    expect(() => new RegistryCatalog({ cacheDir: dir, registryUrl: "ftp://example.com/registry.json" })).toThrow(
      expect.objectContaining({ reason: "url_not_allowed" }),
    );
    expect(new RegistryCatalog({ cacheDir: dir }).registryUrl).toBe(
      "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json",
    );
    expect(new RegistryCatalog({ cacheDir: dir, registryUrl: "http://localhost:1/registry.json" }).registryUrl).toBe(
      "http://localhost:1/registry.json",
    );
  });

  it("ranks search results, applies the limit, and hides agents that cannot run here unless asked", async () => {
    const url = serveIndex(
      registryIndex([
        agentEntry("helper", binaryDistribution(archive), { name: "Helper", description: "Works alongside codex" }),
        agentEntry("codex-acp", binaryDistribution(archive), { name: "Codex" }),
        agentEntry("codex-mini", { npx: { package: "codex-mini@1.0.0" } }, { name: "Mini" }),
        agentEntry("mac-only", { binary: { "darwin-aarch64": { archive, cmd: "./a" } } }, { name: "Codex for Mac" }),
      ]),
    );
    const registry = await catalog(url);

    const result = await registry.search("codex");
    expect(result.agents.map((agent) => agent.id)).toEqual(["codex-acp", "codex-mini", "helper"]);
    expect(result.hiddenUnavailable).toBe(1);
    expect(result.agents[0]).toMatchObject({
      distribution: "binary",
      available: true,
      integrity: "recorded",
      installed: false,
    });
    expect(result.agents[1]).toMatchObject({ distribution: "npx", integrity: "package_version" });

    expect((await registry.search("codex", { limit: 1 })).agents.map((agent) => agent.id)).toEqual(["codex-acp"]);
    expect((await registry.search("codex", { limit: 1 })).total).toBe(3);
    const all = await registry.search("codex", { includeUnavailable: true });
    expect(all.agents.find((agent) => agent.id === "mac-only")).toMatchObject({
      available: false,
      unavailableReason: "unsupported",
      distribution: null,
      integrity: null,
    });
    expect((await registry.search("codex mac", { includeUnavailable: true })).agents.map((agent) => agent.id)).toEqual([
      "mac-only",
    ]);
  });

  it("inspects readiness without installing: not_found, unsupported, unprepared, unconfigured", async () => {
    const url = serveIndex(
      registryIndex([
        agentEntry("linux-agent", binaryDistribution(archive)),
        agentEntry("mac-only", { binary: { "darwin-aarch64": { archive, cmd: "./a" } } }),
      ]),
    );
    const registry = await catalog(url);
    expect(await registry.inspect("linux-agent")).toMatchObject({
      state: "unprepared",
      distribution: "binary",
      version: "1.0.0",
    });
    expect(await registry.inspect("mac-only")).toMatchObject({
      state: "unsupported",
      message: expect.stringContaining("darwin-aarch64"),
    });
    expect(await registry.inspect("missing")).toMatchObject({ state: "not_found" });
    expect(await registry.inspect("")).toMatchObject({ state: "unconfigured" });
    await expect(registry.prepare("mac-only")).rejects.toMatchObject({ reason: "unsupported_platform" });
    await expect(registry.show("linux-agnt")).rejects.toMatchObject({
      reason: "not_found",
      details: { similar: ["linux-agent"] },
    });
    await expect(registry.prepare("../etc")).rejects.toMatchObject({ reason: "invalid_agent_id" });
    const details = await registry.show("linux-agent");
    expect(details).toMatchObject({
      agent: { id: "linux-agent" },
      readiness: { state: "unprepared" },
      installed: [],
      summary: { integrity: "recorded" },
    });
  });

  it("launches an installed agent from its receipt when the index is unavailable", async () => {
    const body = buildTarGz([{ name: "agent", type: "file", content: '#!/bin/sh\necho "ok $*"\n', mode: 0o755 }]);
    const path = "/receipt-launch/agent.tar.gz";
    server.route(path, serveBytes(body));
    const dir = await cacheDir();
    const indexServer = await TestServer.start();
    indexServer.route(
      "/registry.json",
      serveJson(
        registryIndex([
          agentEntry("offline-agent", binaryDistribution(server.url(path), { sha256: sha256(body), args: ["acp"] })),
        ]),
      ),
    );
    const registryUrl = indexServer.url("/registry.json");
    const prepared = await new RegistryCatalog({ cacheDir: dir, registryUrl, platform: PLATFORM }).prepare(
      "offline-agent",
    );
    await indexServer.close();
    await rm(join(dir, "registry.json"));
    await rm(join(dir, "registry.meta.json"));

    const logger = recordingLogger();
    const registry = new RegistryCatalog({ cacheDir: dir, registryUrl, platform: PLATFORM, logger });
    expect(await registry.resolveLaunch("offline-agent")).toEqual(prepared.launch);
    expect(await registry.inspect("offline-agent")).toMatchObject({ state: "ready", launch: prepared.launch });
    expect(logger.warnings.map((warning) => warning.message)).toContain(
      "registry index unavailable; launching from the install receipt",
    );
  });
});
