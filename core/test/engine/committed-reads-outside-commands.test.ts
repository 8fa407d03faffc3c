// Issue 33: outside a command, code reads the store through `Engine.reader`, whose every read is
// a promise (as on PostgreSQL), never through the store's synchronous reads. A real host with a
// scripted provider and real SQLite runs a thread, a delegation's worth of views and the API a
// client calls, with an event stream replaying and following the log, the host's idle-close
// decisions, the outbox and the host's test reads; a store that notes which code called each
// synchronous read finds none but the readers themselves and the engine's transaction.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import { Store } from "../../src/store/store.js";
import { resolve } from "../../src/util/di-token.js";
import { startTestHost, type TestHost } from "../support/test-host.js";
import { instanceCachingFactory } from "tsyringe";

const SYNC_READS = [
  "get",
  "select",
  "count",
  "exists",
  "lastSequence",
  "eventsAfter",
  "getReceipt",
  "previousUpsert",
  "firstUpsertSequence",
  "dueEffects",
  "outboxAgenda",
  "unfinishedEffects",
  "getEffect",
  "nextEffectDueAt",
] as const;

/**
 * Who may call the synchronous reads: the store itself, the command context (inside its
 * transaction), the committed reader and the engine's own transaction.
 */
const ALLOWED_CALLERS = [
  /core\/src\/store\//,
  /core\/src\/engine\/command-context\.ts/,
  /core\/src\/engine\/projection-reader\.ts/,
  /core\/src\/engine\/engine\.ts/,
];

/** A store that notes the callers of its synchronous reads from code outside the allowed places. */
class WatchedStore extends Store {
  readonly strayCallers: string[] = [];
  watching = false;
}

function watch(store: WatchedStore): void {
  for (const name of SYNC_READS) {
    const read = (store as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!.bind(store);
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      if (store.watching) {
        // The first frame outside this file and the store's own class is the caller.
        const frames = (new Error().stack ?? "").split("\n").slice(1);
        const caller = frames.find(
          (frame) => !frame.includes("committed-reads-outside-commands") && !/core\/src\/store\/store\.ts/.test(frame),
        );
        if (caller !== undefined && !ALLOWED_CALLERS.some((allowed) => allowed.test(caller)))
          store.strayCallers.push(`${name}: ${caller.trim()}`);
      }
      return read(...args);
    };
  }
}

describe("reads outside a command", () => {
  let env: TestHost;
  let store: WatchedStore;
  beforeAll(async () => {
    env = await startTestHost({
      overrides: (container) =>
        container.register(TOKENS.Store, {
          useFactory: instanceCachingFactory((c) => {
            store = new WatchedStore(resolve(c, TOKENS.Paths).databaseFile);
            watch(store);
            return store;
          }),
        }),
    });
  });
  afterAll(async () => env?.cleanup());

  it("go through the engine's committed reader, never the store's synchronous reads", async () => {
    store.watching = true;
    // A client following the whole log: its replay, then the live feed's stage.
    const streamed: number[] = [];
    const cursor = await env.host.served.eventStream.open(
      {
        kind: "client",
        threadId: null,
        projectId: null,
        providerInstanceId: null,
        providerSessionId: null,
        requestScope: "test",
        capabilities: new Set(["orchestration:read" as const]),
      },
      { after: 0 },
      {
        send: (events) => {
          for (const feedEvent of events) streamed.push(feedEvent.event.sequence);
          return true;
        },
        saturated: false,
        drained: async () => true,
        sendUnlogged: () => true,
      },
    );
    cursor.start();
    const project = await env.host.projects.add(env.workspace);
    const { thread } = await env.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "scripted",
      prompt: "@@reply first",
      createdBy: "user",
      creationSource: "cli",
    });
    const first = await env.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
    expect(first.run?.status).toBe("completed");
    await env.host.threads.send({
      threadId: thread.id,
      text: "@@reply second",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    const second = await env.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
    expect(second.run?.status).toBe("completed");
    expect(await env.host.projects.list()).toHaveLength(1);
    expect((await env.host.threads.getThread(thread.id)).id).toBe(thread.id);
    expect(await env.host.threads.runs(thread.id)).toHaveLength(2);
    expect(await env.host.threads.pendingRequests(thread.id)).toEqual([]);
    await env.host.drainEffects();
    const last = await env.host.engine.reader.lastSequence();
    while (cursor.sequence < last) await new Promise((resolve) => setImmediate(resolve));
    cursor.close();
    expect(streamed.length).toBeGreaterThan(0);
    store.watching = false;
    expect(store.strayCallers).toEqual([]);
  });
});
