import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../../src/store/migrations.js";
import { Store } from "../../src/store/store.js";

describe("the thread listing's index (migration 17)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-thread-listing-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("replaces threads_project on an older database, and the listing's count reads the index alone", () => {
    const file = join(dir, "switchyard.db");
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version < 17),
    );
    old.close();

    const store = new Store(file);
    try {
      const indexes = store.db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'threads' AND sql IS NOT NULL ORDER BY name",
        )
        .pluck()
        .all();
      expect(indexes).toContain("threads_listing");
      expect(indexes).not.toContain("threads_project");
      const plan = (sql: string) =>
        (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all("project") as { detail: string }[])
          .map((row) => row.detail)
          .join("; ");
      expect(
        plan("SELECT COUNT(*) FROM threads WHERE project_id = ? AND deleted = 0 AND relationship != 'subagent'"),
      ).toMatch(/USING COVERING INDEX threads_listing/);
      expect(
        plan(
          "SELECT data FROM threads WHERE project_id = ? AND deleted = 0 AND relationship != 'subagent' ORDER BY created_at DESC, rowid DESC LIMIT 20",
        ),
      ).toMatch(/USING INDEX threads_listing/);
    } finally {
      store.close();
    }
  });
});
