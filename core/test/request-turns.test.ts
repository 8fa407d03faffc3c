import { describe, expect, it } from "vitest";
import { RequestTurns } from "../src/transports/http/request-turns.js";

/** Resolves after the event loop's next check phase has run (a setImmediate queued now). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("request handlers started one per event-loop turn", () => {
  it("starts a request at once when the server is idle", () => {
    const turns = new RequestTurns();
    const started: string[] = [];
    turns.enqueue(() => started.push("a"));
    expect(started).toEqual(["a"]);
  });

  it("starts the others of a burst in later turns, one per turn, in arrival order", async () => {
    const turns = new RequestTurns();
    const started: string[] = [];
    for (const name of ["a", "b", "c"]) turns.enqueue(() => started.push(name));
    expect(started).toEqual(["a"]);
    // The idle start holds its turn: b does not start in this turn's check phase.
    await nextTurn();
    expect(started).toEqual(["a"]);
    await nextTurn();
    expect(started).toEqual(["a", "b"]);
    await nextTurn();
    expect(started).toEqual(["a", "b", "c"]);
    // Idle again: the next request starts at once.
    await nextTurn();
    turns.enqueue(() => started.push("d"));
    expect(started).toEqual(["a", "b", "c", "d"]);
  });
});
