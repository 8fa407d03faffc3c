import { afterEach, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/sdk/testkit/scripted-provider";
import { startTestHost, type TestHost } from "./support/test-host.js";

describe("turn lifecycle through the scripted provider", () => {
  let t: TestHost;
  afterEach(async () => t?.cleanup());

  it("runs a prompt to completion and records user and assistant items with provenance", async () => {
    t = await startTestHost();
    const project = t.host.projects.add(t.workspace, "ws");
    const { thread, delivery } = t.host.threads.createThread({
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
    const project = t.host.projects.add(t.workspace);
    const { thread } = t.host.threads.createThread({ projectId: project.id, providerInstanceId: "scripted", prompt: "first @@gate g1", createdBy: "user", creationSource: "cli" });
    // Wait until the provider accepted the turn (it is steerable from then on).
    await t.host.waiter.waitFor(() => (t.host.store.select("attempt", "thread_id = ? AND status = 'running'", [thread.id]).length > 0 ? true : null), { timeoutMs: 5000 });
    const queued = t.host.threads.send({ threadId: thread.id, text: "second @@reply two", mode: "queue", createdBy: "user", creationSource: "cli" });
    expect(queued.delivery).toBe("queued");
    const steered = t.host.threads.send({ threadId: thread.id, text: "look here", mode: "auto", createdBy: "user", creationSource: "cli" });
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
});
