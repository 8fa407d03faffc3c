import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpLab } from "../support/mcp-lab.js";
import { failure, ok, type ApiClient } from "../support/api-client.js";
import { apiClientFor, FULL_ACCESS_CEILING, startApiLab } from "../support/api-lab.js";
import { searchSnippet } from "../../src/services/thread-query-service.js";
import { ThreadSearchIndexer } from "../../src/services/thread-search-indexer.js";
import { ThreadSearchIndex } from "../../src/store/thread-search-index.js";

/** GET /threads/search: full-text search over a project's thread titles and messages. */
describe("HTTP API: searching threads", () => {
  let lab: McpLab;
  let operator: ApiClient;
  let otherFolder: string;
  let otherProjectId: string;
  const threadIds = {} as { first: string; second: string; third: string; theirs: string };

  const create = async (projectId: string, prompt: string, title?: string) => {
    const created = await ok(
      operator.post("/threads", {
        projectId,
        threads: [{ prompt, ...(title !== undefined ? { title } : {}), target: { providerInstanceId: "alpha" } }],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await ok(operator.get(`/threads/${threadId}/wait`));
    return threadId;
  };

  beforeAll(async () => {
    ({ lab, client: operator } = await startApiLab({
      capabilities: ["orchestration:operate"],
      ceiling: FULL_ACCESS_CEILING,
    }));
    otherFolder = mkdtempSync(join(tmpdir(), "switchyard-search-other-"));
    otherProjectId = (await lab.host.projects.add(otherFolder, "other")).id;
    // Words only the replies hold: the titles are the users' and never say them.
    threadIds.first = await create(lab.projectId, "@@reply the pangolin ledger balances", "Accounts");
    threadIds.second = await create(lab.projectId, "@@reply pangolin counts again", "Inventory");
    threadIds.third = await create(lab.projectId, "@@reply a pangolin at last", "Zoo visit");
    threadIds.theirs = await create(otherProjectId, "@@reply pangolin secrets", "Their thread");
  });
  afterAll(async () => {
    await lab.stop();
    rmSync(otherFolder, { recursive: true, force: true });
  });

  // First, before any search catches the index up.
  it("keeps the index close behind the log in the background, with no search asked", async () => {
    const index = new ThreadSearchIndex(lab.host.store);
    await create(lab.projectId, "@@reply a tick's worth of news", "Background");
    // What the server's timer calls every few seconds.
    await lab.host.container.resolve(ThreadSearchIndexer).tick();
    expect(index.behind()).toBe(false);
  });

  it("turns the store's marked snippet into plain text and ranges (UTF-16 offsets, as JavaScript slices)", () => {
    expect(searchSnippet("café \u0002naïve\u0003 😀 \u0002tests\u0003…")).toEqual({
      text: "café naïve 😀 tests…",
      highlights: [
        { start: 5, end: 10 },
        { start: 14, end: 19 },
      ],
    });
  });

  it("finds a thread by a word only its transcript holds, with a snippet of where it matched", async () => {
    const found = await ok(operator.get("/threads/search", { projectId: lab.projectId, q: "ledger" }));
    expect(found).toMatchObject({ projectId: lab.projectId, query: "ledger", hasMore: false, nextOffset: null });
    expect(found.results).toHaveLength(1);
    const [hit] = found.results;
    expect(hit).toMatchObject({
      thread: { threadId: threadIds.first, title: "Accounts" },
      matchedIn: "assistant_message",
      snippet: { text: "the pangolin ledger balances" },
    });
    const { text, highlights } = hit.snippet;
    expect(highlights.map((range: { start: number; end: number }) => text.slice(range.start, range.end))).toEqual([
      "ledger",
    ]);
    // The item it matched in reads through the thread's item route.
    expect((await ok(operator.get(`/threads/${threadIds.first}/items/${hit.itemId}`))).kind).toBe("assistant_message");
  });

  it("pages the project's matches only, one row per thread, without repeats", async () => {
    const first = await ok(operator.get("/threads/search", { projectId: lab.projectId, q: "pangolin", limit: 2 }));
    expect(first).toMatchObject({ limit: 2, offset: 0, hasMore: true, nextOffset: 2 });
    const second = await ok(
      operator.get("/threads/search", { projectId: lab.projectId, q: "pangolin", limit: 2, offset: first.nextOffset }),
    );
    expect(second).toMatchObject({ hasMore: false, nextOffset: null });
    const seen = [...first.results, ...second.results].map(
      (hit: { thread: { threadId: string } }) => hit.thread.threadId,
    );
    expect([...seen].sort()).toEqual([threadIds.first, threadIds.second, threadIds.third].sort());
  });

  it("reads quotes, operators and stars as text, and refuses an empty, blank or too long query naming q", async () => {
    for (const q of ['"pangolin', "pangolin NEAR", "-pangolin", "pangolin*", "pangolin)", "OR"]) {
      const answer = await operator.get("/threads/search", { projectId: lab.projectId, q });
      expect([q, answer.status]).toEqual([q, 200]);
    }
    expect((await ok(operator.get("/threads/search", { projectId: lab.projectId, q: "ledger NEAR" }))).results).toEqual(
      [],
    );
    for (const q of ["", "   ", "x".repeat(201)]) {
      expect(await failure(operator.get("/threads/search", { projectId: lab.projectId, q }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        details: { field: expect.stringMatching(/^(query\.)?q$/) },
      });
    }
    expect(await failure(operator.get("/threads/search", { projectId: lab.projectId }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      details: { field: "query.q" },
    });
    expect(
      await failure(operator.get("/threads/search", { projectId: lab.projectId, q: "pangolin", limit: 51 })),
    ).toMatchObject({ status: 400, code: "invalid_request", details: { field: "query.limit" } });
  });

  it("holds a token to its projects as the thread list does, and never finds a deleted thread", async () => {
    const scoped = apiClientFor(lab, {
      capabilities: ["orchestration:read"],
      projects: [lab.projectId],
    });
    expect(await failure(scoped.get("/threads/search", { projectId: otherProjectId, q: "pangolin" }))).toMatchObject({
      status: 403,
      code: "capability_denied",
    });
    const theirs = await ok(operator.get("/threads/search", { projectId: otherProjectId, q: "secrets" }));
    expect(theirs.results.map((hit: { thread: { threadId: string } }) => hit.thread.threadId)).toEqual([
      threadIds.theirs,
    ]);
    // The scoped token finds its own project's thread, and not the other's by the same word.
    const own = await ok(scoped.get("/threads/search", { projectId: lab.projectId, q: "secrets" }));
    expect(own.results).toEqual([]);
    // Without projectId a client is told to name one, as the list tells it.
    const unnamed = await failure(scoped.get("/threads/search", { q: "ledger" }));
    expect(unnamed).toEqual({ ...(await failure(scoped.get("/threads"))), status: 400 });
    expect(unnamed).toMatchObject({ code: "invalid_request" });

    // No operation deletes a thread yet; a record deleted in the store stays out of every page.
    const store = lab.host.store;
    const third = store.get("thread", threadIds.third)!;
    store.transaction(() =>
      store.append(null, [{ entity: "thread", record: { ...third, deletedAt: third.updatedAt } }], third.updatedAt),
    );
    const after = await ok(operator.get("/threads/search", { projectId: lab.projectId, q: "pangolin" }));
    expect(after.results.map((hit: { thread: { threadId: string } }) => hit.thread.threadId).sort()).toEqual(
      [threadIds.first, threadIds.second].sort(),
    );
  });
});
