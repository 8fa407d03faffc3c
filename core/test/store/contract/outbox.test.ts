import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backends } from "./backends.js";
import type { EffectToQueue, StoreHarness } from "./store-harness.js";

const effect = (id: string, lane: string): EffectToQueue => ({ id, lane, type: "test.effect", payload: { id } });
const ids = (effects: readonly { id: string }[]) => effects.map((e) => e.id);

describe.each(backends)("store contract ($name): the outbox's lanes and claims", (backend) => {
  let store: StoreHarness;
  let now: number;
  beforeEach(async () => {
    store = await backend.open();
    now = store.nowMs();
  });
  afterEach(() => backend.closeAll());

  it("hands out one effect per lane at a time, in seq order, and the lanes side by side", async () => {
    await store.transaction((work) => {
      work.enqueueEffect(effect("a1", "lane:a"));
      work.enqueueEffect(effect("b1", "lane:b"));
      work.enqueueEffect(effect("a2", "lane:a"));
      work.enqueueEffect(effect("a3", "lane:a"));
    });
    // seq is the order of queuing, across lanes.
    const queued = await store.unfinishedEffects();
    expect(ids(queued)).toEqual(["a1", "b1", "a2", "a3"]);
    expect(queued.map((e) => e.seq)).toEqual(queued.map((e) => e.seq).sort((x, y) => x - y));
    expect(ids(await store.dueEffects(now))).toEqual(["a1", "b1"]);

    expect(await store.claimEffect("a1", now)).toBe(true);
    // a1 is claimed, not finished: a2 waits behind it, b1 does not.
    expect(ids(await store.dueEffects(now))).toEqual(["b1"]);
    expect(await store.claimEffect("b1", now)).toBe(true);
    expect(await store.dueEffects(now)).toEqual([]);

    await store.settleEffect("a1", "done", null);
    expect(ids(await store.dueEffects(now))).toEqual(["a2"]);
    await store.settleEffect("b1", "done", null);
    expect(await store.claimEffect("a2", now)).toBe(true);
    await store.settleEffect("a2", "failed", "the provider refused");
    // A failed effect finishes its turn in the lane like a done one.
    expect(ids(await store.dueEffects(now))).toEqual(["a3"]);
    expect(await store.effect("a2")).toMatchObject({
      status: "failed",
      lastError: "the provider refused",
      attempts: 1,
    });
  });

  it("lets one claim of an effect win: a second claim fails, from this store or another one on the database", async () => {
    const other = await backend.connectAgain(store);
    await store.transaction((work) => work.enqueueEffect(effect("e1", "lane:a")));
    expect(ids(await other.dueEffects(now))).toEqual(["e1"]);

    const claims = await Promise.all([store.claimEffect("e1", now), other.claimEffect("e1", now)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.claimEffect("e1", now)).toBe(false);
    expect(await store.effect("e1")).toMatchObject({ status: "claimed", attempts: 1 });
    // Settled, it cannot be claimed either.
    await other.settleEffect("e1", "done", null);
    expect(await store.claimEffect("e1", now)).toBe(false);
  });

  it("holds a delayed effect until it is due, and says when that is", async () => {
    await store.transaction((work) => work.enqueueEffect(effect("later", "lane:a"), 60_000));
    expect(await store.dueEffects(now)).toEqual([]);
    const dueAt = await store.nextEffectDueAt();
    expect(dueAt).toBeGreaterThanOrEqual(now + 60_000);
    expect(ids(await store.dueEffects(dueAt!))).toEqual(["later"]);
    expect(await store.claimEffect("later", dueAt!)).toBe(true);
    expect(await store.nextEffectDueAt()).toBeNull();
  });

  it("reads the due effects and when the earliest of the others is due together (the worker's tick)", async () => {
    expect(await store.outboxAgenda(now)).toEqual({ due: [], laterDueAt: null });
    await store.transaction((work) => {
      work.enqueueEffect(effect("a1", "lane:a"));
      work.enqueueEffect(effect("later", "lane:b"), 60_000);
    });
    const first = await store.outboxAgenda(now);
    expect(first.due).toEqual(await store.dueEffects(now));
    expect(ids(first.due)).toEqual(["a1"]);
    expect(first.laterDueAt).toBeGreaterThanOrEqual(now + 60_000);
    // An effect queued behind a due one in its lane is among the others, due now.
    await store.transaction((work) => work.enqueueEffect(effect("a2", "lane:a")));
    const second = await store.outboxAgenda(now);
    expect(ids(second.due)).toEqual(["a1"]);
    expect(second.laterDueAt).toBe((await store.effect("a2"))!.availableAt);
    // Claimed, the head is not pending: what is left is the delayed one and the one behind it.
    expect(await store.claimEffect("a1", now)).toBe(true);
    expect(await store.outboxAgenda(now)).toEqual({ due: [], laterDueAt: second.laterDueAt });
    await store.settleEffect("a1", "done", null);
    expect(ids((await store.outboxAgenda(now)).due)).toEqual(["a2"]);
    expect((await store.outboxAgenda(now)).laterDueAt).toBe(first.laterDueAt);
  });

  it("puts a retried effect back at the head of its lane, due later, with its attempts and error kept", async () => {
    await store.transaction((work) => {
      work.enqueueEffect(effect("first", "lane:a"));
      work.enqueueEffect(effect("second", "lane:a"));
    });
    expect(await store.claimEffect("first", now)).toBe(true);
    await store.retryEffect("first", now + 1_000, "the database was locked");

    expect(await store.effect("first")).toMatchObject({
      status: "pending",
      attempts: 1,
      availableAt: now + 1_000,
      lastError: "the database was locked",
    });
    // Not due yet, and still ahead of "second": the lane keeps its order across a retry.
    expect(await store.dueEffects(now)).toEqual([]);
    expect(ids(await store.dueEffects(now + 1_000))).toEqual(["first"]);
    expect(await store.claimEffect("first", now + 1_000)).toBe(true);
    expect((await store.effect("first"))?.attempts).toBe(2);
    await store.settleEffect("first", "abandoned", "gave up");
    expect(ids(await store.dueEffects(now + 1_000))).toEqual(["second"]);
    expect(ids(await store.unfinishedEffects())).toEqual(["second"]);
  });

  it("keeps the first effect of an id: queuing it again changes nothing", async () => {
    await store.transaction((work) => work.enqueueEffect({ ...effect("once", "lane:a"), payload: { first: true } }));
    await store.transaction((work) => work.enqueueEffect({ ...effect("once", "lane:b"), payload: { first: false } }));
    expect(await store.unfinishedEffects()).toEqual([
      expect.objectContaining({ id: "once", lane: "lane:a", payload: { first: true }, status: "pending" }),
    ]);
  });

  it("keeps every effect's state across a restart: a claimed one stays claimed and holds its lane until it is retried", async () => {
    await store.transaction((work) => {
      work.enqueueEffect(effect("claimed", "lane:a"));
      work.enqueueEffect(effect("behind", "lane:a"));
      work.enqueueEffect(effect("settled", "lane:b"));
      work.enqueueEffect(effect("pending", "lane:c"));
    });
    expect(await store.claimEffect("claimed", now)).toBe(true);
    expect(await store.claimEffect("settled", now)).toBe(true);
    await store.settleEffect("settled", "done", null);
    const before = await store.unfinishedEffects();

    store = await backend.reopen(store);

    expect(await store.unfinishedEffects()).toEqual(before);
    expect(ids(before)).toEqual(["claimed", "behind", "pending"]);
    expect(await store.effect("claimed")).toMatchObject({ status: "claimed", attempts: 1 });
    expect(await store.effect("settled")).toMatchObject({ status: "done" });
    // What a restart does with a claim its crashed worker left (the boot reconciler): retry it.
    expect(ids(await store.dueEffects(now))).toEqual(["pending"]);
    await store.retryEffect("claimed", 0, "reset after restart");
    expect(ids(await store.dueEffects(now))).toEqual(["claimed", "pending"]);
    expect(await store.claimEffect("claimed", now)).toBe(true);
    expect((await store.effect("claimed"))?.attempts).toBe(2);
  });
});
