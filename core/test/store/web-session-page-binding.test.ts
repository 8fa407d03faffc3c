import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import { Store } from "../../src/store/store.js";

describe("web UI sessions bound to their page and origin (migration 20)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-web-session-binding-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("ends the sessions made before it, which have no page secret to prove them, and leaves codes and ended sessions as they were", () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 20),
    );
    const insert = old.prepare(
      "INSERT INTO web_sessions (id, secret_hash, kind, credential_id, created_at, expires_at, last_used_at, ended_at) VALUES (?, ?, ?, 'cred', 1, 9e15, 1, ?)",
    );
    insert.run("ws_live", "a".repeat(64), "session", null);
    insert.run("ws_ended", "b".repeat(64), "session", 5);
    insert.run("ws_code", "c".repeat(64), "code", null);
    old.close();

    const store = new Store(file);
    try {
      const rows = store.db
        .prepare("SELECT id, ended_at, page_secret_hash, origin FROM web_sessions ORDER BY id")
        .all() as { id: string; ended_at: number | null; page_secret_hash: null; origin: null }[];
      expect(
        rows.map((row) => [
          row.id,
          row.ended_at === null ? null : row.ended_at > 5 ? "now" : row.ended_at,
          row.page_secret_hash,
          row.origin,
        ]),
      ).toEqual([
        ["ws_code", null, null, null],
        ["ws_ended", 5, null, null],
        ["ws_live", "now", null, null],
      ]);
    } finally {
      store.close();
    }
  });
});
