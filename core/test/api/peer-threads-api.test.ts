import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpLab } from "../support/mcp-lab.js";
import { failure, ok, type ApiClient } from "../support/api-client.js";
import { FULL_ACCESS_CEILING, startApiLab } from "../support/api-lab.js";

/** Seed 002 over the HTTP API: settle and revive, and waits that report attention requests. */
describe("HTTP API: peer threads", () => {
  let lab: McpLab;
  let operator: ApiClient;

  beforeAll(async () => {
    ({ lab, client: operator } = await startApiLab({
      capabilities: ["orchestration:operate"],
      ceiling: FULL_ACCESS_CEILING,
    }));
  });
  afterAll(async () => lab.stop());

  it("settles and revives a thread, lists by settled, refuses a busy thread and a read token", async () => {
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [
          { prompt: "@@reply done", target: { providerInstanceId: "alpha" } },
          { prompt: "@@gate api-busy @@reply late", target: { providerInstanceId: "alpha" } },
        ],
      }),
      201,
    );
    const [done, busy] = created.threads.map((entry: { thread: { threadId: string } }) => entry.thread.threadId) as [
      string,
      string,
    ];
    await ok(operator.get(`/threads/${done}/wait`));

    const settled = await ok(
      operator.post(`/threads/${done}/settled`, { settled: true }, { "idempotency-key": "settle-1" }),
    );
    expect(settled).toMatchObject({ changed: true, replayed: false, thread: { threadId: done, settled: true } });
    expect(
      await ok(operator.post(`/threads/${done}/settled`, { settled: true }, { "idempotency-key": "settle-1" })),
    ).toMatchObject({ changed: true, replayed: true });
    expect(
      (await ok(operator.get("/threads", { projectId: lab.projectId, settled: true }))).threads.map(
        (t: { threadId: string }) => t.threadId,
      ),
    ).toEqual([done]);
    expect(
      (await ok(operator.get("/threads", { projectId: lab.projectId, settled: false }))).threads.map(
        (t: { threadId: string }) => t.threadId,
      ),
    ).toEqual([busy]);

    await lab.waitForLiveTurn(busy);
    expect(await failure(operator.post(`/threads/${busy}/settled`, { settled: true }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      details: { reason: "unfinished_runs" },
    });
    expect(await failure(operator.post(`/threads/${done}/settled`, {}))).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    const reader = operator.with(
      lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token,
    );
    expect(await failure(reader.post(`/threads/${done}/settled`, { settled: false }))).toMatchObject({
      status: 403,
      code: "capability_denied",
    });

    expect(await ok(operator.post(`/threads/${done}/settled`, { settled: false }))).toMatchObject({
      changed: true,
      thread: { settled: false, settledAt: null },
    });
    lab.release("api-busy");
  });

  it("waits report a question, then an approval, then the finished run, each once with the cursor", async () => {
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [
          {
            prompt: "@@ask Which branch? @@approve git push @@reply pushed",
            target: { providerInstanceId: "alpha" },
            runtimeMode: "approval-required",
          },
        ],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    const question = await ok(operator.get(`/threads/${threadId}/wait`));
    expect(question).toMatchObject({
      endedBy: "question",
      waitTimedOut: false,
      attention: { kind: "question", requestKind: "user_input" },
    });
    expect(
      await ok(operator.get(`/threads/${threadId}/wait`, { cursor: question.cursor, timeoutMs: 0 })),
    ).toMatchObject({ endedBy: "timeout", waitTimedOut: true });
    await lab.host.threads.respondToRequest(question.attention.requestId, {
      kind: "user_input",
      answers: { q1: ["main"] },
    });
    const approval = await ok(operator.get(`/threads/${threadId}/wait`, { cursor: question.cursor }));
    expect(approval).toMatchObject({ endedBy: "approval", attention: { kind: "approval", requestKind: "command" } });
    await lab.host.threads.respondToRequest(approval.attention.requestId, { kind: "approval", decision: "accept" });
    expect(await ok(operator.get(`/threads/${threadId}/wait`, { cursor: approval.cursor }))).toMatchObject({
      endedBy: "run_finished",
      status: "completed",
      summary: "pushed",
    });
    expect(await failure(operator.get(`/threads/${threadId}/wait`, { cursor: "-1" }))).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
  });
});
