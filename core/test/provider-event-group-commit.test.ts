// Group commit of adapter events (ProviderEventIngestor): the events of one tick commit in one
// transaction, each in its own savepoint, and a kill -9 never loses an event the harness was
// past. What "accepted" means: an event is accepted when its tick's transaction commits; the
// flush is a microtask queued by the emit and its asynchronous transaction commits within that
// microtask drain, so before the event loop reaches any I/O (an in-process harness's own
// synchronous code in a later microtask may run before the commit: the scripted harness's gate
// writes through the event loop, as a harness's own I/O does), and nothing outside the process
// (a waiting tool, SSE) can hear of an event before it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import type { AdapterEvent } from "../src/spec/index.js";
import type { StoredEvent } from "../src/store/records.js";
import { TOKENS } from "../src/host/tokens.js";
import { resolve } from "../src/util/di-token.js";
import { EngineChild } from "./support/engine-child.js";
import { untilGatesReached } from "./support/gates.js";
import { afterMicrotasks } from "./support/until.js";
import { startTestHost, type TestHost } from "./support/test-host.js";
import { sqliteStore } from "./support/sqlite-store.js";

describe("adapter events of one tick", () => {
  let env: TestHost;
  beforeAll(async () => {
    env = await startTestHost();
  });
  afterAll(async () => env.cleanup());

  /** A turn held at a gate, with its attempt and provider session. */
  async function liveTurn(gate: string) {
    const project = await env.host.projects.add(env.workspace);
    const { thread } = await env.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "scripted",
      prompt: `@@gate ${gate} @@reply done`,
      createdBy: "user",
      creationSource: "cli",
    });
    await untilGatesReached(env.gateDir, [gate]);
    const [attempt] = env.host.store.select("attempt", "thread_id = ? AND status = 'running'", [thread.id]);
    if (attempt === undefined || attempt.providerSessionId === null) throw new Error("no running attempt");
    return { threadId: thread.id, attempt: attempt as typeof attempt & { providerSessionId: string } };
  }

  it("commit in one transaction after the tick, and listeners hear them only once committed", async () => {
    const { threadId, attempt } = await liveTurn("one-tick");
    const ingestor = resolve(env.host.container, TOKENS.ProviderEventIngestor);
    const batches: { events: readonly StoredEvent[]; inTransaction: boolean }[] = [];
    const unsubscribe = env.host.engine.onEvents((events) =>
      batches.push({ events, inTransaction: sqliteStore(env.host.store).db.inTransaction }),
    );
    try {
      const turnId = attempt.id;
      const events: AdapterEvent[] = [
        { type: "subagent.observed", turnId, nativeId: "helper-1", title: "helper", status: "running" },
        { type: "tool_call.started", turnId, itemId: "call-1", kind: "mcp", name: "lookup", title: "lookup" },
        { type: "tool_call.completed", turnId, itemId: "call-1", status: "completed", output: "found" },
        {
          type: "subagent.observed",
          turnId,
          nativeId: "helper-1",
          title: "helper",
          status: "completed",
          summary: "helped",
        },
      ];
      for (const event of events) ingestor.ingest(threadId, attempt.providerSessionId, event);
      // Not yet: the tick is not over.
      expect(env.host.store.select("item", "thread_id = ? AND kind IN ('subagent', 'tool_call')", [threadId])).toEqual(
        [],
      );
      await afterMicrotasks();
      const items = env.host.store.select("item", "thread_id = ? AND kind IN ('subagent', 'tool_call')", [threadId]);
      expect(items.map((item) => [item.kind, item.status]).sort()).toEqual([
        ["subagent", "completed"],
        ["tool_call", "completed"],
      ]);
      expect(batches).toHaveLength(1);
      expect(batches[0]!.inTransaction).toBe(false);
      expect(batches[0]!.events.filter((event) => event.entity === "item")).toHaveLength(4);
    } finally {
      unsubscribe();
      releaseGate(env.gateDir, "one-tick");
    }
  });

  it("roll back one failing event alone: the others commit and no one hears the failed one's writes", async () => {
    const { threadId, attempt } = await liveTurn("one-fails");
    const ingestor = resolve(env.host.container, TOKENS.ProviderEventIngestor);
    const heard: StoredEvent[] = [];
    const unsubscribe = env.host.engine.onEvents((events) => heard.push(...events));
    try {
      const turnId = attempt.id;
      ingestor.ingest(threadId, attempt.providerSessionId, {
        type: "plan.proposed",
        turnId,
        itemId: "plan-before",
        text: "before",
      });
      // A malformed event (no text) fails after its item was written: its savepoint rolls back.
      ingestor.ingest(threadId, attempt.providerSessionId, {
        type: "message.completed",
        turnId,
        itemId: "broken",
        text: undefined as unknown as string,
      });
      ingestor.ingest(threadId, attempt.providerSessionId, {
        type: "plan.proposed",
        turnId,
        itemId: "plan-after",
        text: "after",
      });
      await afterMicrotasks();
      const items = env.host.store.select("item", "thread_id = ? AND kind IN ('proposed_plan', 'assistant_message')", [
        threadId,
      ]);
      expect(items.map((item) => item.text).sort()).toEqual(["after", "before"]);
      const heardItems = heard
        .filter((event) => event.entity === "item")
        .map((event) => (event.record as { text: string }).text);
      expect(heardItems).toEqual(["before", "after"]);
      // The log holds exactly what the projections do.
      expect(
        sqliteStore(env.host.store)
          .db.prepare("SELECT COUNT(*) AS n FROM events WHERE entity_id LIKE ?")
          .get(`%:message:broken`),
      ).toEqual({ n: 0 });
      // Alone in its tick (its own transaction, no savepoint) it fails the same way, and the next tick goes on.
      ingestor.ingest(threadId, attempt.providerSessionId, {
        type: "message.completed",
        turnId,
        itemId: "broken-alone",
        text: undefined as unknown as string,
      });
      await afterMicrotasks();
      ingestor.ingest(threadId, attempt.providerSessionId, {
        type: "plan.proposed",
        turnId,
        itemId: "plan-later",
        text: "later",
      });
      await afterMicrotasks();
      expect(
        heard.filter((event) => event.entity === "item").map((event) => (event.record as { text: string }).text),
      ).toEqual(["before", "after", "later"]);
      expect(
        sqliteStore(env.host.store)
          .db.prepare("SELECT COUNT(*) AS n FROM events WHERE entity_id LIKE ?")
          .get(`%:message:broken-alone`),
      ).toEqual({ n: 0 });
    } finally {
      unsubscribe();
      releaseGate(env.gateDir, "one-fails");
    }
  });
});

