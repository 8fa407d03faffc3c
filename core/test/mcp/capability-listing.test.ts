import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import { scriptedInstance } from "../support/test-host.js";

interface ListedProvider {
  providerInstanceId: string;
  steering: string;
  fork: string;
  interrupt: string;
  nativeSubagentStop?: string;
}

const ALL_MODES = ["approval-required", "auto-accept-edits", "full-access"];

describe("orchestrator_capabilities lists what the policy does (real endpoint, engine, SQLite; scripted providers)", () => {
  let lab: McpLab;
  let listed: Record<string, ListedProvider>;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: ({ home, gateDir }) => {
        const stateDir = `${home}/scripted-state`;
        return [
          // Everything, forks included, with stable native thread ids.
          scriptedInstance("alpha", { gateDir, stateDir }),
          // Declares a native fork, but its thread ids are only weak: the fork policy carries
          // its forks as portable context (the ACP case that used to be listed "native").
          scriptedInstance("forky", {
            gateDir,
            stateDir,
            capabilities: {
              sessions: { resume: true },
              threads: { fork: true },
              turns: { interrupt: true, terminalStatusQuality: "strong" },
              identity: { nativeThreadIds: "weak" },
              runtimeModes: ALL_MODES,
            },
          }),
          // Can neither steer, restart nor stop a turn.
          scriptedInstance("rigid", {
            gateDir,
            capabilities: { turns: { terminalStatusQuality: "strong" }, runtimeModes: ALL_MODES },
          }),
          // Does not even say when a turn ends.
          scriptedInstance("mute", { gateDir, capabilities: { runtimeModes: ALL_MODES } }),
        ];
      },
    });
    const caps = await mustCall<{ providers: ListedProvider[] }>(await lab.client(), "orchestrator_capabilities", {});
    listed = Object.fromEntries(caps.providers.map((provider) => [provider.providerInstanceId, provider]));
  });
  afterAll(async () => lab.stop());

  /** A thread on `instance` whose first run has finished, so it has a native conversation to fork. */
  async function finishedThread(instance: string): Promise<string> {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: instance,
      prompt: "@@reply first answer",
      runtimeMode: "full-access",
      createdBy: "user",
      creationSource: "cli",
    });
    const done = await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    expect(done.run?.status).toBe("completed");
    return thread.id;
  }

  it("lists a provider that declares fork without strong native ids as portable, and a fork there is portable", async () => {
    expect(listed.forky).toMatchObject({ fork: "portable", steering: "queue", interrupt: "running_turns" });
    const fork = await lab.host.forks.fork({
      sourceThreadId: await finishedThread("forky"),
      createdBy: "user",
      creationSource: "cli",
    });
    expect(fork.strategy).toBe("portable");
    expect(fork.reason).toContain("not stable enough");
  });

  it("lists a provider that forks with strong ids as native, and a fork there is native", async () => {
    expect(listed.alpha).toMatchObject({ fork: "native", steering: "native", interrupt: "running_turns" });
    const fork = await lab.host.forks.fork({
      sourceThreadId: await finishedThread("alpha"),
      createdBy: "user",
      creationSource: "cli",
    });
    expect(fork.strategy).toBe("native");
  });

  it("lists what a default send does to a running turn, and a send does exactly that", async () => {
    expect(listed.rigid!.steering).toBe("queue");
    expect(listed.mute!.steering).toBe("none");
    const agent = await lab.liveAgent();
    for (const instance of ["alpha", "rigid", "mute"]) {
      const gate = `listing-${instance}`;
      const { thread } = await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: instance,
        prompt: `@@gate ${gate} @@reply held`,
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      });
      await lab.waitForLiveTurn(thread.id);
      const sent = await callTool<{ delivery: string }>(agent.client, "t3_thread_send", {
        threadId: thread.id,
        message: "more",
      });
      const expected = { native: "steered", queue: "queued" }[listed[instance]!.steering as "native" | "queue"];
      if (expected === undefined) expect(sent, instance).toMatchObject({ ok: false });
      else expect(sent, instance).toMatchObject({ ok: true, value: { delivery: expected } });
      lab.release(gate);
      await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    }
    agent.release();
  });

  it("lists what stopping a native sub-agent costs: the parent's turn where turns stop, nothing where they do not", async () => {
    expect(listed.alpha!.nativeSubagentStop).toBe("parent_turn");
    expect(listed.rigid!.nativeSubagentStop).toBe("none");
  });

  it("lists what t3_thread_interrupt can stop, and an interrupt of a running turn does exactly that", async () => {
    expect(listed.rigid!.interrupt).toBe("unstarted_only");
    const agent = await lab.liveAgent();
    for (const instance of ["alpha", "rigid"]) {
      const gate = `interrupt-${instance}`;
      const { thread } = await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: instance,
        prompt: `@@gate ${gate} @@reply held`,
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      });
      await lab.waitForLiveTurn(thread.id);
      const interrupted = await callTool<{ status: string }>(agent.client, "t3_thread_interrupt", {
        threadId: thread.id,
      });
      if (listed[instance]!.interrupt === "running_turns")
        expect(interrupted, instance).toMatchObject({ ok: true, value: { status: "interrupt_requested" } });
      else expect(interrupted, instance).toMatchObject({ ok: false, code: "thread_not_interruptible" });
      lab.release(gate);
      await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    }
    agent.release();
  });
});
