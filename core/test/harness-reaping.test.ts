import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createSilentLogger } from "../src/logging/logger.js";
import { reapOrphanedHarnesses } from "../src/plugin-host/process-runner.js";
import { processStartTime } from "../src/util/process-start-time.js";
import { until } from "./support/until.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("reaping the harness process groups a crashed host left behind", () => {
  it("stops a group whose leader died with the host while its tool's process lives on", async () => {
    // A harness-like leader in its own group starts a long tool process in that group, prints its
    // pid and exits, as a harness does when the host that held its pipes is killed.
    const leader = spawn(
      process.execPath,
      [
        "-e",
        `const c = require("node:child_process").spawn("sleep", ["60"], { stdio: "ignore" }); console.log(c.pid); process.exit(0);`,
      ],
      {
        detached: true,
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    const leaderPid = leader.pid!;
    const procStart = processStartTime(leaderPid);
    const toolPid = Number(
      await new Promise<string>((resolve) =>
        leader.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())),
      ),
    );
    await until("the leader to exit", () => leader.exitCode !== null && !alive(leaderPid));
    expect(alive(toolPid)).toBe(true);

    expect(reapOrphanedHarnesses([{ pid: leaderPid, procStart }], createSilentLogger())).toBe(1);
    await until("the orphaned tool process to be stopped", () => !alive(toolPid));
  });

  it("leaves a reused pid alone, and counts nothing when a group is already gone", () => {
    const other = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    try {
      expect(reapOrphanedHarnesses([{ pid: other.pid!, procStart: "not-its-start-time" }], createSilentLogger())).toBe(
        0,
      );
      expect(alive(other.pid!)).toBe(true);
    } finally {
      other.kill("SIGKILL");
    }
    expect(reapOrphanedHarnesses([{ pid: 2 ** 22 - 3, procStart: null }], createSilentLogger())).toBe(0);
  });
});