describe("a host killed with SIGKILL right after a burst of adapter events", () => {
  const dirs: string[] = [];
  let child: EngineChild | null = null;
  afterEach(async () => {
    await child?.stop();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("keeps every event the harness had emitted before it went on to its next I/O", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-group-commit-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-group-commit-ws-"));
    dirs.push(workspace);
    child = EngineChild.startScripted(home, gateDir, join(root, "state"));
    await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    // Each @@subagent emits two events in one tick; the gate then writes its "reached" file:
    // the harness's own I/O after those events, which the test sees before it kills the host.
    const threadId = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      prompt: "@@subagent scan\n@@subagent index\n@@plan ship it\n@@gate after-burst @@reply done",
    });
    await untilGatesReached(gateDir, ["after-burst"]);
    await child.kill9();
    child = null;

    const db = new Database(join(home, "switchyard.db"), { readonly: true });
    try {
      const items = (
        db
          .prepare("SELECT data FROM items WHERE thread_id = ? AND kind IN ('subagent', 'proposed_plan')")
          .all(threadId) as { data: string }[]
      ).map((row) => JSON.parse(row.data) as { kind: string; status: string; text: string });
      expect(items.map((item) => `${item.kind}:${item.text}:${item.status}`).sort()).toEqual([
        "proposed_plan:ship it:completed",
        "subagent:index:completed",
        "subagent:scan:completed",
      ]);
    } finally {
      db.close();
    }
  });
});
