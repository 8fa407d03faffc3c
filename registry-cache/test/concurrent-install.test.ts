import { execFile } from "node:child_process";
import { utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryCatalog } from "../src/index.js";
import { InstallLock } from "../src/install-lock.js";
import { AGENT_SCRIPT, buildTarGz, run } from "./support/archives.js";
import { PLATFORM, agentEntry, binaryDistribution, makeTempDir, registryIndex, sha256 } from "./support/fixtures.js";
import { TestServer, serveBytes, serveJson } from "./support/http-server.js";
import { snapshotTree } from "./support/tree-snapshot.js";

const execFileAsync = promisify(execFile);
const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

describe("concurrent installs of one agent", () => {
  let server: TestServer;
  const cleanups: (() => Promise<void>)[] = [];
  const body = buildTarGz([{ name: "agent", type: "file", content: AGENT_SCRIPT, mode: 0o755 }]);

  beforeAll(async () => {
    server = await TestServer.start();
    // The child processes import the built package; build it so they run the current source.
    await execFileAsync(
      process.execPath,
      [join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-b", packageRoot],
      { cwd: repoRoot },
    );
  });

  afterAll(async () => {
    await server.close();
    for (const cleanup of cleanups) await cleanup();
  });

  /** A registry whose archive download is slow, so concurrent installs really overlap. */
  async function setUp(label: string): Promise<{ cacheDir: string; registryUrl: string; archivePath: string }> {
    const cache = await makeTempDir(label);
    cleanups.push(cache.cleanup);
    const archivePath = `/${label}/agent.tar.gz`;
    server.route(archivePath, serveBytes(body, { delayMs: 400 }));
    server.route(
      `/${label}/registry.json`,
      serveJson(
        registryIndex([agentEntry("shared", binaryDistribution(server.url(archivePath), { sha256: sha256(body) }))]),
      ),
    );
    return { cacheDir: cache.path, registryUrl: server.url(`/${label}/registry.json`), archivePath };
  }

  it("in one process: three overlapping prepares download once; the others wait and find it ready", async () => {
    const { cacheDir, registryUrl, archivePath } = await setUp("same-process");
    const first = new RegistryCatalog({ cacheDir, registryUrl, platform: PLATFORM });
    const second = new RegistryCatalog({ cacheDir, registryUrl, platform: PLATFORM });
    const waited: string[] = [];

    const results = await Promise.all([
      first.prepare("shared"),
      first.prepare("shared", { onProgress: (event) => event.phase === "waiting_for_lock" && waited.push("first") }),
      second.prepare("shared", { onProgress: (event) => event.phase === "waiting_for_lock" && waited.push("second") }),
    ]);

    expect(server.hits(archivePath)).toBe(1);
    expect(results.filter((result) => !result.alreadyInstalled)).toHaveLength(1);
    expect(new Set(results.map((result) => result.launch.command)).size).toBe(1);
    expect(waited.length).toBeGreaterThan(0);
    expect((await run(results[0]!.launch.command, [])).stdout.trim()).toBe("ok");
    expect((await first.list()).map((install) => install.agentId)).toEqual(["shared"]);
    expect(
      Object.keys(await snapshotTree(cacheDir)).filter((path) => path.endsWith(".lock") || path.startsWith(".tmp-")),
    ).toEqual([]);
  });

  it("in two processes: one installs, the other waits and then sees it ready", async () => {
    const { cacheDir, registryUrl, archivePath } = await setUp("two-processes");
    const child = join(packageRoot, "test", "support", "prepare-in-child.mjs");
    const spawnChild = async (): Promise<{
      pid: number;
      alreadyInstalled: boolean;
      command: string;
      phases: string[];
    }> => {
      const { stdout } = await execFileAsync(process.execPath, [child, cacheDir, registryUrl, "shared", PLATFORM]);
      return JSON.parse(stdout);
    };

    const results = await Promise.all([spawnChild(), spawnChild()]);

    expect(results[0]!.pid).not.toBe(results[1]!.pid);
    expect(server.hits(archivePath)).toBe(1);
    expect(results.map((result) => result.alreadyInstalled).sort()).toEqual([false, true]);
    expect(results[0]!.command).toBe(results[1]!.command);
    expect((await run(results[0]!.command, [])).stdout.trim()).toBe("ok");
  });

  it("takes over a lock left by a process that no longer exists", async () => {
    const { cacheDir, registryUrl, archivePath } = await setUp("dead-holder");
    const { stdout } = await execFileAsync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
    await writeFile(
      join(cacheDir, "shared.install.lock"),
      JSON.stringify({
        pid: Number(stdout),
        hostname: hostname(),
        token: "crashed",
        acquiredAt: new Date().toISOString(),
      }),
    );

    const prepared = await new RegistryCatalog({
      cacheDir,
      registryUrl,
      platform: PLATFORM,
      limits: { lockTimeoutMs: 5_000 },
    }).prepare("shared");

    expect(prepared.alreadyInstalled).toBe(false);
    expect(server.hits(archivePath)).toBe(1);
  });

  it("takes over a lock nobody has refreshed within the stale period, and times out on a live one", async () => {
    const { cacheDir, registryUrl } = await setUp("stale-holder");
    const lockFile = join(cacheDir, "shared.install.lock");
    // pid 1 always exists: only the age can make this lock stale.
    await writeFile(
      lockFile,
      JSON.stringify({ pid: 1, hostname: hostname(), token: "other", acquiredAt: new Date().toISOString() }),
    );

    const impatient = new RegistryCatalog({
      cacheDir,
      registryUrl,
      platform: PLATFORM,
      limits: { lockTimeoutMs: 300, lockStaleMs: 60_000 },
    });
    await expect(impatient.prepare("shared")).rejects.toMatchObject({ reason: "lock_timeout", details: { lockFile } });

    const old = new Date(Date.now() - 10 * 60_000);
    await utimes(lockFile, old, old);
    const prepared = await new RegistryCatalog({
      cacheDir,
      registryUrl,
      platform: PLATFORM,
      limits: { lockStaleMs: 60_000 },
    }).prepare("shared");
    expect(prepared.alreadyInstalled).toBe(false);
  });

  it("removes temp directories a crashed install left behind, of any agent no live install holds", async () => {
    const { cacheDir, registryUrl } = await setUp("orphans");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(cacheDir, ".tmp-shared-abc123", "install"), { recursive: true });
    await mkdir(join(cacheDir, ".tmp-shared-other-abc123"), { recursive: true });
    await mkdir(join(cacheDir, ".tmp-busy-abc123"), { recursive: true });
    // An install of "busy" running in a live process (this one) holds its lock.
    const busy = await InstallLock.acquire(join(cacheDir, "busy.install.lock"), {
      subject: "busy",
      staleMs: 60_000,
      timeoutMs: 1_000,
    });
    try {
      await new RegistryCatalog({ cacheDir, registryUrl, platform: PLATFORM }).prepare("shared");
      const names = Object.keys(await snapshotTree(cacheDir)).filter((path) => !path.includes("/"));
      expect(names).not.toContain(".tmp-shared-abc123");
      // Another agent's, with no install running, is as abandoned.
      expect(names).not.toContain(".tmp-shared-other-abc123");
      // A live install's lock and temp directory are never touched.
      expect(names).toEqual(expect.arrayContaining(["busy.install.lock", ".tmp-busy-abc123"]));
    } finally {
      await busy.release();
    }
  });
});
