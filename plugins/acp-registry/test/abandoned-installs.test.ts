import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectPlatform } from "@switchyard/registry-cache";
import { CLI, runCli } from "../../../core/test/support/cli.js";
import { ServeProcess } from "../../../core/test/support/serve-process.js";
import { until } from "../../../core/test/support/until.js";
import { shellScriptArchive, startRegistryFixture, type RegistryFixture } from "./support/registry-fixture.js";

/**
 * A `switchyard registry install` killed with SIGKILL mid-download leaves its temp folder and its
 * lock in the cache. The next start tidies them (the next `registry` command, or `switchyard
 * serve`), whatever agent it is about, and never touches those of an install still running in
 * another process. Real CLI processes, a registry served from 127.0.0.1 whose archives stop
 * half-way until released.
 */
describe("what killed registry installs leave behind", () => {
  const platform = detectPlatform();
  const archive = shellScriptArchive("agent", "#!/bin/sh\necho ok\n");
  let fixture: RegistryFixture;
  let home: string;
  const children: ResultPromise[] = [];
  const env = () => ({ SWITCHYARD_HOME: home, SWITCHYARD_ACP_REGISTRY_URL: fixture.url });
  const cacheDir = () => join(home, "cache", "acp-registry");
  /** The agent's lock and temp folders in the cache. */
  const leftovers = (agentId: string) =>
    readdirOrNone(cacheDir()).filter(
      (name) => name === `${agentId}.install.lock` || name.startsWith(`.tmp-${agentId}-`),
    );

  beforeAll(async () => {
    if (platform === null) throw new Error("this machine has no ACP Registry platform key");
    home = mkdtempSync(join(tmpdir(), "switchyard-abandoned-"));
    const agent = (id: string) => ({
      id,
      name: id,
      version: "1.0.0",
      description: `${id} for tests`,
      distribution: {
        binary: { [platform]: { archive: `{{origin}}/${id}.tar.gz`, cmd: "./agent", sha256: archive.sha256 } },
      },
    });
    fixture = await startRegistryFixture([agent("killed-agent"), agent("running-agent")]);
    // Half of each archive, then nothing until released: each install is caught mid-download.
    const half = Math.floor(archive.body.length / 2);
    fixture.addFile("killed-agent.tar.gz", archive.body, { holdAfter: half });
    fixture.addFile("running-agent.tar.gz", archive.body, { holdAfter: half });
  });

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.allSettled(children);
    await fixture?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /**
   * Starts `switchyard registry install <agentId>` and waits until it is mid-download, holding its
   * lock. (Wrapped: an async function returning the child itself would wait for it to exit.)
   */
  async function installMidDownload(agentId: string): Promise<{ child: ResultPromise }> {
    const child = execa(process.execPath, [CLI, "registry", "install", agentId], { env: env(), reject: false });
    children.push(child);
    await until(
      `${agentId} mid-download`,
      () => fixture.requestsFor(`${agentId}.tar.gz`) > 0 && leftovers(agentId).length === 2,
      { attempts: 600, intervalMs: 50 },
    );
    return { child };
  }

  it("the next registry command removes a killed install's temp folder and lock, and keeps a running one's", async () => {
    const { child: killed } = await installMidDownload("killed-agent");
    killed.kill("SIGKILL");
    await killed;
    // What kill -9 leaves: the lock (naming a pid that is gone) and the half-written temp folder.
    expect(leftovers("killed-agent")).toEqual(
      expect.arrayContaining(["killed-agent.install.lock", expect.stringMatching(/^\.tmp-killed-agent-/)]),
    );
    const { child: running } = await installMidDownload("running-agent");

    // Another command, about no agent in particular.
    const listed = await runCli(["registry", "list", "--json"], { env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    expect(leftovers("killed-agent")).toEqual([]);
    // The install still running in its own process keeps its lock and its download.
    expect(leftovers("running-agent")).toHaveLength(2);
    expect(running.exitCode).toBeNull();

    fixture.release("running-agent.tar.gz");
    expect((await running).exitCode).toBe(0);
    expect(leftovers("running-agent")).toEqual([]);
  }, 120_000);

  it("switchyard serve tidies them at start", async () => {
    const { child: killed } = await installMidDownload("killed-agent");
    killed.kill("SIGKILL");
    await killed;
    expect(leftovers("killed-agent")).toHaveLength(2);
    const serve = ServeProcess.start(home, ["--port", "0"], env());
    try {
      await serve.ready;
      await until("the server's start to tidy the cache", () => leftovers("killed-agent").length === 0, {
        attempts: 600,
        intervalMs: 50,
      });
    } finally {
      await serve.terminate();
    }
    // Nothing stands in the way of installing it now.
    fixture.release("killed-agent.tar.gz");
    const installed = await runCli(["registry", "install", "killed-agent"], { env: env() });
    expect(installed.code, installed.stderr).toBe(0);
    expect(existsSync(join(cacheDir(), "agents", "killed-agent"))).toBe(true);
  }, 120_000);
});

function readdirOrNone(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
