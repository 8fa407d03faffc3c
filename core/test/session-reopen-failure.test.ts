import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scriptedInstance, startTestHost, type TestHost } from "./support/test-host.js";

// When a thread's provider session cannot open at all (the harness is gone, not its
// conversation), reopening the conversation and starting a new one both fail: that run fails,
// and the conversation is not given up. Once the harness is back, the next turn reopens it
// natively. (resume-failure-recovery.test.ts covers the conversation itself being gone.)
describe("a provider that cannot open any session for a while (scripted provider)", () => {
  let t: TestHost;
  afterEach(async () => t?.cleanup());

  it("fails only the run whose new session failed too, and resumes the old conversation once the provider is back", async () => {
    let statusFile = "";
    t = await startTestHost({
      providers: ({ home, gateDir }) => {
        statusFile = join(home, "status.json");
        writeFileSync(statusFile, "{}");
        return [scriptedInstance("alpha", { gateDir, stateDir: join(home, "scripted-state"), statusFile })];
      },
    });
    const project = await t.host.projects.add(t.workspace);
    const { thread } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "alpha",
      prompt: "remember the word plum @@reply noted",
      createdBy: "user",
      creationSource: "cli",
    });
    const first = (await t.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 })).run!;
    expect(first.status).toBe("completed");
    // A thread's first run has no earlier conversation: its own prompt is not one to hand over.
    expect(first.sessionContinuation).toMatchObject({ asked: "new", action: "new", degraded: false });
    await t.host.sessions.close(thread.id, "test");

    writeFileSync(statusFile, JSON.stringify({ installed: false }));
    const refused = await t.host.threads.send({
      threadId: thread.id,
      text: "@@reply unreachable",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    const failed = (await t.host.threads.waitForRun({ threadId: thread.id, runId: refused.runId, timeoutMs: 10_000 }))
      .run!;
    expect(failed.status).toBe("failed");
    expect(failed.terminalReason).toBe("session_open_failed");
    expect(failed.error?.message).toContain("Reopening the thread's earlier conversation had failed first");

    writeFileSync(statusFile, "{}");
    const back = await t.host.threads.send({
      threadId: thread.id,
      text: "@@history",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    const resumed = (await t.host.threads.waitForRun({ threadId: thread.id, runId: back.runId, timeoutMs: 10_000 }))
      .run!;
    expect(resumed.status).toBe("completed");
    expect(resumed.sessionContinuation).toMatchObject({ action: "resume", degraded: false });
    expect(resumed.summary).toContain("remember the word plum");
    expect(t.host.store.select("item", "thread_id = ? AND kind = 'handoff'", [thread.id])).toEqual([]);
  });
});
