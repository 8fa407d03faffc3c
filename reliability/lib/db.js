// Reads a server's SQLite file from outside, read-only, while the server runs or after it died:
// the event log is the record the figures are counted from.
import Database from "better-sqlite3";
import { join } from "node:path";

/** The database file of a home. */
export function dbFile(home) {
  return join(home, "switchyard.db");
}

/** Runs `fn(db)` on a read-only connection and closes it. */
export function readDb(home, fn) {
  const db = new Database(dbFile(home), { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    return fn(db);
  } finally {
    db.close();
  }
}

/** One value of a query (the first column of the first row). */
export function scalar(home, sql, ...params) {
  return readDb(home, (db) =>
    db
      .prepare(sql)
      .pluck()
      .get(...params),
  );
}

const TERMINAL = new Set(["completed", "failed", "cancelled", "interrupted"]);

/**
 * How many times each run was written with a terminal status, from the event log itself: a
 * run record changing to a terminal status counts once; rewriting it with the same terminal
 * status (a metadata update) does not.
 */
export function terminalWrites(home) {
  return readDb(home, (db) => {
    const counts = new Map();
    const last = new Map();
    const rows = db
      .prepare(
        "SELECT entity_id, json_extract(data, '$.status') AS status FROM events WHERE entity = 'run' ORDER BY sequence",
      )
      .all();
    for (const { entity_id: id, status } of rows) {
      if (TERMINAL.has(status) && last.get(id) !== status) counts.set(id, (counts.get(id) ?? 0) + 1);
      last.set(id, status);
    }
    return counts;
  });
}

export function isTerminal(status) {
  return TERMINAL.has(status);
}
