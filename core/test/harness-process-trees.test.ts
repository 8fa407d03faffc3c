import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSilentLogger } from "../src/logging/logger.js";
import { HarnessProcessTrees } from "../src/plugin-host/harness-process-trees.js";
import { runOwnedBy } from "../src/plugin-host/process-owner.js";
import { ProcessRunner } from "../src/plugin-host/process-runner.js";
import type { ManagedProcess } from "../src/spec/index.js";
import { until } from "./support/until.js";

// Real processes: a harness (sh) that starts three long tool processes that leave its process
// group, the ways harness tools do: setsid, a double fork (its parent exits, so it belongs to
// init), and nohup under setsid. Each prints its pid; the harness then waits on its stdin.
const HARNESS = [
  `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "tool $!"`,
  `setsid sh -c 'sleep 301 </dev/null >/dev/null 2>&1 & echo "tool $!"' </dev/null`,
  `setsid nohup sleep 302 </dev/null >/dev/null 2>&1 & echo "tool $!"`,
  `echo ready`,
  `cat >/dev/null`,
].join("\n");
const HOST_FIXTURE = fileURLToPath(new URL("./fixtures/harness-host.mjs", import.meta.url));

/** State letter and process group, or null once the process is gone (a zombie counts as gone). */
function stat(pid: number): { state: string; pgid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? null : { state: fields[0]!, pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}
const running = (pid: number) => stat(pid) !== null;

/** The pids a harness printed, once it printed `ready`. */
function toolPids(output: NodeJS.ReadableStream): Promise<{ tools: number[]; leader: number | null }> {
  return new Promise((resolve) => {
    let text = "";
    output.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      if (!text.includes("ready")) return;
      const pidsOf = (word: string) =>
        [...text.matchAll(new RegExp(`^${word} (\\d+)$`, "gm"))].map((m) => Number(m[1]));
      resolve({ tools: pidsOf("tool"), leader: pidsOf("leader")[0] ?? null });
    });
  });
}

const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

