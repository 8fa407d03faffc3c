import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Command } from "../../../src/engine/ports.js";
import { backends } from "./backends.js";
import { item, project } from "./records.js";
import type { StoreHarness } from "./store-harness.js";

/** A command that writes a project and `items` items, counting how often its handler ran. */
function renameCommand(
  commandId: string,
  name: string,
  items: number,
  runs: { count: number },
): Command<{ name: string }> {
  return {
    commandId,
    operation: "test.rename",
    request: { name, items },
    handle: (ctx) => {
      runs.count += 1;
      ctx.put("project", project("project:receipts", name).record);
      for (let i = 1; i <= items; i += 1) ctx.put("item", item(`item:${commandId}:${i}`, "thread:r", i, name).record);
      return { name };
    },
  };
}

describe.each(backends.filter((backend) => backend.has.engine))(
  "store contract ($name): command receipts",
  (backend) => {
    let store: StoreHarness;
    beforeEach(async () => {
      store = await backend.open();
    });
    afterEach(() => backend.closeAll());

    it("replays a command id's stored result without running it again, and writes nothing", async () => {
      const runs = { count: 0 };
      const first = await store.execute(renameCommand("cmd:rename", "first", 2, runs));
      const after = await store.lastSequence();
      const again = await store.execute(renameCommand("cmd:rename", "first", 2, runs));

      expect(first).toMatchObject({ replayed: false, commandId: "cmd:rename", result: { name: "first" } });
      expect(again).toEqual({ ...first, replayed: true });
      expect(runs.count).toBe(1);
      expect(await store.lastSequence()).toBe(after);
    });

    it("refuses the same id with a different request as a typed conflict, and changes nothing", async () => {
      const runs = { count: 0 };
      await store.execute(renameCommand("cmd:rename", "first", 1, runs));
      const receipt = await store.receipt("cmd:rename");
      const after = await store.lastSequence();

      await expect(store.execute(renameCommand("cmd:rename", "second", 1, runs))).rejects.toMatchObject({
        code: "conflict",
        message: expect.stringContaining("cmd:rename"),
      });
      expect(runs.count).toBe(1);
      expect(await store.lastSequence()).toBe(after);
      expect(await store.receipt("cmd:rename")).toEqual(receipt);
      expect((await store.get("project", "project:receipts"))?.name).toBe("first");
    });

    it("records in the receipt exactly the first and last sequence of the command's own events", async () => {
      const runs = { count: 0 };
      // Events before and after it, of other writers, so a range that spilt over would show.
      await store.apply((ctx) => ctx.put("item", item("item:before", "thread:other", 1, "before").record));
      const outcome = await store.execute(renameCommand("cmd:three", "three", 2, runs));
      await store.apply((ctx) => ctx.put("item", item("item:after", "thread:other", 2, "after").record));

      const receipt = await store.receipt("cmd:three");
      expect(receipt).toMatchObject({ commandId: "cmd:three", operation: "test.rename", result: { name: "three" } });
      const own = (await store.eventsAfter(0)).filter((event) => event.commandId === "cmd:three");
      expect(own).toHaveLength(3);
      expect(receipt?.firstSequence).toBe(own[0]!.sequence);
      expect(receipt?.lastSequence).toBe(own[2]!.sequence);
      expect(outcome.sequence).toBe(own[2]!.sequence);
      const range = await store.eventsAfter(
        receipt!.firstSequence! - 1,
        receipt!.lastSequence! - receipt!.firstSequence! + 1,
      );
      expect(range).toEqual(own);
    });

    it("keeps a receipt with no sequences for a command that wrote nothing, and replays it", async () => {
      const command: Command<string> = {
        commandId: "cmd:noop",
        operation: "test.noop",
        request: {},
        handle: () => "nothing",
      };
      const first = await store.execute(command);
      expect(first).toMatchObject({ replayed: false, sequence: null, result: "nothing" });
      expect(await store.receipt("cmd:noop")).toMatchObject({ firstSequence: null, lastSequence: null });
      expect(await store.execute(command)).toMatchObject({ replayed: true, sequence: null, result: "nothing" });
    });

    it("keeps the receipt of a command whose handler returns nothing, and replays it as null", async () => {
      const command: Command<void> = {
        commandId: "cmd:void",
        operation: "test.void",
        request: {},
        handle: (ctx) => {
          ctx.put("project", project("project:void", "void").record);
        },
      };
      expect(await store.execute(command)).toMatchObject({ replayed: false, result: undefined });
      expect(await store.execute(command)).toMatchObject({ replayed: true, result: null });
      expect((await store.get("project", "project:void"))?.name).toBe("void");
    });

    it("keeps no receipt of a command whose handler threw, so the same id runs again", async () => {
      const failing: Command<string> = {
        commandId: "cmd:retry",
        operation: "test.retry",
        request: {},
        handle: (ctx) => {
          ctx.put("project", project("project:retry", "half done").record);
          throw new Error("the handler fails");
        },
      };
      await expect(store.execute(failing)).rejects.toThrow("the handler fails");
      expect(await store.receipt("cmd:retry")).toBeNull();
      expect(await store.get("project", "project:retry")).toBeNull();
      const retried = await store.execute({ ...failing, handle: () => "done" });
      expect(retried).toMatchObject({ replayed: false, result: "done" });
    });

    it("keeps receipts across a restart", async () => {
      const runs = { count: 0 };
      const first = await store.execute(renameCommand("cmd:durable", "durable", 1, runs));
      store = await backend.reopen(store);
      expect(await store.execute(renameCommand("cmd:durable", "durable", 1, runs))).toEqual({
        ...first,
        replayed: true,
      });
      expect(runs.count).toBe(1);
    });
  },
);

