// Issue 33: outside a command, code reads the store through `Engine.reader`, whose every read is
// a promise (as on PostgreSQL), never through the store's synchronous reads. A real host with a
// scripted provider and real SQLite runs a thread, a delegation's worth of views and the API a
// client calls; a store that notes which code called each synchronous read finds none but the
// readers themselves (and the marked exceptions, docs/decisions/0010).
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
] as const;

/**
 * Who may call the synchronous reads: the store itself, the command context (inside its
 * transaction), the committed reader, the engine's own transaction, and the exceptions 0010
 * lists (the ordered stream's synchronous stage, the host's commit listener, the host's
 * test-only reads).
 */
const ALLOWED_CALLERS = [
  /core\/src\/store\//,
  /core\/src\/engine\/command-context\.ts/,
  /core\/src\/engine\/projection-reader\.ts/,
  /core\/src\/engine\/engine\.ts/,
  /core\/src\/services\/events\//,
  /core\/src\/host\/switchyard-host\.ts/,
  /core\/src\/services\/threads\/host-test-reads\.ts/,
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
    store.watching = false;
    expect(store.strayCallers).toEqual([]);
  });
});
