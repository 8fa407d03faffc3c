import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpLab } from "../support/mcp-lab.js";
import { failure, ok, type ApiClient } from "../support/api-client.js";
import { FULL_ACCESS_CEILING, startApiLab } from "../support/api-lab.js";
import { sqliteStore } from "../support/sqlite-store.js";

/** POST /threads/{threadId}/update: t3_thread_update over the HTTP API, and the event that tells the UI. */
describe("HTTP API: updating a thread's title", () => {
  let lab: McpLab;
  let operator: ApiClient;

  beforeAll(async () => {
    ({ lab, client: operator } = await startApiLab({
      capabilities: ["orchestration:operate"],
      ceiling: FULL_ACCESS_CEILING,
    }));
  });
  afterAll(async () => lab.stop());

  it("renames a thread (trimmed, replayable by Idempotency-Key), and the event stream reports it as thread.renamed", async () => {
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@reply done", target: { providerInstanceId: "alpha" } }],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await ok(operator.get(`/threads/${threadId}/wait`));
    const before = sqliteStore(lab.host.store).db.prepare("SELECT MAX(sequence) AS latest FROM events").get() as {
      latest: number;
    };

    const renamed = await ok(
      operator.post(
        `/threads/${threadId}/update`,
        { action: "rename", title: "  Release notes  " },
        { "idempotency-key": "rename-1" },
      ),
    );
    expect(renamed).toMatchObject({ threadId, title: "Release notes", replayed: false });
    expect(lab.host.store.get("thread", threadId)).toMatchObject({ title: "Release notes", titleSource: "user" });
    expect(
      await ok(
        operator.post(
          `/threads/${threadId}/update`,
          { action: "rename", title: "  Release notes  " },
          { "idempotency-key": "rename-1" },
        ),
      ),
    ).toMatchObject({ replayed: true, commandId: renamed.commandId });
    expect((await ok(operator.get(`/threads/${threadId}`))).thread.title).toBe("Release notes");

    // Resuming the stream from before the rename delivers it (and only it names the new title).
    const stream = await fetch(`${lab.server.apiUrl}/events?threadId=${threadId}&types=thread.renamed`, {
      headers: { authorization: `Bearer ${operator.token}`, "last-event-id": String(before.latest) },
    });
    const reader = stream.body!.getReader();
    let text = "";
    for (let reads = 0; reads < 50 && !text.includes("\n\n"); reads++)
      text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const data = JSON.parse(/data: (.*)/.exec(text)![1]!);
    expect(data).toMatchObject({
      type: "thread.renamed",
      threadId,
      data: { threadId, title: "Release notes", titleSource: "user" },
    });
  });

  it("refuses a bad title, a missing or unwanted title, an unknown thread and a read token, changing nothing", async () => {
    const created = await ok(
      operator.post("/threads", { projectId: lab.projectId, threads: [{ target: { providerInstanceId: "alpha" } }] }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    const title = lab.host.store.get("thread", threadId)!.title;
    expect(
      await failure(operator.post(`/threads/${threadId}/update`, { action: "rename", title: "   " })),
    ).toMatchObject({ status: 400, code: "invalid_request" });
    expect(
      await failure(operator.post(`/threads/${threadId}/update`, { action: "rename", title: "x".repeat(201) })),
    ).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await failure(operator.post(`/threads/${threadId}/update`, { action: "rename" }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: 'action "rename" requires title.',
    });
    expect(
      await failure(operator.post(`/threads/${threadId}/update`, { action: "regenerate_title", title: "no" })),
    ).toMatchObject({ status: 400, code: "invalid_request" });
    expect(
      await failure(operator.post(`/threads/${threadId}/update`, { action: "rename", title: "x", threadId: "other" })),
    ).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await failure(operator.post(`/threads/thread-nope/update`, { action: "rename", title: "x" }))).toMatchObject(
      { status: 404, code: "thread_not_found" },
    );
    const readOnly = operator.with(
      lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token,
    );
    expect(await failure(readOnly.post(`/threads/${threadId}/update`, { action: "rename", title: "x" }))).toMatchObject(
      { status: 403, code: "capability_denied" },
    );
    expect(lab.host.store.get("thread", threadId)!.title).toBe(title);
  });
});
