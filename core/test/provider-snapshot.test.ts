import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { TOKENS } from "../src/host/tokens.js";
import type { Clock } from "../src/util/clock.js";
import { McpLab } from "./support/mcp-lab.js";
import { callTool, mustCall } from "./support/mcp-client.js";
import { scriptedInstance } from "./support/test-host.js";

interface CapabilityView {
  providers: {
    providerInstanceId: string;
    canRunChildTasks: boolean;
    constraints: string[];
    models: { id: string }[];
  }[];
}

/** The real clock, moved forward on demand: how a test makes a verdict old without waiting. */
class AdvancingClock implements Clock {
  offsetMs = 0;
  nowMs(): number {
    return Date.now() + this.offsetMs;
  }
  nowIso(): string {
    return new Date(this.nowMs()).toISOString();
  }
}

/** The depths the scripted provider's probes ran with, one per probe, oldest first. */
function probes(log: string): string[] {
  return existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
}

describe("provider snapshot (orchestrator_capabilities, delegate_task, registry)", () => {
  let lab: McpLab;
  const clock = new AdvancingClock();
  let logs: { alpha: string; slow: string; flaky: string };
  let statusFile: string;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: ({ home, gateDir }) => {
        logs = {
          alpha: join(home, "alpha.probes"),
          slow: join(home, "slow.probes"),
          flaky: join(home, "flaky.probes"),
        };
        statusFile = join(home, "flaky.status.json");
        return [
          scriptedInstance("alpha", { gateDir, stateDir: join(home, "state"), probeLog: logs.alpha }),
          scriptedInstance("slow", { gateDir, probeGate: "slow-probe", probeLog: logs.slow }),
          scriptedInstance("flaky", { gateDir, statusFile, probeLog: logs.flaky }),
        ];
      },
      overrides: (container) => container.register(TOKENS.Clock, { useValue: clock }),
    });
  });
  afterEach(() => {
    rmSync(statusFile, { force: true });
  });
  afterAll(async () => {
    releaseGate(lab.t.gateDir, "slow-probe");
    await lab.stop();
  });

  it("answers while a first probe is still running, with the instance marked as being checked, and serves later calls from the snapshot", async () => {
    const client = await lab.client();
    const first = await mustCall<CapabilityView>(client, "orchestrator_capabilities", {});
    const slow = first.providers.find((p) => p.providerInstanceId === "slow")!;
    expect(slow.canRunChildTasks).toBe(false);
    expect(slow.constraints.join(" ")).toContain("not known yet");
    expect(probes(logs.slow)).toEqual(["inspect"]);

    // alpha's checks (a quick inspect, then a full one) finish; then calls probe nothing.
    expect((await lab.host.providers.availability("alpha"))?.available).toBe(true);
    const before = probes(logs.alpha);
    expect(before).toEqual(["inspect", "full"]);
    for (let i = 0; i < 5; i += 1) {
      const caps = await mustCall<CapabilityView>(client, "orchestrator_capabilities", {});
      expect(caps.providers.find((p) => p.providerInstanceId === "alpha")?.canRunChildTasks).toBe(true);
    }
    expect(probes(logs.alpha)).toEqual(before);

    releaseGate(lab.t.gateDir, "slow-probe");
    expect((await lab.host.providers.availability("slow"))?.available).toBe(true);
    const later = await mustCall<CapabilityView>(client, "orchestrator_capabilities", {});
    expect(later.providers.find((p) => p.providerInstanceId === "slow")).toMatchObject({
      canRunChildTasks: true,
      constraints: [],
    });
  });

  it("shares one probe among concurrent refreshes of an instance", async () => {
    await lab.host.providers.availability("alpha");
    const before = probes(logs.alpha).length;
    const results = await Promise.all(
      Array.from({ length: 6 }, () => lab.host.providers.availability("alpha", { refresh: true })),
    );
    expect(probes(logs.alpha).length).toBe(before + 1);
    expect(new Set(results.map((r) => r?.checkedAt)).size).toBe(1);
  });

  it("refuses delegation to an instance known to be unavailable without probing it, and accepts it again once it recovered", async () => {
    writeFileSync(statusFile, JSON.stringify({ installed: false }));
    const down = await lab.host.providers.availability("flaky", { refresh: true });
    expect(down?.available).toBe(false);
    const parent = await lab.liveAgent({ instance: "alpha" });
    const caps = await mustCall<CapabilityView>(parent.client, "orchestrator_capabilities", {});
    expect(caps.providers.find((p) => p.providerInstanceId === "flaky")?.constraints.join(" ")).toContain(
      "installed=false",
    );

    const probesBefore = probes(logs.flaky).length;
    const refused = await callTool(parent.client, "delegate_task", {
      task: "@@reply never",
      target: { providerInstanceId: "flaky" },
      mode: "async",
    });
    expect(refused).toMatchObject({ ok: false, code: "provider_unavailable" });
    if (!refused.ok) expect(refused.message).toContain("installed=false");
    // The verdict was seconds old: the refusal did not start a probe.
    expect(probes(logs.flaky).length).toBe(probesBefore);

    // It recovers; once the verdict is older than a few seconds, a request checks again.
    rmSync(statusFile);
    clock.offsetMs += 6_000;
    const accepted = await callTool<{ providerInstanceId: string }>(parent.client, "delegate_task", {
      task: "@@reply back",
      target: { providerInstanceId: "flaky" },
      mode: "async",
    });
    expect(accepted).toMatchObject({ ok: true, value: { providerInstanceId: "flaky" } });
    expect(probes(logs.flaky).length).toBe(probesBefore + 1);
    parent.release();
  });

  it("checks an instance again when one of its sessions fails to open", async () => {
    expect((await lab.host.providers.availability("flaky", { refresh: true }))?.available).toBe(true);
    writeFileSync(statusFile, JSON.stringify({ executable: false }));
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "flaky",
      prompt: "@@reply hi",
      runtimeMode: "full-access",
      createdBy: "user",
      creationSource: "cli",
    });
    const run = await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 20_000 });
    expect(run.run?.status).toBe("failed");
    // The failed open started a probe; its verdict reaches what agents are shown.
    const seen = await eventually(async () => {
      const flaky = (await lab.host.providers.snapshotAll()).find((a) => a.instanceId === "flaky")!;
      return flaky.available ? null : flaky;
    });
    expect(seen?.reason).toContain("executable=false");
  });
});

/** Reads until `read` gives a value (at most 100 times, 100 ms apart); null if it never did. */
async function eventually<T>(read: () => Promise<T | null>): Promise<T | null> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const value = await read();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}
