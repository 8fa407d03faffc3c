import { describe, expect, it } from "vitest";
import { freshReads, newestAnswers } from "../../src/model/fresh-reads.js";

/** A read the test answers by hand: each call records when it started and what the server held then. */
function manualServer() {
  let value = 0;
  const started: { key: string; saw: number; answer: () => void }[] = [];
  const shown = new Map<string, number>();
  const read = (key: string) =>
    new Promise<void>((resolve) => {
      const saw = value;
      started.push({ key, saw, answer: () => (shown.set(key, saw), resolve()) });
    });
  return {
    read,
    started,
    shown,
    change: () => (value += 1),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("fresh reads", () => {
  it("reads again after a request made while a read was in flight, so the last answer is not stale", async () => {
    const server = manualServer();
    const refresh = freshReads(server.read);
    const first = refresh("thread-1");
    server.change(); // the run finishes after the server answered the first read...
    const second = refresh("thread-1"); // ...and its event arrives while that answer is on its way.
    server.started[0]!.answer();
    await first;
    await settle();
    expect(server.started).toHaveLength(2);
    server.started[1]!.answer();
    await second;
    expect(server.shown.get("thread-1")).toBe(1);
  });

  it("folds a burst of requests into one more read, per key", async () => {
    const server = manualServer();
    const refresh = freshReads(server.read);
    const burst = [refresh("a"), refresh("a"), refresh("a"), refresh("a"), refresh("b")];
    expect(server.started.map((read) => read.key)).toEqual(["a", "b"]);
    server.started[0]!.answer();
    server.started[1]!.answer();
    await settle();
    expect(server.started.map((read) => read.key)).toEqual(["a", "b", "a"]);
    server.started[2]!.answer();
    await Promise.all(burst);
    // Idle again: the next request starts a read at once.
    void refresh("a");
    expect(server.started).toHaveLength(4);
  });

  it("keeps reading after a read fails", async () => {
    let calls = 0;
    const refresh = freshReads(async () => {
      calls += 1;
      if (calls === 1) throw new Error("offline");
    });
    await refresh("a");
    await refresh("a");
    expect(calls).toBe(2);
  });
});

describe("newest answers", () => {
  it("shows each answer newer than the one on screen and drops one that arrives after a newer one", () => {
    const ask = newestAnswers();
    const first = ask();
    const second = ask();
    const third = ask();
    expect(second()).toBe(true);
    expect(first()).toBe(false);
    expect(third()).toBe(true);
  });
});
