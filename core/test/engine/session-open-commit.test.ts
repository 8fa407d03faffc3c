// A turn that opens its thread's provider session is recorded starting in the transaction that
// records the session open, which carries the resume cursor the session announced while it
// opened: one commit for the three (issue 33 item 4). A turn on a session already
// open records its start on its own. Real host, scripted provider, real SQLite; the
// transactions are read from the store's statements.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import { Store } from "../../src/store/store.js";
import { resolve } from "../../src/util/di-token.js";
import { startTestHost, type TestHost } from "../support/test-host.js";
import { instanceCachingFactory } from "tsyringe";

/** The statements of each committed transaction, in commit order. */
class Transactions {
  readonly committed: string[][] = [];
  /** Every statement, in order, transaction control included. */
  readonly all: string[] = [];
  private open: string[] | null = null;
  readonly observe = (sql: string): void => {
    this.all.push(sql);
    if (/^\s*BEGIN/i.test(sql)) this.open = [];
    else if (/^\s*COMMIT/i.test(sql)) {
      if (this.open !== null) this.committed.push(this.open);
      this.open = null;
    } else if (/^\s*ROLLBACK(?!\s+TO)/i.test(sql)) this.open = null;
    else this.open?.push(sql);
  };
  /** The committed transactions that ran a statement matching each pattern. */
  running(...patterns: RegExp[]): string[][] {
    return this.committed.filter((statements) =>
      patterns.every((pattern) => statements.some((sql) => pattern.test(sql))),
    );
  }
}

const SESSION_OPEN = /^UPDATE provider_sessions SET status = 'open'/;
const ATTEMPT_STARTING = /^UPDATE attempts SET status = 'starting'/;

describe("a turn's start and its session's opening", async () => {
  let env: TestHost;
  const transactions = new Transactions();
  beforeAll(async () => {
    env = await startTestHost({
      overrides: (container) =>
        container.register(TOKENS.Store, {
          useFactory: instanceCachingFactory(
            (c) => new Store(resolve(c, TOKENS.Paths).databaseFile, { onStatement: transactions.observe }),
          ),
        }),
    });
  });
  afterAll(async () => env?.cleanup());
  /** A thread of a new project whose first turn replies "first". */
  const newThread = async () =>
    (
      await env.host.threads.createThread({
        projectId: (await env.host.projects.add(env.workspace)).id,
        providerInstanceId: "scripted",
        prompt: "@@reply first",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;

  it("commit together when the turn opens the session, and apart when the session is open", async () => {
    const thread = await newThread();
    const first = await env.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
    expect(first.run?.status).toBe("completed");
    expect(transactions.running(SESSION_OPEN)).toHaveLength(1);
    expect(transactions.running(SESSION_OPEN, ATTEMPT_STARTING)).toHaveLength(1);
    // The cursor the scripted session announces while it opens is the open record's: no
    // transaction of its own writes it.
    const [session] = env.host.store.select("providerSession", "thread_id = ?", [thread.id]);
    expect(session?.resumeCursor).toEqual(expect.any(String));
    expect(transactions.running(/^UPDATE provider_sessions SET data = /)).toEqual([]);

    const { runId } = await env.host.threads.send({
      threadId: thread.id,
      text: "@@reply second",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    const second = await env.host.threads.waitForRun({ threadId: thread.id, runId, timeoutMs: 30_000 });
    expect(second.run?.status).toBe("completed");
    // The session stayed open: the second turn's start is a transaction of its own.
    expect(transactions.running(SESSION_OPEN)).toHaveLength(1);
    expect(transactions.running(ATTEMPT_STARTING)).toHaveLength(2);
    const sessionOf = (runId: string) => env.host.store.select("attempt", "run_id = ?", [runId])[0]?.providerSessionId;
    expect(sessionOf(runId)).toBe(sessionOf(first.run!.id));
  });

  it("read the thread once to open a session", async () => {
    const thread = await newThread();
    await env.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
    await env.host.sessions.close(thread.id, "test");
    const from = transactions.all.length;
    await env.host.sessions.ensure(thread.id);
    // Up to the opening record's BEGIN, what ran is this call's (no other work is under way).
    const beforeOpening = transactions.all.slice(from);
    const begin = beforeOpening.findIndex((sql) => /^BEGIN/.test(sql));
    expect(begin).toBeGreaterThan(0);
    // Its data alone, or its whole row (a read the store keeps for the next ones): once at most,
    // none when the store still holds the row its last transaction committed.
    const threadReads = beforeOpening
      .slice(0, begin)
      .filter((sql) => /^SELECT (data|last_sequence, .*) FROM threads WHERE id = /.test(sql));
    expect(threadReads.length).toBeLessThanOrEqual(1);
  });
});
