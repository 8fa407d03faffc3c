// A provider's "turn started" heard after the outbox recorded the turn running (its usual order:
// the start is recorded when the provider accepts the turn) changes nothing, so the ingestor
// opens no transaction for it: one commit fewer per turn (issue 33 item 4). Counted on real
// SQLite through the store's traffic counter.
import { mkdtempSync, rmSync } from "node:fs";
import { afterMicrotasks } from "../support/until.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TransactionalEngine } from "../../src/engine/engine.js";
import { LiveOutput } from "../../src/engine/live-output.js";
import { ProviderEventIngestor } from "../../src/engine/provider-event-ingestor.js";
import { createSilentLogger } from "../../src/logging/logger.js";
import { Store } from "../../src/store/store.js";
import { StoreTrafficCounter } from "../../src/store/store-traffic.js";
import { systemClock } from "../../src/util/clock.js";
import { randomIdAllocator } from "../../src/util/ids.js";
import { attempt } from "../store/contract/records.js";
import { type AdapterEvent, decodeCapabilities } from "../../src/spec/index.js";

describe("a provider event that is already settled", () => {
  let dir: string;
  let store: Store;
  let counter: StoreTrafficCounter;
  let statements: string[];
  let ingestor: ProviderEventIngestor;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-settled-events-"));
    counter = new StoreTrafficCounter();
    statements = [];
    const onStatement = (sql: string) => {
      statements.push(sql);
      counter.observe(sql);
    };
    store = new Store(join(dir, "switchyard.db"), { onStatement });
    const engine = new TransactionalEngine(store, systemClock, randomIdAllocator);
    ingestor = new ProviderEventIngestor(engine, new LiveOutput(), createSilentLogger());
    await engine.apply((ctx) => {
      ctx.put("attempt", attempt("attempt:1", "thread:1", "running", "psess:1").record);
      ctx.put("providerSession", {
        id: "psess:1",
        threadId: "thread:1",
        providerInstanceId: "scripted",
        status: "open",
        resumeCursor: "cursor:b",
        capabilities: decodeCapabilities({}).capabilities,
        openedAt: "2026-12-06T00:00:00.000Z",
        closedAt: null,
        closeReason: null,
      });
    });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const started: AdapterEvent = { type: "turn.started", turnId: "attempt:1", providerTurnId: "native:1" };

  /** Runs `emit` (ingesting events), waits for the tick's flush, and counts what it ran. */
  async function countTick(emit: () => void) {
    counter.reset();
    statements = [];
    emit();
    await afterMicrotasks();
    return counter.snapshot();
  }
  const ingestOneTick = (events: AdapterEvent[]) =>
    countTick(() => events.forEach((event) => ingestor.ingest("thread:1", "psess:1", event)));
  const cursor = (value: string): AdapterEvent => ({ type: "session.resume_cursor", cursor: value });
  const cursorOf = () => store.get("providerSession", "psess:1")?.resumeCursor;

  it("a turn's start heard after the turn was recorded running commits nothing", async () => {
    const traffic = await ingestOneTick([started]);
    expect(traffic).toMatchObject({ commits: 0, inTransactions: 0 });
    expect(store.get("attempt", "attempt:1")).toMatchObject({ status: "running", providerTurnId: null });
  });

  it("the events of its tick that are news still commit, without a savepoint for the settled one", async () => {
    const traffic = await ingestOneTick([started, { type: "warning", turnId: "attempt:1", message: "slow disk" }]);
    expect(traffic.commits).toBe(1);
    // The warning alone is applied: a one-change batch is its own transaction, no savepoint.
    expect(statements.filter((sql) => /^SAVEPOINT/i.test(sql))).toEqual([]);
    expect(store.select("item", "thread_id = ? AND kind = 'notice'", ["thread:1"]).map((item) => item.text)).toEqual([
      "slow disk",
    ]);
  });

  it("a cursor its session's record already carries commits nothing", async () => {
    expect(await ingestOneTick([cursor("cursor:b")])).toMatchObject({ commits: 0, inTransactions: 0 });
    expect(cursorOf()).toBe("cursor:b");
  });

  it("a cursor the record carries still applies after another cursor of its tick", async () => {
    expect((await ingestOneTick([cursor("cursor:a"), cursor("cursor:b")])).commits).toBe(1);
    expect(cursorOf()).toBe("cursor:b");
  });

  it("a session's held events wait for its release, then commit in order", async () => {
    ingestor.hold("psess:1");
    const held = await ingestOneTick([cursor("cursor:c"), cursor("cursor:d")]);
    expect(held.statements).toBe(0);
    expect(cursorOf()).toBe("cursor:b");
    expect((await countTick(() => ingestor.release("psess:1"))).commits).toBe(1);
    expect(cursorOf()).toBe("cursor:d");
    // Released: the next event is not held.
    expect((await ingestOneTick([cursor("cursor:e")])).commits).toBe(1);
  });
});
