import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpLab } from "../support/mcp-lab.js";
import { failure, ok, type ApiClient } from "../support/api-client.js";
import { FULL_ACCESS_CEILING, startApiLab } from "../support/api-lab.js";

/** POST /threads/{threadId}/fork: ThreadForkService over the HTTP API, native or portable by the provider's capabilities. */
describe("HTTP API: forking a thread", () => {
  let lab: McpLab;
  let operator: ApiClient;

  beforeAll(async () => {
    ({ lab, client: operator } = await startApiLab({
      capabilities: ["orchestration:operate"],
      ceiling: FULL_ACCESS_CEILING,
    }));
  });
  afterAll(async () => lab.stop());

  /** A thread on `instance` whose first run answered `reply`. */
  const finished = async (instance: string, title: string, reply: string) => {
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [{ title, prompt: `@@reply ${reply}`, target: { providerInstanceId: instance } }],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    expect(await ok(operator.get(`/threads/${threadId}/wait`))).toMatchObject({ status: "completed" });
    return threadId;
  };
  const forksOf = (threadId: string) =>
    lab.host.store
      .select("thread", "1 = 1")
      .filter((thread) => thread.lineage.relationship === "fork" && thread.lineage.parentThreadId === threadId);

  it("forks natively where the provider copies conversations; a retry returns the same fork; the fork continues the conversation", async () => {
    const source = await finished("alpha", "design", "the plan is A");
    const fork = await ok(operator.post(`/threads/${source}/fork`, {}, { "idempotency-key": "fork-1" }), 201);
    expect(fork).toMatchObject({
      strategy: "native",
      replayed: false,
      thread: { title: "design (fork)", providerInstanceId: "alpha", relationship: "fork", parentThreadId: source },
    });
    const again = await ok(operator.post(`/threads/${source}/fork`, {}, { "idempotency-key": "fork-1" }), 201);
    expect(again).toMatchObject({ strategy: "native", replayed: true, thread: { threadId: fork.thread.threadId } });
    expect(forksOf(source)).toHaveLength(1);

    const forkId = fork.thread.threadId as string;
    await ok(operator.post(`/threads/${forkId}/messages`, { message: "@@history" }));
    const answer = await ok(operator.get(`/threads/${forkId}/wait`));
    expect(answer).toMatchObject({ status: "completed" });
    expect(answer.summary).toContain("the plan is A");
    // The source is untouched.
    expect((await ok(operator.get(`/threads/${source}`))).thread).toMatchObject({ title: "design" });
  });

  it("forks as portable context where the provider cannot, and the fork's first turn carries it", async () => {
    const source = await finished("beta", "notes", "remember the blue door");
    const fork = await ok(operator.post(`/threads/${source}/fork`, { title: "  notes, second try  " }), 201);
    expect(fork).toMatchObject({
      strategy: "portable",
      thread: { title: "notes, second try", providerInstanceId: "beta", relationship: "fork" },
    });
    expect(fork.reason).not.toBe("");
    expect(lab.host.store.get("contextTransfer", fork.transferId)).toMatchObject({
      status: "pending",
      strategy: "portable",
    });
    await ok(operator.post(`/threads/${fork.thread.threadId}/messages`, { message: "@@reply carried on" }));
    expect(await ok(operator.get(`/threads/${fork.thread.threadId}/wait`))).toMatchObject({
      status: "completed",
      summary: "carried on",
    });
    expect(lab.host.store.get("contextTransfer", fork.transferId)).toMatchObject({ status: "consumed" });
    expect(lab.host.store.get("contextTransfer", fork.transferId)!.content).toContain("remember the blue door");
  });

  it("refuses another thread's run, an empty title, a reused key with other arguments, an unknown thread and a read token, forking nothing", async () => {
    const source = await finished("alpha", "source", "one");
    const other = await finished("alpha", "other", "two");
    const otherRun = lab.host.store.select("run", "thread_id = ?", [other])[0]!.id;
    expect(await failure(operator.post(`/threads/${source}/fork`, { afterRunId: otherRun }))).toMatchObject({
      status: 404,
      code: "run_not_found",
    });
    expect(await failure(operator.post(`/threads/${source}/fork`, { title: "   " }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      details: { field: "title" },
    });
    expect(await failure(operator.post(`/threads/${source}/fork`, { title: "x".repeat(201) }))).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    await ok(operator.post(`/threads/${source}/fork`, { title: "first" }, { "idempotency-key": "fork-reused" }), 201);
    expect(
      await failure(
        operator.post(`/threads/${source}/fork`, { title: "second" }, { "idempotency-key": "fork-reused" }),
      ),
    ).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await failure(operator.post(`/threads/thread-nope/fork`, {}))).toMatchObject({
      status: 404,
      code: "thread_not_found",
    });
    const readOnly = operator.with(
      lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token,
    );
    expect(await failure(readOnly.post(`/threads/${source}/fork`, {}))).toMatchObject({
      status: 403,
      code: "capability_denied",
    });
    expect(forksOf(source).map((thread) => thread.title)).toEqual(["first"]);

    // A fork after one of the source's own runs is accepted.
    const ownRun = lab.host.store.select("run", "thread_id = ?", [source])[0]!.id;
    expect(await ok(operator.post(`/threads/${source}/fork`, { afterRunId: ownRun }), 201)).toMatchObject({
      thread: { parentThreadId: source },
    });
  });
});
