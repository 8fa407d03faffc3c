import { describe, expect, it } from "vitest";
import type { EntityName, EntityRecords, StoredEvent } from "../../src/store/records.js";
import { EVENT_TEXT_LIMIT, publicEventOf, publicStateOf } from "../../src/services/events/public-events.js";

/** An upsert as the log holds it; only the fields the projection reads matter. */
function upsert<E extends EntityName>(entity: E, record: Partial<EntityRecords[E]>, sequence = 7): StoredEvent {
  return {
    sequence,
    type: `${entity}.upserted`,
    entity,
    threadId: "thread-1",
    commandId: null,
    record: { id: `${entity}-1`, threadId: "thread-1", ...record } as EntityRecords[E],
    createdAt: "2026-12-01T00:00:00.000Z",
  } as StoredEvent;
}

const run = (status: string) => upsert("run", { status: status as never, summary: null, error: null });
const typeOf = (stored: StoredEvent, previous: string | null) => publicEventOf(stored, previous)?.type ?? null;

describe("public events: one internal upsert, at most one public event", () => {
  it("reports a run's start once (leaving the queue) and its end once", () => {
    expect(typeOf(run("queued"), null)).toBeNull();
    expect(typeOf(run("starting"), "queued")).toBe("run.started");
    expect(typeOf(run("starting"), null)).toBe("run.started");
    expect(typeOf(run("starting"), "starting")).toBeNull();
    expect(typeOf(run("running"), "starting")).toBeNull();
    // A restart attempt or a continuation after a server restart is no new start.
    expect(typeOf(run("starting"), "running")).toBeNull();
    expect(typeOf(run("completed"), "running")).toBe("run.finished");
    expect(typeOf(run("cancelled"), "queued")).toBe("run.finished");
    expect(typeOf(run("completed"), "completed")).toBeNull();
  });

  it("makes a message of a completed user or assistant message, and an item of any other visible item change", () => {
    const message = (status: string, text = "hello") =>
      upsert("item", {
        kind: "assistant_message",
        status: status as never,
        text,
        data: {},
        position: 3,
        runId: "run-1",
      });
    expect(typeOf(message("in_progress"), null)).toBe("item");
    const streaming = publicStateOf("item", message("in_progress").record as EntityRecords["item"]);
    expect(typeOf(message("completed"), streaming)).toBe("message");
    const done = publicStateOf("item", message("completed").record as EntityRecords["item"]);
    expect(typeOf(message("completed"), done)).toBeNull();
    expect(typeOf(message("completed", "edited"), done)).toBe("item");
    const tool = upsert("item", {
      kind: "tool_call",
      status: "in_progress",
      text: "ls",
      data: { toolKind: "command" },
      position: 4,
    });
    expect(typeOf(tool, null)).toBe("item");
    expect(typeOf(tool, publicStateOf("item", tool.record as EntityRecords["item"]))).toBeNull();
  });

  it("bounds long text and says so", () => {
    const long = upsert("item", {
      kind: "user_message",
      status: "completed",
      text: "z".repeat(EVENT_TEXT_LIMIT + 10),
      data: {},
      position: 1,
    });
    const event = publicEventOf(long, null)!;
    expect(event.type).toBe("message");
    expect(event.data.item as { text: string; truncated: boolean }).toMatchObject({ truncated: true });
    expect((event.data.item as { text: string }).text).toHaveLength(EVENT_TEXT_LIMIT);
  });

  it("reports a thread's creation and its settling, and requests opening, answered and closed", () => {
    const thread = upsert("thread", {
      id: "thread-1",
      projectId: "p",
      title: "t",
      lineage: {
        relationship: "root",
        parentThreadId: null,
        parentRunId: null,
        parentNodeId: null,
        delegatedTaskId: null,
        depth: 0,
        rootThreadId: "thread-1",
      },
    } as never);
    expect(typeOf(thread, null)).toBe("thread.created");
    const open = publicStateOf("thread", thread.record as EntityRecords["thread"]);
    expect(typeOf(thread, open)).toBeNull();
    const settled = upsert("thread", { ...(thread.record as object), settledAt: "2026-12-01T00:00:00.000Z" } as never);
    expect(publicEventOf(settled, open)).toMatchObject({ type: "thread.settled", data: { settled: true } });
    expect(publicEventOf(thread, publicStateOf("thread", settled.record as EntityRecords["thread"]))).toMatchObject({
      type: "thread.settled",
      data: { settled: false },
    });
    // A new title is its own event; an upsert that keeps the title and the settling makes none.
    const renamed = upsert("thread", { ...(thread.record as object), title: "new name", titleSource: "user" } as never);
    expect(publicEventOf(renamed, open)).toMatchObject({
      type: "thread.renamed",
      data: { threadId: "thread-1", title: "new name", titleSource: "user" },
    });
    expect(typeOf(renamed, publicStateOf("thread", renamed.record as EntityRecords["thread"]))).toBeNull();
    // A snooze set or cleared is its own event, carrying until when.
    const snoozed = upsert("thread", {
      ...(thread.record as object),
      snoozedUntil: "2026-12-08T09:00:00.000Z",
      snoozedAt: "2026-12-07T09:00:00.000Z",
    } as never);
    expect(publicEventOf(snoozed, open)).toMatchObject({
      type: "thread.snoozed",
      data: { threadId: "thread-1", snoozedUntil: "2026-12-08T09:00:00.000Z" },
    });
    expect(publicEventOf(thread, publicStateOf("thread", snoozed.record as EntityRecords["thread"]))).toMatchObject({
      type: "thread.snoozed",
      data: { snoozedUntil: null },
    });
    const request = (status: string, detail?: string) =>
      upsert("runtimeRequest", {
        status: status as never,
        kind: "approval",
        request: {
          kind: "approval",
          approvalKind: "command",
          title: "rm",
          ...(detail !== undefined ? { detail } : {}),
        },
      });
    expect(typeOf(request("pending"), null)).toBe("request.opened");
    expect(typeOf(request("pending"), "pending")).toBeNull();
    expect(typeOf(request("answered"), "pending")).toBe("request.answered");
    expect(typeOf(request("expired"), "pending")).toBe("request.closed");
    // An approval's detail (a whole diff, say) is bounded like any text.
    const diff = publicEventOf(request("pending", "d".repeat(EVENT_TEXT_LIMIT * 2)), null)!;
    expect((diff.data.request as { request: { detail: string; detailTruncated: boolean } }).request).toMatchObject({
      detailTruncated: true,
      detail: "d".repeat(EVENT_TEXT_LIMIT),
    });
  });

  it("reports a workspace's changes, an apply under way and each outcome, once each", () => {
    const base = {
      threadId: "thread-1",
      status: "ready",
      disposition: null,
      changes: null,
      pendingApply: null,
      applying: null,
      pendingRemoval: null,
      outcomes: [],
      path: "/w",
      strategy: "worktree",
      target: { threadId: "p", path: "/p" },
    };
    const workspace = (change: Record<string, unknown>) => upsert("workspace", { ...base, ...change } as never);
    const state = (stored: StoredEvent) => publicStateOf("workspace", stored.record as EntityRecords["workspace"]);
    const ready = workspace({});
    expect(publicEventOf(ready, null)).toMatchObject({
      type: "workspace.updated",
      threadId: "thread-1",
      data: { workspace: { status: "ready", pending: null } },
    });
    expect(typeOf(ready, state(ready))).toBeNull();
    const applying = workspace({ pendingApply: { requestId: "r", method: "merge", requestedAt: "t" } });
    expect(publicEventOf(applying, state(ready))?.data).toMatchObject({ workspace: { pending: "apply" } });
    const applied = workspace({
      disposition: "applied",
      outcomes: [
        {
          action: "apply",
          outcome: "applied",
          method: "merge",
          commit: "c",
          files: [],
          message: null,
          requestId: "r",
          at: "t",
        },
      ],
    });
    expect(publicEventOf(applied, state(applying))?.data).toMatchObject({
      workspace: { disposition: "applied", lastOutcome: { outcome: "applied" } },
    });
    expect(typeOf(applied, state(applied))).toBeNull();
  });

  it("keeps internal records internal", () => {
    expect(typeOf(upsert("attempt", { status: "running" } as never), null)).toBeNull();
    expect(typeOf(upsert("node", {} as never), null)).toBeNull();
    expect(typeOf(upsert("providerSession", {} as never), null)).toBeNull();
  });
});
