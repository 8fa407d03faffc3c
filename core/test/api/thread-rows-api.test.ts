import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ThreadRow } from "../../src/contract/thread-list.js";
import { THREAD_PAGE_MAX, THREAD_ROW_PAGE_MAX } from "../../src/services/thread-query-service.js";
import type { McpLab } from "../support/mcp-lab.js";
import { failure, ok, type ApiClient } from "../support/api-client.js";
import { apiClientFor, startApiLab } from "../support/api-lab.js";
import { callTool } from "../support/mcp-client.js";

/** GET /threads?view=row: a project's threads as list rows, in pages up to ten times as long as shells'. */
describe("HTTP API: listing threads as rows", () => {
  let lab: McpLab;
  let reader: ApiClient;
  const THREADS = THREAD_PAGE_MAX + 5;

  beforeAll(async () => {
    ({ lab, client: reader } = await startApiLab({ capabilities: ["orchestration:read"] }));
    const parent = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      title: "parent",
      createdBy: "user",
      creationSource: "api",
    });
    for (let i = 1; i < THREADS; i += 1) {
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        title: `thread ${i}`,
        createdBy: "user",
        creationSource: "api",
        // A few children, so rows carry their place in the tree.
        ...(i % 40 === 0 ? { parentThreadId: parent.thread.id } : {}),
      });
    }
  });
  afterAll(async () => lab?.stop());

  it("answers each thread's row: its shell's row fields, the same values, nothing else", async () => {
    const query = { projectId: lab.projectId, includeSubagents: true, limit: 50 };
    const shells = await ok(reader.get("/threads", query));
    const rows = await ok(reader.get("/threads", { ...query, view: "row" }));
    expect(shells.view).toBeUndefined();
    expect(rows).toMatchObject({ view: "row", total: THREADS, offset: 0, limit: 50, hasMore: true, nextOffset: 50 });
    const fields = Object.keys(ThreadRow.shape);
    expect(rows.threads).toHaveLength(50);
    for (const [index, row] of (rows.threads as Record<string, unknown>[]).entries()) {
      const shell = shells.threads[index] as Record<string, unknown>;
      expect(Object.keys(row).sort()).toEqual(fields.filter((field) => shell[field] !== undefined).sort());
      expect(row).toEqual(Object.fromEntries(Object.keys(row).map((field) => [field, shell[field]])));
    }
    // What a row leaves to the shell.
    expect(rows.threads[0]).not.toHaveProperty("link");
    expect(rows.threads[0]).not.toHaveProperty("cwd");
    expect(rows.threads.some((row: { parentThreadId: string | null }) => row.parentThreadId !== null)).toBe(true);
    // view=shell is the default, said out loud.
    expect((await ok(reader.get("/threads", { ...query, view: "shell" }))).threads).toEqual(shells.threads);
  });

  it("reads more than a page of shells in one page of rows, and filters rows as it filters shells", async () => {
    const all = await ok(
      reader.get("/threads", {
        projectId: lab.projectId,
        includeSubagents: true,
        view: "row",
        limit: THREAD_ROW_PAGE_MAX,
      }),
    );
    expect(all).toMatchObject({ total: THREADS, limit: THREAD_ROW_PAGE_MAX, hasMore: false, nextOffset: null });
    expect(all.threads).toHaveLength(THREADS);
    const roots = await ok(
      reader.get("/threads", { projectId: lab.projectId, view: "row", limit: THREAD_ROW_PAGE_MAX }),
    );
    expect(roots.threads.every((row: { parentThreadId: string | null }) => row.parentThreadId === null)).toBe(true);
    expect(roots.total).toBeLessThan(THREADS);
    const titled = await ok(reader.get("/threads", { projectId: lab.projectId, view: "row", title: "parent" }));
    expect(titled.threads.map((row: { title: string }) => row.title)).toEqual(["parent"]);
    const later = await ok(
      reader.get("/threads", {
        projectId: lab.projectId,
        includeSubagents: true,
        view: "row",
        limit: 100,
        offset: 100,
      }),
    );
    expect(later.threads.map((row: { threadId: string }) => row.threadId)).toEqual(
      all.threads.slice(100).map((row: { threadId: string }) => row.threadId),
    );
  });

  it("refuses a view it does not have, a long page of shells and a page of rows past the most", async () => {
    expect(await failure(reader.get("/threads", { projectId: lab.projectId, view: "compact" }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      details: { field: "query.view" },
    });
    for (const view of [undefined, "shell"])
      expect(
        await failure(reader.get("/threads", { projectId: lab.projectId, view, limit: THREAD_PAGE_MAX + 1 })),
      ).toMatchObject({
        status: 400,
        code: "invalid_request",
        message: expect.stringContaining("view=row"),
        details: { field: "query.limit" },
      });
    expect(
      await failure(reader.get("/threads", { projectId: lab.projectId, view: "row", limit: THREAD_ROW_PAGE_MAX + 1 })),
    ).toMatchObject({ status: 400, code: "invalid_request", details: { field: "query.limit" } });
  });

  it("holds rows to the token's projects as it holds shells", async () => {
    const elsewhere = apiClientFor(lab, { capabilities: ["orchestration:read"], projects: ["project_elsewhere"] });
    expect(await failure(elsewhere.get("/threads", { projectId: lab.projectId, view: "row" }))).toMatchObject({
      status: 403,
    });
  });

  it("keeps t3_thread_list's contract: shells, a hundred at most, no view", async () => {
    const client = await lab.client(["orchestration:read"]);
    const listed = await callTool<{ threads: Record<string, unknown>[] }>(client, "t3_thread_list", {
      projectId: lab.projectId,
      limit: THREAD_PAGE_MAX,
    });
    expect(listed.ok && listed.value.threads[0]).toHaveProperty("link");
    const withView = await callTool(client, "t3_thread_list", { projectId: lab.projectId, view: "row" });
    expect(withView.ok).toBe(false);
  });
});
