import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordUpsert } from "../../src/store/ports.js";
import {
  Store,
  WAL_AUTOCHECKPOINT_PAGES,
  WAL_BACKSTOP_FRAMES,
  WAL_CHECKPOINT_FALLBACK_WARNING,
} from "../../src/store/store.js";
import { CHECKPOINT_EVERY_COMMITS } from "../../src/store/wal-checkpointer.js";

const NOW = "2026-12-01T00:00:00.000Z";
const WRITER = fileURLToPath(new URL("../fixtures/store-writer.mjs", import.meta.url));

function item(n: number): RecordUpsert {
  return {
    entity: "item",
    record: {
      id: `item:${n}`,
      threadId: `thread:${n % 7}`,
      runId: null,
      attemptId: null,
      position: n,
      kind: "assistant_message",
      status: "completed",
      text: `message ${n} `.repeat(40),
      data: {},
      createdBy: "provider",
      creationSource: "provider",
      createdAt: NOW,
      updatedAt: NOW,
    },
  } as unknown as RecordUpsert;
}

function commit(store: Store, from: number, count: number): void {
  for (let n = from; n < from + count; n += 1) store.transaction(() => store.append(null, [item(n)], NOW));
}

describe("WAL checkpoints on a worker thread", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-checkpointer-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("never checkpoints on the writing connection; the worker copies the WAL back and it restarts instead of growing", async () => {
    const file = join(dir, "switchyard.db");
    const store = new Store(file);
    try {
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(WAL_BACKSTOP_FRAMES);
      commit(store, 1, CHECKPOINT_EVERY_COMMITS * 2);
      const report = await store.checkpointer!.checkpointNow();
      expect(report).not.toBeNull();
      expect(report!.copied).toBeGreaterThan(0);
      expect(report!.copied).toBe(report!.frames);
      // After a complete checkpoint the next writer starts the WAL over: it holds what one round
      // of commits wrote, however many rounds ran before.
      const frames: number[] = [];
      for (let round = 0; round < 6; round += 1) {
        commit(store, 10_000 + round * CHECKPOINT_EVERY_COMMITS * 2, CHECKPOINT_EVERY_COMMITS * 2);
        const after = await store.checkpointer!.checkpointNow();
        expect(after!.copied).toBe(after!.frames);
        frames.push(after!.frames);
      }
      expect(Math.max(...frames)).toBeLessThanOrEqual(Math.min(...frames) * 1.5);
      // The file is cut back once the WAL restarts (journal_size_limit).
      expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(64 * 1024 * 1024);
      expect(store.checkpointer!.active).toBe(true);
    } finally {
      store.close();
    }
    // Closing is the last connection's: SQLite checkpoints and removes the WAL, and every row is there.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const reopened = new Store(file);
    try {
      expect(reopened.count("item", "1 = 1")).toBe(CHECKPOINT_EVERY_COMMITS * 2 * 7);
      expect(reopened.db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      reopened.close();
    }
  });

  it("keeps the WAL bounded through a long run of commits that never yields to the worker", () => {
    const file = join(dir, "switchyard.db");
    const store = new Store(file);
    try {
      // About six frames each: without the backstop these would leave ~24,000 frames in the WAL.
      commit(store, 1, 4_000);
      const frames = (store.db.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0]!.log;
      expect(frames).toBeLessThanOrEqual(WAL_BACKSTOP_FRAMES + 100);
      expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(80 * 1024 * 1024);
    } finally {
      store.close();
    }
  });

  it("says so in a process warning when the worker fails, and goes back to automatic checkpoints", async () => {
    const file = join(dir, "switchyard.db");
    const store = new Store(file);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      // The worker opens the file by name (it must exist): moved away, its connection fails.
      renameSync(file, `${file}.moved`);
      commit(store, 1, 3);
      expect(await store.checkpointer!.checkpointNow()).toBeNull();
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.checkpointer!.active).toBe(false);
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(WAL_AUTOCHECKPOINT_PAGES);
      expect(warnings.map((warning) => (warning as Error & { code?: string }).code)).toEqual([
        WAL_CHECKPOINT_FALLBACK_WARNING,
      ]);
      expect(warnings[0]!.message).toContain(file);
      // Commits go on.
      commit(store, 4, 3);
      expect(store.get("item", "item:6")).not.toBeNull();
    } finally {
      process.off("warning", onWarning);
      store.close();
    }
  });

  it("an in-memory store checkpoints automatically and starts no worker", () => {
    const store = new Store(":memory:");
    try {
      expect(store.checkpointer).toBeNull();
    } finally {
      store.close();
    }
  });

  it("loses no acknowledged commit when the process is killed with SIGKILL while checkpoints run", async () => {
    const file = join(dir, "switchyard.db");
    let lastAck = 0;
    let checkpoints = 0;
    const writer = spawn(process.execPath, [WRITER, file, "1"], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((resolve) => writer.on("exit", resolve));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${checkpoints} checkpoints after ${lastAck} commits`)),
        30_000,
      );
      createInterface({ input: writer.stdout! }).on("line", (line) => {
        const [kind, value] = line.split(" ");
        if (kind === "ack") lastAck = Number(value);
        if (kind === "checkpoint" && Number(value) > 0) checkpoints += 1;
        // Killed mid-stream, a few commits after the third finished checkpoint: the next is under way.
        if (checkpoints >= 3 && lastAck % 64 === 17 && writer.exitCode === null) {
          clearTimeout(timer);
          writer.kill("SIGKILL");
          resolve();
        }
      });
    });
    await exited;
    const store = new Store(file);
    try {
      expect(store.db.pragma("integrity_check", { simple: true })).toBe("ok");
      const missing = (
        store.db.prepare("SELECT COUNT(*) AS n FROM items WHERE CAST(substr(id, 6) AS INTEGER) <= ?").get(lastAck) as {
          n: number;
        }
      ).n;
      expect(missing).toBe(lastAck);
      expect(store.get("item", `item:${lastAck}`)).not.toBeNull();
    } finally {
      store.close();
    }
  });
});
