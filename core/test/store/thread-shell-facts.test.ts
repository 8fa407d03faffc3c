import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../src/store/ports.js";
import type { ThreadRecord } from "../../src/store/records.js";
import { Store } from "../../src/store/store.js";
import { ThreadsTable } from "../../src/store/tables/threads.js";
import { threadShell } from "../../src/services/thread-views.js";
import { storeReader } from "../../src/engine/projection-reader.js";

const NOW = "2026-12-01T00:00:00.000Z";

function thread(id: string): RecordUpsert {
  return {
    entity: "thread",
    record: {
      id,
      projectId: "project:a",
      title: id,
      providerInstanceId: "scripted",
      lineage: { parentThreadId: null, relationship: "root", rootThreadId: id, delegatedTaskId: null },
      snoozedUntil: null,
      deletedAt: null,
      createdAt: NOW,
      updatedAt: NOW,
    },
  } as unknown as RecordUpsert;
}

function run(threadId: string, ordinal: number, status: string): RecordUpsert {
  return {
    entity: "run",
    record: { id: `${threadId}:run:${ordinal}`, threadId, ordinal, status, delegatedTaskId: null, createdAt: NOW },
  } as unknown as RecordUpsert;
}

function task(parentThreadId: string, id: string, status: string, finalizedAt: string | null): RecordUpsert {
  return {
    entity: "delegatedTask",
    record: {
      id,
      parentThreadId,
      parentRunId: `${parentThreadId}:run:1`,
      childThreadId: `child:${id}`,
      rootThreadId: parentThreadId,
      status,
      finalizedAt,
      createdAt: NOW,
    },
  } as unknown as RecordUpsert;
}

/** A page's shells from the facts read for the whole page equal the shells that read their own. */
describe("a listing page's shell facts, in one statement", () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-shell-facts-"));
    store = new Store(join(dir, "switchyard.db"));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives each thread the active-or-latest run, queued runs and pending tasks its own reads give", async () => {
    store.transaction(() =>
      store.append(
        null,
        [
          thread("t:idle"),
          thread("t:running"),
          run("t:running", 1, "completed"),
          run("t:running", 2, "running"),
          run("t:running", 3, "queued"),
          run("t:running", 4, "queued"),
          thread("t:done"),
          run("t:done", 1, "failed"),
          run("t:done", 2, "completed"),
          thread("t:delegating"),
          run("t:delegating", 1, "completed"),
          task("t:delegating", "task:running", "running", null),
          task("t:delegating", "task:finalized", "completed", NOW),
          task("t:delegating", "task:unfinalized", "completed", null),
        ],
        NOW,
      ),
    );
    const ids = ["t:idle", "t:running", "t:done", "t:delegating"];
    const facts = await new ThreadsTable(store).shellFacts(ids);
    const shellOf = (id: string, withFacts: boolean) =>
      threadShell(
        storeReader(store),
        { isThreadBlocked: () => false },
        store.get("thread", id) as ThreadRecord,
        "env",
        NOW,
        withFacts ? facts.get(id) : undefined,
      );
    const shells = [];
    for (const id of ids) {
      expect(await shellOf(id, true), id).toEqual(await shellOf(id, false));
      shells.push(await shellOf(id, true));
    }
    expect(shells.map((shell) => [shell.status, shell.latestRunId])).toEqual([
      ["idle", null],
      ["running", "t:running:run:2"],
      ["completed", "t:done:run:2"],
      ["completed", "t:delegating:run:1"],
    ]);
    expect(facts.get("t:running")?.queuedRuns).toBe(2);
    expect(facts.get("t:delegating")?.pendingBackgroundTasks).toBe(2);
  });
});