describe("a harness's process tree: every process it started, detached ones included", () => {
  const logger = createSilentLogger();
  const home = mkdtempSync(join(tmpdir(), "switchyard-trees-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  async function startHarness(
    runner: ProcessRunner,
    owner?: string,
  ): Promise<{ harness: ManagedProcess; tools: number[] }> {
    const start = () => runner.spawn("/bin/sh", ["-c", HARNESS], { cwd: home, label: "test harness" });
    const harness = owner === undefined ? start() : runOwnedBy(owner, start);
    const { tools } = await toolPids(harness.stdout);
    strays.push(harness.pid, ...tools);
    expect(tools).toHaveLength(3);
    // The precondition: none of them is in the harness's group (once setsid ran), so a group
    // signal cannot reach them.
    await until("the tools to leave the harness's group", () =>
      tools.every((pid) => stat(pid) !== null && stat(pid)!.pgid !== harness.pid),
    );
    return { harness, tools };
  }

  it("stopping the harness stops what left its group (setsid, a double fork, nohup)", async () => {
    const { harness, tools } = await startHarness(
      new ProcessRunner(logger, null, new HarnessProcessTrees(logger, { home } as never)),
    );
    await harness.kill();
    expect(tools.filter(running)).toEqual([]);
  });

  it("a harness that exits on its own leaves nothing running: its exit settles once its tree is gone", async () => {
    const { harness, tools } = await startHarness(new ProcessRunner(logger, null));
    harness.stdin!.end();
    await harness.exited;
    expect(tools.filter(running)).toEqual([]);
  });

  it("a stop freezes the thread's tools (not the harness), lets them go on when it does not commit, and ends them when it does", async () => {
    const trees = new HarnessProcessTrees(logger, { home } as never);
    const runner = new ProcessRunner(logger, null, trees);
    const { harness, tools } = await startHarness(runner, "thread-a");
    const other = await startHarness(runner, "thread-b");

    expect(trees.freezeDetached("thread-a")).toBe(3);
    // A signal is delivered when its process is next scheduled: on a loaded machine /proc may
    // show the old state for a moment after kill() returned.
    await until("the tools to be stopped", () => tools.every((pid) => stat(pid)?.state === "T"));
    expect(stat(harness.pid)?.state).not.toBe("T");
    expect(other.tools.map((pid) => stat(pid)?.state)).not.toContain("T");

    trees.thawDetached("thread-a");
    await until("the tools to go on", () => tools.every((pid) => stat(pid)?.state !== "T"));

    trees.freezeDetached("thread-a");
    trees.endDetached("thread-a");
    await until("the frozen tools to be gone", () => tools.every((pid) => !running(pid)));
    // The harness runs on (it still ends its turn); another thread's tools are untouched.
    expect(running(harness.pid)).toBe(true);
    expect(other.tools.filter(running)).toEqual(other.tools);

    await harness.kill();
    await other.harness.kill();
    expect(other.tools.filter(running)).toEqual([]);
  });

  it("shutdown ends whatever this host's harnesses left, and only that", async () => {
    const trees = new HarnessProcessTrees(logger, { home } as never);
    const runner = new ProcessRunner(logger, null, trees);
    const { tools } = await startHarness(runner);
    const otherHost = await startHarness(
      new ProcessRunner(logger, null, new HarnessProcessTrees(logger, { home: `${home}-other` } as never)),
    );
    expect(trees.endAll()).toBeGreaterThanOrEqual(4);
    await until("this host's processes to be gone", () => tools.every((pid) => !running(pid)));
    expect(otherHost.tools.filter(running)).toEqual(otherHost.tools);
    await otherHost.harness.kill();
  });

  it("after a kill -9, the next host on the home ends what the dead one left; a live host's and another home's trees are left alone", async () => {
    const otherHome = mkdtempSync(join(tmpdir(), "switchyard-trees-other-"));
    const hosts: ChildProcess[] = [];
    const startHost = async (hostHome: string) => {
      const host = spawn(process.execPath, [HOST_FIXTURE, hostHome, HARNESS], { stdio: ["ignore", "pipe", "inherit"] });
      hosts.push(host);
      const { tools, leader } = await toolPids(host.stdout!);
      strays.push(leader!, ...tools);
      await until("the tools to leave the harness's group", () =>
        tools.every((pid) => stat(pid) !== null && stat(pid)!.pgid !== leader),
      );
      return { host, tools, leader: leader! };
    };
    try {
      const dead = await startHost(home);
      const live = await startHost(home);
      const elsewhere = await startHost(otherHome);
      dead.host.kill("SIGKILL");
      await until("the killed host to be gone", () => dead.host.exitCode !== null || dead.host.signalCode !== null);
      expect(dead.tools.filter(running)).toEqual(dead.tools);

      const reaped = new HarnessProcessTrees(logger, { home } as never).reapLeftovers();
      expect(reaped).toBeGreaterThanOrEqual(3);
      await until("the dead host's processes to be gone", () =>
        [dead.leader, ...dead.tools].every((pid) => !running(pid)),
      );
      expect(live.tools.filter(running)).toEqual(live.tools);
      expect(elsewhere.tools.filter(running)).toEqual(elsewhere.tools);
    } finally {
      for (const host of hosts) host.kill("SIGKILL");
      rmSync(otherHome, { recursive: true, force: true });
    }
  });

  it("after a kill -9, a process of a group the reconciler already sent SIGKILL is neither signalled again nor counted", async () => {
    const host = spawn(process.execPath, [HOST_FIXTURE, home, HARNESS], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const { tools, leader } = await toolPids(host.stdout!);
      strays.push(leader!, ...tools);
      await until("the tools to leave the harness's group", () =>
        tools.every((pid) => stat(pid) !== null && stat(pid)!.pgid !== leader),
      );
      host.kill("SIGKILL");
      await until("the killed host to be gone", () => host.exitCode !== null || host.signalCode !== null);

      // The first tool's group (setsid made it a group leader) stands for one the boot reconciler
      // just sent SIGKILL (a large process takes a moment to die): this reap leaves it alone.
      const [spared, ...others] = tools;
      const trees = new HarnessProcessTrees(logger, { home } as never);
      expect(trees.reapLeftovers([spared!])).toBeGreaterThanOrEqual(others.length);
      await until("the other tools to be gone", () => others.every((pid) => !running(pid)));
      expect(running(spared!)).toBe(true);
      expect(trees.reapLeftovers()).toBe(1);
      await until("the spared tool to be gone", () => !running(spared!));
    } finally {
      host.kill("SIGKILL");
    }
  });
});
