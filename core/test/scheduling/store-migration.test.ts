import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import { Store } from "../../src/store/store.js";

describe("the scheduled-task tables' migration", () => {
  it("upgrades a database without the scheduling tables (version 2 here; another branch takes 3) in place, keeping what it holds, and rebuilds the new projections from the log", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-sched-migration-"));
    try {
      const file = join(dir, "switchyard.db");
      const old = new Database(file);
      migrate(old, MIGRATIONS.filter((migration) => migration.version <= 2));
      old.prepare("INSERT INTO settings (key, value) VALUES ('environment_id', 'env_kept')").run();
      old.close();

      const store = new Store(file);
      try {
        expect(store.db.prepare("SELECT version FROM schema_migrations ORDER BY version").all()).toEqual([{ version: 1 }, { version: 2 }, { version: 4 }]);
        expect(store.db.prepare("SELECT value FROM settings WHERE key = 'environment_id'").get()).toEqual({ value: "env_kept" });
        const now = new Date().toISOString();
        store.transaction(() =>
          store.append(
            null,
            [
              {
                entity: "scheduledTrigger",
                record: {
                  id: "trigger:t:1",
                  scheduledTaskId: "t",
                  kind: "interval",
                  scheduledFor: now,
                  catchUp: false,
                  coalesced: 0,
                  outcome: "skipped",
                  reason: "overlap",
                  detail: null,
                  runId: null,
                  threadId: null,
                  dedupeKey: null,
                  signatureDigest: null,
                  request: null,
                  createdAt: now,
                },
              },
            ],
            now,
          ),
        );
        store.db.exec("DELETE FROM scheduled_triggers");
        expect(store.rebuildProjections()).toBe(1);
        expect(store.get("scheduledTrigger", "trigger:t:1")).toMatchObject({ outcome: "skipped", reason: "overlap" });
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
