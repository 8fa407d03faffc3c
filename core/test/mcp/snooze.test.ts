import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import { failure, ok, type ApiClient } from "../support/api-client.js";
import { apiClientFor, FULL_ACCESS_CEILING } from "../support/api-lab.js";
import { JumpClock } from "../support/jump-clock.js";
import { McpLab } from "../support/mcp-lab.js";
import { mustCall } from "../support/mcp-client.js";

type Shell = { threadId: string; snoozed: boolean; snoozedUntil: string | null; status: string };
type Client = Awaited<ReturnType<McpLab["client"]>>;

const HOUR_MS = 3_600_000;

/**
 * Seed 000's snooze rules over the real MCP endpoint: a person snoozes a thread (the HTTP API,
 * as the web UI and CLI do), and agents see it in t3_thread_list and t3_thread_read. A snoozed
 * thread wakes early only on a pending request or a failure after the snooze; completed runs
 * and delegated completions keep it snoozed; the time passing wakes it.
 */
describe("snoozed threads, as agents see them", () => {
  const clock = new JumpClock();
  let lab: McpLab;
  let person: ApiClient;
  let agent: Client;

  beforeAll(async () => {
    lab = await McpLab.start({ overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }) });
    person = apiClientFor(lab, { capabilities: ["orchestration:operate"], ceiling: FULL_ACCESS_CEILING });
    agent = await lab.client(["orchestration:read"]);
  });
  afterAll(async () => lab.stop());

  const finishedThread = async (prompt: string) => {
    const created = await ok(
      person.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt, target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await ok(person.get(`/threads/${threadId}/wait`));
    return threadId;
  };
  const snooze = async (threadId: string, hours = 1) =>
    ok(person.post(`/threads/${threadId}/snooze`, { until: new Date(clock.nowMs() + hours * HOUR_MS).toISOString() }));
  const read = async (threadId: string) =>
    (await mustCall<{ thread: Shell }>(agent, "t3_thread_read", { threadId })).thread;
  const listed = async (snoozed: boolean) =>
    (
      await mustCall<{ threads: Shell[] }>(agent, "t3_thread_list", { projectId: lab.projectId, snoozed, limit: 100 })
    ).threads.map((thread) => thread.threadId);
  const sendAndWait = async (threadId: string, message: string) => {
    const sent = await ok(person.post(`/threads/${threadId}/messages`, { message }));
    return ok(person.get(`/threads/${threadId}/wait`, { runId: sent.runId }));
  };

  it("reports snoozed and snoozedUntil in list and read, and t3_thread_list filters on it", async () => {
    const sleeper = await finishedThread("@@reply sleepy");
    const awake = await finishedThread("@@reply awake");
    const until = new Date(clock.nowMs() + 2 * HOUR_MS).toISOString();
    const snoozed = await ok(person.post(`/threads/${sleeper}/snooze`, { until }));
    expect(snoozed).toMatchObject({ changed: true, replayed: false, thread: { snoozed: true, snoozedUntil: until } });

    expect(await read(sleeper)).toMatchObject({ snoozed: true, snoozedUntil: until });
    expect(await read(awake)).toMatchObject({ snoozed: false, snoozedUntil: null });
    expect(await listed(true)).toEqual([sleeper]);
    expect(await listed(false)).toContain(awake);
    expect(await listed(false)).not.toContain(sleeper);

    const woken = await ok(person.post(`/threads/${sleeper}/unsnooze`, {}));
    expect(woken).toMatchObject({ changed: true, thread: { snoozed: false, snoozedUntil: null } });
    expect(await listed(true)).toEqual([]);
    expect(await ok(person.post(`/threads/${sleeper}/unsnooze`, {}))).toMatchObject({ changed: false });
  });

  it("keeps a thread snoozed through a completed run, and a delegated completion's background wake", async () => {
    const threadId = await finishedThread("@@reply first");
    await snooze(threadId);
    const finished = await sendAndWait(threadId, "@@reply done while snoozed");
    expect(finished.status).toBe("completed");
    expect(await read(threadId)).toMatchObject({ snoozed: true });

    // A delegated child's result wakes the snoozed parent in the background (a new run), which completes.
    const parent = await lab.liveAgent({ title: "Snoozed parent" });
    await snooze(parent.threadId);
    const task = await mustCall<{ taskId: string }>(parent.client, "delegate_task", {
      task: "@@reply child-done",
      mode: "async",
    });
    parent.release();
    const woken = await lab.host.waiter.waitFor(
      () => {
        const runs = lab.host.store.select("run", "thread_id = ?", [parent.threadId]);
        return runs.length >= 2 && runs.every((run) => run.status === "completed") ? runs : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(woken, `no completed result wake for task ${task.taskId}`).not.toBeNull();
    expect(await read(parent.threadId)).toMatchObject({ snoozed: true });
    expect(await listed(true)).toContain(parent.threadId);
  });

  it("wakes a snoozed thread while it has a pending request", async () => {
    const threadId = await finishedThread("@@reply first");
    await snooze(threadId);
    const sent = await ok(person.post(`/threads/${threadId}/messages`, { message: "@@ask Which port? @@reply asked" }));
    const waited = await ok(person.get(`/threads/${threadId}/wait`, { runId: sent.runId }));
    expect(waited.endedBy).toBe("question");
    expect(await read(threadId)).toMatchObject({ snoozed: false });
    expect(await listed(false)).toContain(threadId);
  });

  it("wakes a thread whose run fails after the snooze, not one that failed before it", async () => {
    const failedBefore = await finishedThread("@@fail broke before the snooze");
    await snooze(failedBefore);
    expect(await read(failedBefore)).toMatchObject({ snoozed: true });

    const threadId = await finishedThread("@@reply first");
    await snooze(threadId);
    const failed = await sendAndWait(threadId, "@@fail broke while snoozed");
    expect(failed.status).toBe("failed");
    expect(await read(threadId)).toMatchObject({ snoozed: false });
    expect(await listed(true)).not.toContain(threadId);

    // Snoozed again, it sleeps again: the failure was before this snooze.
    await snooze(threadId);
    expect(await read(threadId)).toMatchObject({ snoozed: true });
  });

  it("wakes a thread when its time passes", async () => {
    const threadId = await finishedThread("@@reply first");
    // A quarter of an hour: the test's tokens live an hour by the same clock.
    await snooze(threadId, 0.25);
    expect(await read(threadId)).toMatchObject({ snoozed: true });
    clock.advance(HOUR_MS / 4 + 1_000);
    expect(await read(threadId)).toMatchObject({ snoozed: false });
    expect(await listed(false)).toContain(threadId);
  });
});

describe("HTTP API: snooze refusals", () => {
  let lab: McpLab;
  let person: ApiClient;
  beforeAll(async () => {
    lab = await McpLab.start();
    person = apiClientFor(lab, { capabilities: ["orchestration:operate"], ceiling: FULL_ACCESS_CEILING });
  });
  afterAll(async () => lab.stop());

  it("refuses a past or malformed time, an unknown thread and a read token, changing nothing; a retry key replays", async () => {
    const created = await ok(
      person.post("/threads", { projectId: lab.projectId, threads: [{ target: { providerInstanceId: "alpha" } }] }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    for (const until of ["2001-01-01T00:00:00Z", "tomorrow", "2026-13-45T99:00:00Z"]) {
      expect(await failure(person.post(`/threads/${threadId}/snooze`, { until }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        details: { field: "until", value: until },
      });
    }
    expect(await failure(person.post(`/threads/${threadId}/snooze`, {}))).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    expect(await failure(person.post(`/threads/thread-nope/snooze`, { until: "2999-01-01T00:00:00Z" }))).toMatchObject({
      status: 404,
      code: "thread_not_found",
    });
    expect(await failure(person.post(`/threads/thread-nope/unsnooze`, {}))).toMatchObject({
      status: 404,
      code: "thread_not_found",
    });
    const readOnly = apiClientFor(lab, { capabilities: ["orchestration:read"] });
    expect(
      await failure(readOnly.post(`/threads/${threadId}/snooze`, { until: "2999-01-01T00:00:00Z" })),
    ).toMatchObject({ status: 403, code: "capability_denied" });
    expect(lab.host.store.get("thread", threadId)!.snoozedUntil).toBeNull();

    const first = await ok(
      person.post(`/threads/${threadId}/snooze`, { until: "2999-01-01T09:00:00+02:00" }, { "idempotency-key": "s-1" }),
    );
    expect(first).toMatchObject({ replayed: false, thread: { snoozedUntil: "2999-01-01T07:00:00.000Z" } });
    expect(
      await ok(
        person.post(
          `/threads/${threadId}/snooze`,
          { until: "2999-01-01T09:00:00+02:00" },
          { "idempotency-key": "s-1" },
        ),
      ),
    ).toMatchObject({ replayed: true });
    expect(
      await failure(
        person.post(`/threads/${threadId}/snooze`, { until: "2999-02-01T00:00:00Z" }, { "idempotency-key": "s-1" }),
      ),
    ).toMatchObject({ status: 400, code: "invalid_request" });
  });
});
