import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import type { WorkspaceRecord } from "./records.js";

/** Whether the SQLite driver's native module loads for this Node, and why not. */
export type SqliteDriverProbe = { readonly loads: true } | { readonly loads: false; readonly reason: string };

/**
 * Loads the driver and opens an in-memory database. Imported here, not at the top of a module: a
 * native module built for another Node throws as it loads, and a command that diagnoses the
 * machine (`switchyard doctor`) reports that instead of failing to start.
 */
export async function probeSqliteDriver(): Promise<SqliteDriverProbe> {
  try {
    const Database = (await import("better-sqlite3")).default;
    new Database(":memory:").close();
    return { loads: true };
  } catch (error) {
    return { loads: false, reason: (error as Error).message.split("\n")[0] ?? String(error) };
  }
}

/** The reads a command that is not the home's server makes of its database. */
export interface OfflineDatabase {
  /** The newest migration applied; 0 for a database no store ever migrated. */
  schemaVersion(): number;
  /** The workspaces not yet removed, oldest first; none for a database from before workspaces. */
  unremovedWorkspaces(): WorkspaceRecord[];
}

/**
 * Reads a home's database (which must exist) read-only, without adding a file to the home: SQLite
 * opens a WAL database read-only only with its -shm and -wal beside it, and creates them when they
 * are missing, so a database no server has open is read from a copy in a temporary folder (removed
 * afterwards). Throws what the driver throws for a file that is not a readable database.
 */
export async function readOfflineDatabase<T>(file: string, read: (db: OfflineDatabase) => T): Promise<T> {
  const Database = (await import("better-sqlite3")).default;
  const live = existsSync(`${file}-shm`) && existsSync(`${file}-wal`);
  const copyDir = live ? null : mkdtempSync(join(tmpdir(), "switchyard-offline-db-"));
  try {
    let readFrom = file;
    if (copyDir !== null) {
      readFrom = join(copyDir, "switchyard.db");
      copyFileSync(file, readFrom);
      if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${readFrom}-wal`);
    }
    const db = new Database(readFrom, { readonly: true, fileMustExist: true });
    try {
      return read(offlineReads(db));
    } finally {
      db.close();
    }
  } finally {
    if (copyDir !== null) rmSync(copyDir, { recursive: true, force: true });
  }
}

function offlineReads(db: BetterSqlite3.Database): OfflineDatabase {
  const hasTable = (name: string) =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  return {
    schemaVersion: () =>
      hasTable("schema_migrations")
        ? (db.prepare("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations").get() as { v: number }).v
        : 0,
    unremovedWorkspaces: () =>
      hasTable("workspaces")
        ? (
            db.prepare("SELECT data FROM workspaces WHERE status != 'removed' ORDER BY rowid").all() as {
              data: string;
            }[]
          ).map((row) => JSON.parse(row.data) as WorkspaceRecord)
        : [],
  };
}
