import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpLab } from "../support/mcp-lab.js";
import { failure, ok, type ApiClient } from "../support/api-client.js";
import { FULL_ACCESS_CEILING, startApiLab } from "../support/api-lab.js";

/** Issue 37 item 4 over the HTTP API: web UI URLs beside thread links, and either one as a thread id. */
describe("HTTP API: thread links and web UI URLs", () => {
  let lab: McpLab;
  let operator: ApiClient;
  let threadId: string;

  beforeAll(async () => {
    ({ lab, client: operator } = await startApiLab({
      capabilities: ["orchestration:operate"],
      ceiling: FULL_ACCESS_CEILING,
    }));
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@reply api linked", target: { providerInstanceId: "alpha" } }],
      }),
      201,
    );
    threadId = created.threads[0].thread.threadId;
    await ok(operator.get(`/threads/${encodeURIComponent(threadId)}/wait`));
  });
  afterAll(async () => lab.stop());

  it("list, read, send and wait carry the web URL; the link and the web URL work as the path's thread", async () => {
    const page = `${lab.server.url}/threads/${threadId}`;
    const listed = await ok(operator.get("/threads", { projectId: lab.projectId }));
    expect(listed.threads[0]).toMatchObject({ threadId, webUrl: page });
    const read = await ok(operator.get(`/threads/${encodeURIComponent(page)}`));
    expect(read.thread).toMatchObject({ threadId, webUrl: page });

    const sent = await ok(
      operator.post(`/threads/${encodeURIComponent(read.thread.link)}/messages`, { message: "@@reply via link" }),
    );
    expect(sent).toMatchObject({ threadId, threadWebUrl: page });
    const waited = await ok(operator.get(`/threads/${encodeURIComponent(page)}/wait`, { runId: sent.runId }));
    expect(waited).toMatchObject({ threadId, status: "completed", threadWebUrl: page });
  });

  it("refuses another environment's link and another server's page with a typed error on the field", async () => {
    const otherLink = `switchyard-thread://v2/env_0000000000000000/${threadId}`;
    expect(await failure(operator.get(`/threads/${encodeURIComponent(otherLink)}`))).toMatchObject({
      status: 400,
      code: "invalid_request",
      details: { field: "threadId", environmentId: "env_0000000000000000", reason: "other_environment" },
    });
    const foreignPage = `http://127.0.0.2:9/threads/${threadId}`;
    expect(
      await failure(operator.post(`/threads/${encodeURIComponent(foreignPage)}/messages`, { message: "@@reply no" })),
    ).toMatchObject({ status: 400, code: "invalid_request", details: { field: "threadId", reason: "other_origin" } });
  });
});
