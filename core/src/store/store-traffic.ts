/**
 * The store's SQL traffic over some work, counted from the statements the connection ran (the
 * store's `onStatement` option): figures that do not depend on the machine's load, for the
 * bench (`bench/store-traffic.bench.js`) and the store port's goals (issue 33).
 */
export interface StoreTraffic {
  /** Every statement run, transaction control (BEGIN, SAVEPOINT, RELEASE, COMMIT, ROLLBACK) included. */
  readonly statements: number;
  /** Statements run while a transaction was open, not counting its BEGIN and its COMMIT or ROLLBACK. */
  readonly inTransactions: number;
  /** Transactions that committed. */
  readonly commits: number;
  /** Transactions that rolled back whole (a `ROLLBACK TO` a savepoint is a statement inside one). */
  readonly rollbacks: number;
  /** The statements inside the largest transaction (counted as `inTransactions` counts them). */
  readonly largestTransaction: number;
  /**
   * Reads (SELECT, and PRAGMA without `=`) inside a transaction identical, SQL and bound values,
   * to a read earlier in the same transaction: what an identity map for the transaction would save.
   * Compared as SQLite expands them, which shortens a bound string past 32 bytes to those 32 and
   * its length (better-sqlite3 builds with SQLITE_TRACE_SIZE_LIMIT=32): two ids alike that far
   * would count as one. Checked against the exact parameters for a delegation (December 2026):
   * the same count.
   */
  readonly repeatedReads: number;
}

/** How a statement's first keyword counts. */
type StatementKind = "begin" | "commit" | "rollback" | "read" | "other";

function kindOf(sql: string): StatementKind {
  const keyword = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  switch (keyword) {
    case "BEGIN":
      return "begin";
    case "COMMIT":
    case "END":
      return "commit";
    case "ROLLBACK":
      // ROLLBACK TO undoes a savepoint; the transaction stays open.
      return /^\s*ROLLBACK\s+(TRANSACTION\s+)?TO\b/i.test(sql) ? "other" : "rollback";
    case "SELECT":
      return "read";
    case "PRAGMA":
      return sql.includes("=") ? "other" : "read";
    default:
      return "other";
  }
}

/**
 * Counts a connection's statements as {@link StoreTraffic}. Pass {@link observe} as the store's
 * `onStatement`; read {@link snapshot} around the work to count (or {@link reset} before it).
 */
export class StoreTrafficCounter {
  private statements = 0;
  private inTransactions = 0;
  private commits = 0;
  private rollbacks = 0;
  private largestTransaction = 0;
  private repeatedReads = 0;
  /** The open transaction's statements so far and the reads it ran; null outside one. */
  private open: { statements: number; reads: Set<string> } | null = null;

  /** The store's `onStatement`: bound, so it can be passed as it is. */
  readonly observe = (sql: string): void => {
    this.statements += 1;
    const kind = kindOf(sql);
    if (kind === "begin") {
      this.open = { statements: 0, reads: new Set() };
      return;
    }
    if (this.open === null) return;
    if (kind === "commit" || kind === "rollback") {
      if (kind === "commit") this.commits += 1;
      else this.rollbacks += 1;
      this.largestTransaction = Math.max(this.largestTransaction, this.open.statements);
      this.open = null;
      return;
    }
    this.inTransactions += 1;
    this.open.statements += 1;
    if (kind === "read") {
      if (this.open.reads.has(sql)) this.repeatedReads += 1;
      else this.open.reads.add(sql);
    }
  };

  /** The counts so far (a transaction still open counts in `inTransactions`, not yet in `largestTransaction`). */
  snapshot(): StoreTraffic {
    return {
      statements: this.statements,
      inTransactions: this.inTransactions,
      commits: this.commits,
      rollbacks: this.rollbacks,
      largestTransaction: this.largestTransaction,
      repeatedReads: this.repeatedReads,
    };
  }

  /** Starts the counts over (an open transaction's statements before now are forgotten). */
  reset(): void {
    this.statements = 0;
    this.inTransactions = 0;
    this.commits = 0;
    this.rollbacks = 0;
    this.largestTransaction = 0;
    this.repeatedReads = 0;
    if (this.open !== null) this.open = { statements: 0, reads: new Set() };
  }
}
