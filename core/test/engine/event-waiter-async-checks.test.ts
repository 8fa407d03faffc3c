// A wait whose check reads asynchronously (issue 33 item 3: reads become asynchronous) must
// not miss a commit that lands while an answer is on its way, must not ask once per commit
// while one question is open, and must hand the caller a first question's failure.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventWaiter } from "../../src/services/event-waiter.js";
import { startTestHost, type TestHost } from "../support/test-host.js";

/** A promise whose settling the test controls. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

describe("waits with asynchronous checks", () => {
  let env: TestHost;
  let projectId: string;
  beforeAll(async () => {
    env = await startTestHost();
    projectId = (await env.host.projects.add(env.workspace)).id;
  });
  afterAll(async () => env.cleanup());

  const createThread = async (title: string) =>
    (
      await env.host.threads.createThread({
        projectId,
        providerInstanceId: "scripted",
        title,
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
  const rename = (threadId: string, title: string) =>
    env.host.engine.apply(async (ctx) => {
      const thread = await ctx.require("thread", threadId);
      ctx.put("thread", { ...thread, title, updatedAt: ctx.now });
    });

  it("asks again after a commit that landed while the first answer was on its way", async () => {
    const watched = await createThread("watched");
    const answers: ReturnType<typeof deferred<string | null>>[] = [];
    const waited = env.host.container.resolve(EventWaiter).waitFor(
      () => {
        // What the store says now, handed back only when the test lets the answer through.
        const title = env.host.store.get("thread", watched.id)?.title;
        const answer = deferred<string | null>();
        answers.push(answer);
        return answer.promise.then(() => (title === "done" ? "woken" : null));
      },
      { timeoutMs: 10_000, threadIds: [watched.id] },
    );
    expect(answers).toHaveLength(1);
    // The first question read "watched"; the thread is renamed before its answer arrives.
    await rename(watched.id, "done");
    await rename(watched.id, "done");
    await rename(watched.id, "done");
    // Three commits while one question was open: one more question, not three.
    expect(answers).toHaveLength(1);
    answers[0]!.resolve(null);
    await new Promise((settle) => setImmediate(settle));
    expect(answers).toHaveLength(2);
    answers[1]!.resolve(null);
    expect(await waited).toBe("woken");
    expect(answers).toHaveLength(2);
  });

  it("hands the caller the first question's failure, and takes a later one as not yet", async () => {
    const watched = await createThread("failing");
    const waiter = env.host.container.resolve(EventWaiter);
    await expect(
      waiter.waitFor(() => Promise.reject(new Error("no such task")), { timeoutMs: 10_000, threadIds: [watched.id] }),
    ).rejects.toThrow("no such task");

    let asked = 0;
    const waited = waiter.waitFor(
      async () => {
        asked += 1;
        if (asked === 2) throw new Error("caught half-way");
        return env.host.store.get("thread", watched.id)?.title === "second" ? "woken" : null;
      },
      { timeoutMs: 10_000, threadIds: [watched.id] },
    );
    await rename(watched.id, "first");
    await new Promise((settle) => setImmediate(settle));
    await rename(watched.id, "second");
    expect(await waited).toBe("woken");
    expect(asked).toBe(3);
  });

  it("answers once, without listening, when it may not wait", async () => {
    const watched = await createThread("no wait");
    const waiter = env.host.container.resolve(EventWaiter);
    expect(await waiter.waitFor(async () => null, { timeoutMs: 0, threadIds: [watched.id] })).toBeNull();
    expect(await waiter.waitFor(async () => "now", { timeoutMs: 0 })).toBe("now");
    const aborted = new AbortController();
    aborted.abort();
    expect(await waiter.waitFor(async () => null, { timeoutMs: 10_000, signal: aborted.signal })).toBeNull();
  });
});
