import { randomBytes } from "node:crypto";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryCatalog, type InstallProgress, type RegistryCatalogOptions } from "../src/index.js";
import { AGENT_SCRIPT, buildTarGz, buildZip, run, type RawEntry } from "./support/archives.js";
import {
  PLATFORM,
  agentEntry,
  binaryDistribution,
  buildGoodArchives,
  makeTempDir,
  registryIndex,
  sha256,
} from "./support/fixtures.js";
import { TestServer, serveBytes, serveJson, serveTruncated } from "./support/http-server.js";
import { snapshotTree } from "./support/tree-snapshot.js";

describe("binary archive installs", () => {
  let server: TestServer;
  let work: Awaited<ReturnType<typeof makeTempDir>>;
  let archives: Awaited<ReturnType<typeof buildGoodArchives>>;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await TestServer.start();
    work = await makeTempDir("binary");
    archives = await buildGoodArchives(work.path);
  });

  afterAll(async () => {
    await server.close();
    for (const cleanup of cleanups) await cleanup();
    await work.cleanup();
  });

  /** Serves an index with these agents under a fresh path, and returns a catalog on a fresh cache. */
  async function catalogFor(
    agents: unknown[],
    options: Partial<RegistryCatalogOptions> = {},
  ): Promise<{ catalog: RegistryCatalog; cacheDir: string; registryUrl: string }> {
    const cache = await makeTempDir("cache");
    cleanups.push(cache.cleanup);
    const path = `/index-${Math.random().toString(36).slice(2)}/registry.json`;
    server.route(path, serveJson(registryIndex(agents)));
    const registryUrl = server.url(path);
    return {
      catalog: new RegistryCatalog({ cacheDir: cache.path, registryUrl, platform: PLATFORM, ...options }),
      cacheDir: cache.path,
      registryUrl,
    };
  }

  function serveArchive(name: string, body: Buffer): string {
    const path = `/downloads/${Math.random().toString(36).slice(2)}/${name}`;
    server.route(path, serveBytes(body));
    return server.url(path);
  }

  const formats = [
    { label: "tar.gz", file: "agent-linux-x64.tar.gz", body: () => archives.tarGz, cmd: "./agent" },
    { label: "tgz", file: "agent-linux-x64.tgz", body: () => archives.tarGz, cmd: "./agent" },
    { label: "tar.bz2", file: "agent-linux-x64.tar.bz2", body: () => archives.tarBz2, cmd: "./agent" },
    { label: "tbz2", file: "agent-linux-x64.tbz2", body: () => archives.tarBz2, cmd: "agent" },
    { label: "zip", file: "agent-linux-x64.zip", body: () => archives.zip, cmd: "./agent" },
    { label: "raw binary", file: "agent-linux-x64", body: () => archives.raw, cmd: "./agent" },
  ];

  it.each(formats)(
    "installs a $label archive with a declared sha256, and the command runs",
    async ({ file, body, cmd }) => {
      const archive = serveArchive(file, body());
      const { catalog } = await catalogFor([
        agentEntry(
          "demo",
          binaryDistribution(archive, { sha256: sha256(body()), cmd, args: ["--acp"], env: { DEMO: "1" } }),
        ),
      ]);
      const progress: InstallProgress[] = [];

      const prepared = await catalog.prepare("demo", { onProgress: (event) => progress.push(event) });

      expect(prepared).toMatchObject({
        agentId: "demo",
        version: "1.0.0",
        distribution: "binary",
        alreadyInstalled: false,
        integrity: "sha256",
        sha256: sha256(body()),
      });
      expect(prepared.launch).toMatchObject({ args: ["--acp"], env: { DEMO: "1" }, commandOverridden: false });
      expect(prepared.location).toContain(join("agents", "demo", "1.0.0", PLATFORM));
      const { stdout } = await run(prepared.launch.command, [...prepared.launch.args], {
        env: { ...process.env, ...prepared.launch.env },
      });
      expect(stdout.trim()).toBe("ok --acp");

      const phases = progress.map((event) => event.phase);
      // Each phase once, in order (downloading repeats per chunk).
      expect(phases.filter((phase, index) => phase !== phases[index - 1])).toEqual([
        "downloading",
        "verifying",
        "extracting",
        "done",
      ]);
      const lastDownload = progress.filter((event) => event.phase === "downloading").at(-1);
      expect(lastDownload).toMatchObject({ receivedBytes: body().length, totalBytes: body().length });

      const receipt = JSON.parse(await readFile(join(prepared.location, "receipt.json"), "utf8"));
      expect(receipt).toMatchObject({
        agentId: "demo",
        sha256: sha256(body()),
        integrity: "sha256",
        archiveUrl: archive,
        cmd,
        args: ["--acp"],
        env: { DEMO: "1" },
      });
      expect(typeof receipt.installedAt).toBe("string");

      expect((await catalog.inspect("demo")).state).toBe("ready");
      expect((await catalog.prepare("demo")).alreadyInstalled).toBe(true);
      expect(await catalog.resolveLaunch("demo")).toEqual(prepared.launch);
    },
  );

  it("makes the command executable even when the archive lost its mode bits", async () => {
    const body = buildZip([
      { name: "bin/", type: "dir" },
      { name: "bin/agent", type: "file", content: AGENT_SCRIPT, mode: 0o644 },
    ]);
    const { catalog } = await catalogFor([
      agentEntry("modeless", binaryDistribution(serveArchive("a.zip", body), { cmd: "./bin/agent" })),
    ]);
    const prepared = await catalog.prepare("modeless");
    expect((await run(prepared.launch.command, [])).stdout.trim()).toBe("ok");
  });

  it("never installs set-uid, set-gid or sticky bits from an archive", async () => {
    const body = buildTarGz([
      { name: "agent", type: "file", content: AGENT_SCRIPT, mode: 0o6755 },
      { name: "helper", type: "file", content: "x", mode: 0o4711 },
      { name: "shared/", type: "dir", mode: 0o1777 },
    ]);
    const { catalog } = await catalogFor([agentEntry("setuid", binaryDistribution(serveArchive("s.tar.gz", body)))]);
    const prepared = await catalog.prepare("setuid");
    const files = join(prepared.location, "files");
    for (const name of ["agent", "helper", "shared"]) expect((await stat(join(files, name))).mode & 0o7000).toBe(0);
    expect((await stat(join(files, "helper"))).mode & 0o777).toBe(0o711);
  });

  it("records the hash when none is declared, shows it as `recorded`, and refuses a changed file later", async () => {
    const path = `/downloads/tofu/agent.tar.gz`;
    server.route(path, serveBytes(archives.tarGz));
    const { catalog, cacheDir } = await catalogFor([agentEntry("tofu", binaryDistribution(server.url(path)))], {
      limits: { postPrepareReservationMs: 0 },
    });

    const before = await catalog.search("tofu");
    expect(before.agents[0]).toMatchObject({ id: "tofu", integrity: "recorded", installed: false });
    const prepared = await catalog.prepare("tofu");
    expect(prepared).toMatchObject({ integrity: "recorded", sha256: sha256(archives.tarGz) });
    const after = await catalog.search("tofu");
    expect(after.agents[0]).toMatchObject({ integrity: "recorded", installed: true });
    expect((await catalog.list())[0]).toMatchObject({
      agentId: "tofu",
      integrity: "recorded",
      sha256: sha256(archives.tarGz),
    });

    // The publisher swaps the file behind the same URL: the recorded hash catches it.
    await catalog.uninstall("tofu");
    server.route(
      path,
      serveBytes(buildTarGz([{ name: "agent", type: "file", content: "#!/bin/sh\necho replaced\n", mode: 0o755 }])),
    );
    const snapshot = await snapshotTree(cacheDir);
    const error = await catalog.prepare("tofu").catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: "checksum_mismatch", details: { expected: sha256(archives.tarGz) } });
    expect((error as Error).message).toContain("recorded when it was first installed");
    expect(await snapshotTree(cacheDir)).toEqual(snapshot);
  });

  /** Runs a failing install on a cache that already holds another agent and the index. */
  async function expectRefusedWithUntouchedCache(
    body: Buffer,
    fileName: string,
    reason: string,
    options: { sha256?: string; truncated?: boolean; cmd?: string } = {},
  ): Promise<Error> {
    const good = serveArchive("good.tar.gz", archives.tarGz);
    const badPath = `/downloads/${Math.random().toString(36).slice(2)}/${fileName}`;
    server.route(
      badPath,
      options.truncated === true ? serveTruncated(body, Math.floor(body.length / 2)) : serveBytes(body),
    );
    const { catalog, cacheDir } = await catalogFor([
      agentEntry("good", binaryDistribution(good, { sha256: sha256(archives.tarGz) })),
      agentEntry(
        "bad",
        binaryDistribution(server.url(badPath), {
          ...(options.sha256 === undefined ? {} : { sha256: options.sha256 }),
          ...(options.cmd === undefined ? {} : { cmd: options.cmd }),
        }),
      ),
    ]);
    await catalog.prepare("good");
    const before = await snapshotTree(cacheDir);
    expect(Object.keys(before)).toContain("registry.json");

    const error = await catalog.prepare("bad").catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "RegistryError", reason });
    expect(await snapshotTree(cacheDir)).toEqual(before);
    expect((await catalog.inspect("bad")).state).toBe("unprepared");
    return error as Error;
  }

  it("refuses a wrong checksum and leaves the cache exactly as it was", async () => {
    const error = await expectRefusedWithUntouchedCache(archives.tarGz, "agent.tar.gz", "checksum_mismatch", {
      sha256: "0".repeat(64),
    });
    expect(error).toMatchObject({ details: { expected: "0".repeat(64), actual: sha256(archives.tarGz) } });
    expect(error.message).toMatch(/retry/);
  });

  it("refuses a truncated download (connection reset before Content-Length) and leaves the cache untouched", async () => {
    const big = Buffer.concat([archives.tarGz, Buffer.alloc(256 * 1024, 7)]);
    const error = await expectRefusedWithUntouchedCache(big, "agent.tar.gz", "download_truncated", { truncated: true });
    expect(error).toMatchObject({ details: { expectedBytes: big.length } });
  });

  it("refuses a corrupt archive as broken_archive", async () => {
    await expectRefusedWithUntouchedCache(
      archives.tarGz.subarray(0, Math.floor(archives.tarGz.length / 2)),
      "agent.tar.gz",
      "broken_archive",
    );
  });

  it("refuses content that contradicts its extension as broken_archive", async () => {
    await expectRefusedWithUntouchedCache(archives.zip, "agent.tar.gz", "broken_archive");
  });

  it("refuses an archive that lacks the declared command", async () => {
    await expectRefusedWithUntouchedCache(archives.tarGz, "agent.tar.gz", "command_not_found", {
      cmd: "./missing-agent",
    });
  });

  const agentFile: RawEntry = { name: "agent", type: "file", content: AGENT_SCRIPT, mode: 0o755 };
  const hostile: { label: string; file: string; body: () => Buffer; entry: string }[] = [
    {
      label: "a '..' entry",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "../evil", type: "file", content: "x" }]),
      entry: "../evil",
    },
    {
      label: "a nested '..' entry",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "lib/../../evil", type: "file", content: "x" }]),
      entry: "lib/../../evil",
    },
    {
      label: "an absolute path",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "/tmp/switchyard-evil", type: "file", content: "x" }]),
      entry: "/tmp/switchyard-evil",
    },
    {
      label: "a symlink escaping the root",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "lib/escape", type: "symlink", target: "../../outside" }]),
      entry: "lib/escape",
    },
    {
      label: "an absolute symlink",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "etc", type: "symlink", target: "/etc" }]),
      entry: "etc",
    },
    {
      label: "a symlink chain escaping through another symlink",
      file: "a.tar.gz",
      body: () =>
        buildTarGz([
          agentFile,
          { name: "a/", type: "dir" },
          { name: "a/b", type: "symlink", target: ".." },
          { name: "c", type: "symlink", target: "a/b/.." },
        ]),
      entry: "c",
    },
    {
      label: "a file written through an in-archive symlink",
      file: "a.tar.gz",
      body: () =>
        buildTarGz([
          agentFile,
          { name: "dir", type: "symlink", target: "." },
          { name: "dir/other", type: "file", content: "x" },
        ]),
      entry: "dir/other",
    },
    {
      label: "a hardlink escaping the root",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "passwd", type: "hardlink", target: "../../etc/passwd" }]),
      entry: "passwd",
    },
    {
      label: "an absolute hardlink",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "passwd", type: "hardlink", target: "/etc/passwd" }]),
      entry: "passwd",
    },
    {
      label: "a device file",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "null", type: "chardev" }]),
      entry: "null",
    },
    {
      label: "a FIFO",
      file: "a.tar.gz",
      body: () => buildTarGz([agentFile, { name: "pipe", type: "fifo" }]),
      entry: "pipe",
    },
    {
      label: "a zip '..' entry",
      file: "a.zip",
      body: () => buildZip([agentFile, { name: "../evil", type: "file", content: "x" }]),
      entry: "../evil",
    },
    {
      label: "a zip absolute path",
      file: "a.zip",
      body: () => buildZip([agentFile, { name: "/tmp/evil", type: "file", content: "x" }]),
      entry: "/tmp/evil",
    },
    {
      label: "a zip symlink escaping the root",
      file: "a.zip",
      body: () => buildZip([agentFile, { name: "link", type: "symlink", target: "/etc/passwd" }]),
      entry: "link",
    },
    {
      label: "a zip device file",
      file: "a.zip",
      body: () => buildZip([agentFile, { name: "dev", type: "chardev" }]),
      entry: "dev",
    },
  ];

  it.each(hostile)("refuses $label, naming the entry, and installs nothing", async ({ file, body, entry }) => {
    const error = await expectRefusedWithUntouchedCache(body(), file, "unsafe_archive_entry");
    expect(error).toMatchObject({ details: { entry } });
    expect(error.message).toContain(`"${entry}"`);
  });

  // A .tar.gz is extracted while it downloads: these archives are large enough to arrive in many
  // chunks, so files are already in the staging folder when the refusal comes.
  const manyFiles = (extra: RawEntry[] = []): Buffer =>
    buildTarGz([
      agentFile,
      ...Array.from({ length: 40 }, (_, i): RawEntry => ({
        name: `lib/part-${i}.bin`,
        type: "file",
        content: randomBytes(64 * 1024),
      })),
      ...extra,
    ]);

  it("refuses a wrong checksum only once the streamed extraction is done, and leaves nothing of it in the cache", async () => {
    const body = manyFiles();
    const error = await expectRefusedWithUntouchedCache(body, "agent.tar.gz", "checksum_mismatch", {
      sha256: "1".repeat(64),
    });
    expect(error).toMatchObject({ details: { expected: "1".repeat(64), actual: sha256(body) } });
  });

  it("reports a tampered archive as a checksum mismatch even when it also holds an unsafe entry", async () => {
    await expectRefusedWithUntouchedCache(
      manyFiles([{ name: "../evil", type: "file", content: "x" }]),
      "agent.tar.gz",
      "checksum_mismatch",
      { sha256: "2".repeat(64) },
    );
  });

  it("refuses an unsafe entry that comes after many written files, and leaves nothing of them in the cache", async () => {
    const error = await expectRefusedWithUntouchedCache(
      manyFiles([
        { name: "dir", type: "symlink", target: "." },
        { name: "dir/late", type: "file", content: "x" },
      ]),
      "agent.tar.gz",
      "unsafe_archive_entry",
    );
    expect(error).toMatchObject({ details: { entry: "dir/late" } });
  });

  it("stops when the caller aborts, or when the archive exceeds the size cap, leaving the cache untouched", async () => {
    const slowPath = "/downloads/slow/agent.tar.gz";
    server.route(slowPath, serveBytes(archives.tarGz, { delayMs: 5_000 }));
    const { catalog, cacheDir } = await catalogFor([agentEntry("slow", binaryDistribution(server.url(slowPath)))]);
    await catalog.loadIndex();
    const before = await snapshotTree(cacheDir);
    const controller = new AbortController();
    const pending = catalog.prepare("slow", {
      signal: controller.signal,
      onProgress: (event) => event.phase === "downloading" && controller.abort(),
    });
    await expect(pending).rejects.toMatchObject({ reason: "aborted" });
    expect(await snapshotTree(cacheDir)).toEqual(before);

    const capped = await catalogFor(
      [agentEntry("big", binaryDistribution(serveArchive("big.tar.gz", archives.tarGz)))],
      { limits: { maxArchiveBytes: 100 } },
    );
    await expect(capped.catalog.prepare("big")).rejects.toMatchObject({
      reason: "download_too_large",
      details: { limitBytes: 100 },
    });
  });

  it("refuses installer formats before downloading", async () => {
    const path = "/downloads/agent.dmg";
    server.route(path, serveBytes("dmg"));
    const { catalog } = await catalogFor([agentEntry("mac", binaryDistribution(server.url(path)))]);
    await expect(catalog.prepare("mac")).rejects.toMatchObject({ reason: "unsupported_archive" });
    expect(server.hits(path)).toBe(0);
  });

  it("reports an HTTP error as download_failed", async () => {
    const { catalog } = await catalogFor([
      agentEntry("gone", binaryDistribution(server.url("/downloads/missing.tar.gz"))),
    ]);
    await expect(catalog.prepare("gone")).rejects.toMatchObject({
      reason: "download_failed",
      details: { status: 404 },
    });
  });

  it("launches a local command override with the registry-declared args and env, without installing", async () => {
    const override = join(work.path, "local-agent");
    await writeFile(override, AGENT_SCRIPT);
    await chmod(override, 0o755);
    const { catalog } = await catalogFor([
      agentEntry(
        "local",
        binaryDistribution(serveArchive("x.tar.gz", archives.tarGz), {
          args: ["acp", "--stdio"],
          env: { MODE: "acp" },
        }),
      ),
    ]);

    const launch = await catalog.resolveLaunch("local", { commandOverride: override });

    expect(launch).toMatchObject({
      command: override,
      args: ["acp", "--stdio"],
      env: { MODE: "acp" },
      commandOverridden: true,
      distribution: "binary",
    });
    expect((await run(launch.command, [...launch.args])).stdout.trim()).toBe("ok acp --stdio");
    await expect(catalog.resolveLaunch("local")).rejects.toMatchObject({ reason: "not_prepared" });
    await expect(catalog.resolveLaunch("local", { commandOverride: join(work.path, "nope") })).rejects.toMatchObject({
      reason: "invalid_command_override",
    });
  });

  it("refuses to uninstall while an instance uses the agent, then removes it", async () => {
    const archive = serveArchive("u.tar.gz", archives.tarGz);
    const inUse = new Set<string>(["busy"]);
    const { catalog, cacheDir } = await catalogFor([agentEntry("busy", binaryDistribution(archive))], {
      isInUse: (agentId) => inUse.has(agentId),
      limits: { postPrepareReservationMs: 0 },
    });
    const prepared = await catalog.prepare("busy");

    await expect(catalog.uninstall("busy")).rejects.toMatchObject({ reason: "in_use", details: { agentId: "busy" } });
    await expect(catalog.uninstall("busy", { isInUse: () => true })).rejects.toMatchObject({ reason: "in_use" });
    expect((await catalog.inspect("busy")).state).toBe("ready");

    inUse.clear();
    // A version is matched against what is installed, never used as a path.
    expect((await catalog.uninstall("busy", { version: "../.." })).removed).toEqual([]);
    expect((await catalog.uninstall("busy", { version: "9.9.9" })).removed).toEqual([]);
    expect((await catalog.inspect("busy")).state).toBe("ready");
    const result = await catalog.uninstall("busy");
    expect(result.removed).toHaveLength(1);
    expect(result.removed[0]).toMatchObject({ agentId: "busy", location: prepared.location });
    expect((await catalog.inspect("busy")).state).toBe("unprepared");
    expect(await catalog.list()).toEqual([]);
    expect(Object.keys(await snapshotTree(cacheDir)).filter((path) => path.startsWith("agents/busy"))).toEqual([]);
  });

  it("refuses to uninstall right after prepare, while a session is likely starting", async () => {
    const { catalog } = await catalogFor([
      agentEntry("fresh", binaryDistribution(serveArchive("f.tar.gz", archives.tarGz))),
    ]);
    await catalog.prepare("fresh");
    await expect(catalog.uninstall("fresh")).rejects.toMatchObject({ reason: "in_use" });
  });
});
