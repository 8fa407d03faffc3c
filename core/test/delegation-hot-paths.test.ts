// The reads, writes and wake-ups every delegation passes through, held to what
// bench/delegation-scale.bench.js's profile asked of them: per-thread reads use an index, a wait
// is re-checked only by commits on its own threads, and hot paths do not write what is already
// there. Counts and query plans, no timings.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../src/host/tokens.js";
import { QUEUED_RUNS_OF_THREAD } from "../src/engine/run-lifecycle.js";
import { McpSessionRegistry } from "../src/services/credentials/mcp-session-registry.js";
import { EventWaiter } from "../src/services/event-waiter.js";
import { environmentId } from "../src/store/settings.js";
import { JumpClock } from "./support/jump-clock.js";
import { startTestHost, type TestHost } from "./support/test-host.js";
import { sqliteStore } from "./support/sqlite-store.js";

describe("delegation hot paths", () => {
  const clock = new JumpClock();
  let env: TestHost;
  beforeAll(async () => {
    env = await startTestHost({ overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }) });
  });
  afterAll(async () => env.cleanup());

  const plan = (sql: string, ...params: unknown[]) =>
    (
      sqliteStore(env.host.store)
        .db.prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...params) as { detail: string }[]
    )
      .map((row) => row.detail)
      .join("; ");

  it("reads a thread's fork transfer and its attempts by index, not by scanning every thread's", () => {
    // message-delivery.ts, on every turn start:
    expect(plan("SELECT data FROM context_transfers WHERE target_thread_id = ? AND kind = 'fork'", "t")).toMatch(
      /USING INDEX context_transfers_target/,
    );
    // usage-totals.ts, on every delegate_task answer (the task's usage):
    expect(plan("SELECT COUNT(*) FROM attempts WHERE thread_id = ?", "t")).toMatch(
      /USING (COVERING )?INDEX attempts_thread/,
    );
  });

  it("reads a thread's queued runs and a run's pending requests by their own index, not every queued run's or every request's", () => {
    // run-lifecycle.ts (every turn's end, the thread shell of each listed thread): SQLite chose
    // runs_status, walking every queued run in the store.
    expect(plan(`SELECT data FROM runs WHERE ${QUEUED_RUNS_OF_THREAD}`, "t")).toMatch(/USING INDEX runs_thread/);
    // run-lifecycle.ts (a run ending cancels them), provider-event-ingestor.ts (each answer):
    // migration 18; a full scan of runtime_requests before it.
    expect(plan("SELECT data FROM runtime_requests WHERE run_id = ? AND status = 'pending'", "r")).toMatch(
      /USING INDEX runtime_requests_run/,
    );
  });

  it("re-checks a wait that names its threads only when one of them commits", async () => {
    const project = await env.host.projects.add(env.workspace);
    const create = async (title: string) =>
      (
        await env.host.threads.createThread({
          projectId: project.id,
          providerInstanceId: "scripted",
          title,
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
    const watched = await create("watched");
    const other = await create("other");
    const rename = (threadId: string, title: string) =>
      env.host.engine.apply(async (ctx) => {
        const thread = await ctx.require("thread", threadId);
        ctx.put("thread", { ...thread, title, updatedAt: ctx.now });
      });
    let checks = 0;
    const waited = env.host.container.resolve(EventWaiter).waitFor(
      () => {
        checks += 1;
        return env.host.store.get("thread", watched.id)?.title === "done" ? "woken" : null;
      },
      { timeoutMs: 10_000, threadIds: [watched.id] },
    );
    expect(checks).toBe(1);
    for (let i = 0; i < 5; i += 1) await rename(other.id, `other ${i}`);
    expect(checks).toBe(1);
    await rename(watched.id, "not yet");
    expect(checks).toBe(2);
    await rename(watched.id, "done");
    expect(await waited).toBe("woken");
    expect(checks).toBe(3);
  });

  it("writes a thread created with its first message once, not again to touch it", async () => {
    const project = await env.host.projects.add(env.workspace);
    const { thread } = await env.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "scripted",
      title: "touched once",
      prompt: "@@reply hi",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(
      sqliteStore(env.host.store)
        .db.prepare("SELECT COUNT(*) AS n FROM events WHERE entity = 'thread' AND entity_id = ?")
        .get(thread.id),
    ).toEqual({ n: 1 });
  });

  it("reads the environment id without a write once it exists", async () => {
    const store = env.host.store;
    // The last test's run goes on in the background: let a transaction it has open commit
    // first (this one queues behind it), or the lock below would wait on our own connection.
    await store.transactionAsync(async () => undefined);
    const id = environmentId(store);
    // Another connection holds the write lock: a write would fail at once with busy_timeout 0.
    const other = new Database(store.file);
    other.exec("BEGIN IMMEDIATE");
    sqliteStore(store).db.pragma("busy_timeout = 0");
    try {
      expect(environmentId(store)).toBe(id);
    } finally {
      sqliteStore(store).db.pragma("busy_timeout = 5000");
      other.exec("ROLLBACK");
      other.close();
    }
  });

  it("writes a credential's last use at most once per second of uses, and a later use again", async () => {
    const registry = env.host.container.resolve(McpSessionRegistry);
    const { id, token } = registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] });
    const lastUsed = () =>
      (
        sqliteStore(env.host.store).db.prepare("SELECT last_used_at FROM mcp_credentials WHERE id = ?").get(id) as {
          last_used_at: number;
        }
      ).last_used_at;
    const issuedAt = lastUsed();
    clock.advance(500);
    for (let i = 0; i < 3; i += 1) expect("scope" in (await registry.resolve(token))).toBe(true);
    expect(lastUsed()).toBe(issuedAt);
    clock.advance(600);
    expect("scope" in (await registry.resolve(token))).toBe(true);
    expect(lastUsed()).toBeGreaterThanOrEqual(issuedAt + 1_100);
  });
});

describe("idle provider sessions", () => {
  it("keeps at most server.maxIdleSessions open without a turn, closing the one idle longest", async () => {
    const env = await startTestHost({ server: { maxIdleSessions: 2 } });
    try {
      const project = await env.host.projects.add(env.workspace);
      const threads: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        const { thread } = await env.host.threads.createThread({
          projectId: project.id,
          providerInstanceId: "scripted",
          prompt: `@@reply ${i}`,
          createdBy: "user",
          creationSource: "cli",
        });
        expect((await env.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 20_000 })).run?.status).toBe(
          "completed",
        );
        threads.push(thread.id);
      }
      // The close of the first two runs after their run ends; wait for their records (bounded).
      for (let i = 0; i < 200 && env.host.store.count("providerSession", "status = 'closed'") < 2; i += 1)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(
        env.host.sessions
          .all()
          .map((live) => live.threadId)
          .sort(),
      ).toEqual(threads.slice(2).sort());
      const closed = env.host.store
        .select("providerSession", "status = 'closed'")
        .map((record) => [record.threadId, record.closeReason]);
      expect(closed.sort()).toEqual(
        threads
          .slice(0, 2)
          .map((threadId) => [threadId, "idle_cap"])
          .sort(),
      );
      // A capped thread opens a session again for its next turn.
      await env.host.threads.send({
        threadId: threads[0]!,
        text: "@@reply again",
        mode: "auto",
        createdBy: "user",
        creationSource: "cli",
      });
      const again = await env.host.threads.waitForRun({ threadId: threads[0]!, timeoutMs: 20_000 });
      expect(again.run?.status).toBe("completed");
    } finally {
      await env.cleanup();
    }
  });
});