/**
 * Two processes (two nodes, later) given the same command id at once: the id is the retry key
 * a client sends to whichever node answers, so exactly one of them may run the command.
 */
describe.each(backends.filter((backend) => backend.has.engine))(
  "store contract ($name): one command id from two processes at once",
  (backend) => {
    let store: StoreHarness;
    beforeEach(async () => {
      store = await backend.open();
    });
    afterEach(() => backend.closeAll());

    const command = (name: string, hold: boolean) => ({
      commandId: "cmd:twice",
      operation: "test.rename",
      request: { name },
      upserts: [project("project:twice", name), item("item:twice:1", "thread:t", 1, name)],
      hold,
    });

    it("runs it in one: the other waits for that commit and replays its result and sequences", async () => {
      const first = await backend.spawnStoreProcess(store);
      const second = await backend.spawnStoreProcess(store);
      const before = await store.lastSequence();

      const held = first.execute(command("first", true));
      await held.holding;
      // The second asks while the first's transaction is open, its events written but not committed.
      const retry = second.execute(command("first", false));
      await retry.starting;
      held.release();
      const [ran, replayed] = await Promise.all([held.settled, retry.settled]);

      expect(ran).toMatchObject({
        ran: true,
        outcome: { replayed: false, commandId: "cmd:twice", result: { name: "first" } },
      });
      if (!("outcome" in ran)) throw new Error("unreachable");
      expect(replayed).toEqual({ ran: false, outcome: { ...ran.outcome, replayed: true } });
      const events = (await store.eventsAfter(before)).filter((event) => event.commandId === "cmd:twice");
      expect(events.map((event) => event.sequence)).toEqual([ran.outcome.sequence! - 1, ran.outcome.sequence]);
      expect(await store.lastSequence()).toBe(ran.outcome.sequence);
    });

    it("refuses the same id with a different request in the other as a typed conflict", async () => {
      const first = await backend.spawnStoreProcess(store);
      const second = await backend.spawnStoreProcess(store);

      const held = first.execute(command("first", true));
      await held.holding;
      const other = second.execute(command("second", false));
      await other.starting;
      held.release();
      const [ran, refused] = await Promise.all([held.settled, other.settled]);

      expect(ran).toMatchObject({ ran: true, outcome: { replayed: false } });
      expect(refused).toMatchObject({ error: { code: "conflict", message: expect.stringContaining("cmd:twice") } });
      expect((await store.get("project", "project:twice"))?.name).toBe("first");
      expect((await store.receipt("cmd:twice"))?.requestHash).toBeDefined();
    });
  },
);
