// t3_thread_list over a project with many threads: only the page's records are read and its
// shells built (each costs several reads) unless a filter needs every shell; SQLite counts and
// pages; totals and paging stay what they were.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ThreadQueryService } from "../../src/services/thread-query-service.js";
import { ThreadsTable } from "../../src/store/tables/threads.js";
import { McpLab } from "../support/mcp-lab.js";
import { mustCall } from "../support/mcp-client.js";

describe("t3_thread_list paging", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
    for (let i = 0; i < 30; i += 1) {
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        title: `thread ${i}`,
        createdBy: "user",
        creationSource: "cli",
      });
    }
  });
  afterAll(async () => lab.stop());

  it("builds the shells of the page only, and still counts every thread", async () => {
    const client = await lab.client();
    const shells = vi.spyOn(lab.host.container.resolve(ThreadQueryService), "shell");
    try {
      const page = await mustCall<{
        threads: { title: string }[];
        total: number;
        hasMore: boolean;
        nextOffset: number | null;
      }>(client, "t3_thread_list", { projectId: lab.projectId, limit: 5, offset: 5 });
      expect(page.threads.map((thread) => thread.title)).toEqual([
        "thread 24",
        "thread 23",
        "thread 22",
        "thread 21",
        "thread 20",
      ]);
      expect(page).toMatchObject({ total: 30, hasMore: true, nextOffset: 10 });
      expect(shells).toHaveBeenCalledTimes(5);

      shells.mockClear();
      const idle = await mustCall<{ threads: unknown[]; total: number; hasMore: boolean }>(client, "t3_thread_list", {
        projectId: lab.projectId,
        limit: 5,
        runStatus: ["idle"],
      });
      expect(idle).toMatchObject({ total: 30, hasMore: true });
      expect(idle.threads).toHaveLength(5);
      expect(shells).toHaveBeenCalledTimes(30);
    } finally {
      shells.mockRestore();
      await client.close();
    }
  });

  it("reads the page's thread records only, with or without a title filter, which folds case as JavaScript does", async () => {
    for (const title of ["Überprüfung A", "überprüfung b", "ÜBERPRÜFUNG C"]) {
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        title,
        createdBy: "user",
        creationSource: "cli",
      });
    }
    const client = await lab.client();
    const store = lab.host.engine.store;
    const selects = vi.spyOn(store, "select");
    const gets = vi.spyOn(store, "get");
    // The listing's page comes from the threads table module; records by id or by query from the store.
    const pages = vi.spyOn(ThreadsTable.prototype, "listingPage");
    const threadRecordsRead = async () => {
      let read = gets.mock.calls.filter((call) => call[0] === "thread").length;
      for (const [index, call] of selects.mock.calls.entries())
        if (call[0] === "thread") read += (selects.mock.results[index]!.value as unknown[]).length;
      for (const result of pages.mock.results) read += (await (result.value as Promise<unknown[]>)).length;
      return read;
    };
    try {
      const page = await mustCall<{ threads: { title: string }[]; total: number }>(client, "t3_thread_list", {
        projectId: lab.projectId,
        limit: 4,
      });
      expect(page.threads.map((thread) => thread.title)).toEqual([
        "ÜBERPRÜFUNG C",
        "überprüfung b",
        "Überprüfung A",
        "thread 29",
      ]);
      expect(page.total).toBe(33);
      expect(await threadRecordsRead()).toBe(4);
      // A short last page, and a page past the end, still say how many there are.
      expect(
        await mustCall(client, "t3_thread_list", { projectId: lab.projectId, limit: 4, offset: 31 }),
      ).toMatchObject({ total: 33, hasMore: false, nextOffset: null });
      expect(
        await mustCall(client, "t3_thread_list", { projectId: lab.projectId, limit: 4, offset: 40 }),
      ).toMatchObject({ threads: [], total: 33, hasMore: false });

      selects.mockClear();
      gets.mockClear();
      pages.mockClear();
      // SQLite's lower() folds ASCII only: "ü" would not match "Ü" there.
      const byTitle = await mustCall<{ threads: { title: string }[]; total: number; nextOffset: number | null }>(
        client,
        "t3_thread_list",
        { projectId: lab.projectId, title: "überprüfung", limit: 2 },
      );
      expect(byTitle.threads.map((thread) => thread.title)).toEqual(["ÜBERPRÜFUNG C", "überprüfung b"]);
      expect(byTitle).toMatchObject({ total: 3, nextOffset: 2 });
      expect(await threadRecordsRead()).toBe(2);
    } finally {
      selects.mockRestore();
      gets.mockRestore();
      pages.mockRestore();
      await client.close();
    }
  });
});
