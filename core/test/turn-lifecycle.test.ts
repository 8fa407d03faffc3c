import { afterEach, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { scriptedInstance, startTestHost, type TestHost } from "./support/test-host.js";

describe("turn lifecycle through the scripted provider", () => {
  let t: TestHost;
  afterEach(async () => t?.cleanup());

  it("runs a prompt to completion and records user and assistant items with provenance", async () => {
    t = await startTestHost();
    const project = await t.host.projects.add(t.workspace, "ws");
    const { thread, delivery } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "scripted",
      prompt: "hello @@reply hi there",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(delivery?.delivery).toBe("started");
    const waited = await t.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    expect(waited.timedOut).toBe(false);
    expect(waited.run?.status).toBe("completed");
    expect(waited.run?.summary).toBe("hi there");
    const items = t.host.store.select("item", "thread_id = ?", [thread.id], "ORDER BY position");
    expect(items.map((i) => [i.kind, i.createdBy, i.creationSource])).toEqual([
      ["user_message", "user", "cli"],
      ["assistant_message", "provider", "provider"],
    ]);
    expect(items[1]!.text).toBe("hi there");
  });

  it("queues a second message behind an active turn and steers when asked", async () => {
    t = await startTestHost();
    const project = await t.host.projects.add(t.workspace);
    const { thread } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "scripted",
      prompt: "first @@gate g1",
      createdBy: "user",
      creationSource: "cli",
    });
    // Wait until the provider accepted the turn (it is steerable from then on).
    await t.host.waiter.waitFor(
      () =>
        t.host.store.select("attempt", "thread_id = ? AND status = 'running'", [thread.id]).length > 0 ? true : null,
      { timeoutMs: 5000 },
    );
    const queued = await t.host.threads.send({
      threadId: thread.id,
      text: "second @@reply two",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(queued.delivery).toBe("queued");
    const steered = await t.host.threads.send({
      threadId: thread.id,
      text: "look here",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(steered.delivery).toBe("steered");
    await t.host.drainEffects();
    releaseGate(t.gateDir, "g1");
    const first = await t.host.threads.waitForRun({ threadId: thread.id, runId: steered.runId, timeoutMs: 10_000 });
    expect(first.run?.status).toBe("completed");
    expect(first.run?.summary).toContain("[steered: look here]");
    const second = await t.host.threads.waitForRun({ threadId: thread.id, runId: queued.runId, timeoutMs: 10_000 });
    expect(second.run?.status).toBe("completed");
    expect(second.run?.summary).toBe("two");
  });

  it("hands a thread's history to a new provider session when the provider cannot resume the old one", async () => {
    t = await startTestHost({
      providers: ({ gateDir }) => [
        scriptedInstance("forgetful", { gateDir, capabilities: { turns: { terminalStatusQuality: "strong" } } }),
      ],
    });
    const project = await t.host.projects.add(t.workspace);
    const { thread } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "forgetful",
      prompt: "remember the word plum @@reply noted plum",
      createdBy: "user",
      creationSource: "cli",
    });
    await t.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    await t.host.sessions.close(thread.id, "test");
    const sent = await t.host.threads.send({
      threadId: thread.id,
      text: "@@reply what was the word?",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    const second = await t.host.threads.waitForRun({ threadId: thread.id, runId: sent.runId, timeoutMs: 10_000 });
    expect(second.run?.status).toBe("completed");
    const attempt = t.host.store.select("attempt", "run_id = ?", [sent.runId])[0]!;
    expect(attempt.instructions).toBeNull();
    const transfer = t.host.store.select("contextTransfer", "target_thread_id = ? AND kind = 'session_handoff'", [
      thread.id,
    ]);
    expect(transfer).toHaveLength(1);
    expect(transfer[0]!.content).toContain("remember the word plum");
    expect(transfer[0]!.content).toContain("noted plum");
    expect(transfer[0]!.content).not.toContain("what was the word");
    expect(t.host.store.select("item", "thread_id = ? AND kind = 'handoff'", [thread.id])).toHaveLength(1);
  });
});
