import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SwitchyardConfigSchema } from "../../src/config/config-schema.js";
import { TransactionalEngine } from "../../src/engine/engine.js";
import { createSilentLogger } from "../../src/logging/logger.js";
import { McpSessionRegistry } from "../../src/services/credentials/mcp-session-registry.js";
import { environmentId } from "../../src/store/settings.js";
import { Store } from "../../src/store/store.js";
import { systemClock } from "../../src/util/clock.js";
import { randomIdAllocator } from "../../src/util/ids.js";
import { item } from "../store/contract/records.js";

// The engine runs each command in the store's asynchronous transaction, open across awaits. A
// write made on the connection meanwhile from outside the command would join its transaction:
// the store refuses it (store_async_transaction_open). The writers that run outside commands
// take their turn instead (`writeAsync`): they wait for the command to commit, then succeed.

const NOW = "2026-12-01T00:00:00.000Z";
const REFUSED = { name: "AsyncTransactionConflictError", code: "store_async_transaction_open" };

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe("writers outside a command while the command's transaction is open", () => {
  let dir: string;
  let store: Store;
  let engine: TransactionalEngine;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-outside-writers-"));
    store = new Store(join(dir, "switchyard.db"));
    engine = new TransactionalEngine(store, systemClock, randomIdAllocator);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let positions = 0;
  /** A command that writes an item and queues an effect, as most commands do. */
  const command = (commandId: string) => {
    const position = (positions += 1);
    return engine.execute({
      commandId,
      operation: "test",
      request: {},
      handle: (ctx) => {
        ctx.put("item", item(`item:${commandId}`, "thread:1", position, commandId).record);
        ctx.effect({ id: `effect:${commandId}`, lane: "thread:1", type: "test.effect", payload: {} });
        return commandId;
      },
    });
  };

  it("an outbox claim waits for the command under way to commit, then claims", async () => {
    store.transaction(() =>
      store.enqueueEffect({ id: "effect:earlier", lane: "thread:2", type: "test.effect", payload: {} }, 0, NOW),
    );
    const running = command("cmd:running");
    // The command's transaction is open now (it commits once the event loop turns): the claim as
    // the outbox made it before, an autocommit statement on the same connection, is refused.
    expect(() => store.claimEffect("effect:earlier", 0)).toThrow(expect.objectContaining(REFUSED));
    let sawCommitted: boolean | null = null;
    const claimed = store.writeAsync(() => {
      // Outside any transaction, and after the command: its receipt has committed.
      sawCommitted = !store.db.inTransaction && store.getReceipt("cmd:running") !== null;
      return store.claimEffect("effect:earlier", 0);
    });
    expect(await claimed).toBe(true);
    expect(sawCommitted).toBe(true);
    expect(await running).toMatchObject({ replayed: false, result: "cmd:running" });
    expect(store.getEffect("effect:earlier")).toMatchObject({ status: "claimed", attempts: 1 });
    expect(store.getEffect("effect:cmd:running")).toMatchObject({ status: "pending" });
  });

  it("settles and claims in call order behind commands queued on a transaction held across awaits", async () => {
    const held = gate();
    const entered = gate();
    const holding = store.transactionAsync(async () => {
      entered.open();
      await held.opened;
    });
    await entered.opened;
    const first = command("cmd:first");
    const claim = store.writeAsync(() => store.claimEffect("effect:cmd:first", 0));
    const second = command("cmd:second");
    held.open();
    await holding;
    // The claim ran after the first command committed (its effect was there to claim) and
    // before the second one began.
    expect(await claim).toBe(true);
    await Promise.all([first, second]);
    expect(store.getEffect("effect:cmd:first")).toMatchObject({ status: "claimed" });
    expect(store.getEffect("effect:cmd:second")).toMatchObject({ status: "pending" });
    await store.writeAsync(() => store.settleEffect("effect:cmd:first", "done", null, NOW));
    expect(store.getEffect("effect:cmd:first")).toMatchObject({ status: "done" });
  });

  it("a provider session's credential issued while a command runs is stored once the command commits, and resolves", async () => {
    environmentId(store); // as the host creates it at start, before any command runs
    const config = SwitchyardConfigSchema.parse({});
    const registry = new McpSessionRegistry(store, systemClock, config, createSilentLogger());
    registry.setEndpoint({
      serverName: "switchyard",
      url: "http://127.0.0.1:1/mcp",
      maxWaitMs: 1_000,
      bridge: { command: "switchyard", args: ["mcp-bridge"] },
    });
    const running = command("cmd:running");
    const issued = registry.issue({
      threadId: "thread:1",
      projectId: "project:1",
      providerSessionId: "psess:1",
      providerInstanceId: "alpha",
    });
    const touched = registry.touchProviderSession("psess:1");
    const grant = await issued;
    await touched;
    await running;
    expect(grant).not.toBeNull();
    expect(await registry.resolve(grant!.token)).toMatchObject({
      scope: { kind: "provider_session", providerSessionId: "psess:1" },
    });
  });
});
