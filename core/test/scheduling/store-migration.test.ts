import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import { Store } from "../../src/store/store.js";

describe("the scheduled-task tables' migration", () => {
  it("upgrades a database of the versions before it (below 4) in place, keeping what it holds, and rebuilds the new projections from the log", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-sched-migration-"));
    try {
      const file = join(dir, "switchyard.db");
      const old = new Database(file);
      migrate(
        old,
        MIGRATIONS.filter((migration) => migration.version < 4),
      );
      old.prepare("INSERT INTO settings (key, value) VALUES ('environment_id', 'env_kept')").run();
      old.close();

      const store = new Store(file);
      try {
        const versions = store.db.prepare("SELECT version FROM schema_migrations ORDER BY version").all() as {
          version: number;
        }[];
        expect(versions).toContainEqual({ version: 4 });
        expect(versions.filter((row) => row.version < 4)).toEqual(
          MIGRATIONS.filter((m) => m.version < 4)
            .map((m) => ({ version: m.version }))
            .sort((a, b) => a.version - b.version),
        );
        expect(store.db.prepare("SELECT value FROM settings WHERE key = 'environment_id'").get()).toEqual({
          value: "env_kept",
        });
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
