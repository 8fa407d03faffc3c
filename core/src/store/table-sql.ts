import { SwitchyardError } from "../spec/index.js";

// The SQL surface of the table modules (core/src/store/tables): the named queries a backend
// implements, written once. No driver type crosses it.

/** Which SQL a backend speaks, for the few queries that need a variant of their own. */
export type SqlDialect = "sqlite" | "postgresql";

/**
 * Runs a table module's SQL on a backend. The SQL text uses `?` placeholders (the SQLite store
 * runs it as written; the PostgreSQL store numbers them `$1`, `$2`… outside quotes). Every call
 * answers a promise; a backend with synchronous statements runs the statement in the caller's
 * turn, before the promise is returned, so statements keep the order of the calls.
 *
 * Inside a unit of work (a command's transaction) the SQL runs on that unit's connection after
 * its buffered writes reach the database; outside one, on what has committed (a write then
 * runs as its own transaction).
 */
export interface TableSql {
  readonly dialect: SqlDialect;
  /** Every row the SQL answers. */
  all<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** The first row the SQL answers, or undefined. */
  get<Row>(sql: string, params?: readonly unknown[]): Promise<Row | undefined>;
  /** Runs a writing statement; `changes` is how many rows it inserted, updated or deleted. */
  run(sql: string, params?: readonly unknown[]): Promise<{ readonly changes: number }>;
  /**
   * Runs a writing statement before returning, for the few writers whose callers are
   * synchronous by contract (issuing a client token, a sign-in code, a grant, adding a link:
   * the CLI's own host, the web UI's and tests' set-up). A backend whose statements are round
   * trips refuses it with {@link MissingStoreCapabilityError}.
   */
  runNow(sql: string, params?: readonly unknown[]): { readonly changes: number };
  /** Whether an error of `run` is a unique constraint refusing the row (a key already taken). */
  isUniqueViolation(error: unknown): boolean;
}

/** What a table module is opened over: a store, or a unit of work of one. */
export interface TableHost {
  readonly tableSql: TableSql;
}

/** The constructor every table module has. */
export type TableModule<T> = new (host: TableHost) => T;

/**
 * A query needs something this backend does not have (SQLite's FTS5 index opened over another
 * store, a synchronous write on PostgreSQL): refused by name rather than failing in the
 * database with a syntax error.
 */
export class MissingStoreCapabilityError extends SwitchyardError {
  constructor(
    readonly capability: string,
    readonly dialect: SqlDialect,
  ) {
    super("unsupported_capability", `The ${dialect} store has no ${capability} yet.`, { capability, dialect });
    this.name = "MissingStoreCapabilityError";
  }
}

/** A 0/1 flag column read as false: `column = 0` on SQLite (its partial indexes say so), `NOT column` on PostgreSQL (boolean). */
export function isFalse(dialect: SqlDialect, column: string): string {
  return dialect === "postgresql" ? `NOT ${column}` : `${column} = 0`;
}

const numbered = new Map<string, string>();

/**
 * `?` placeholders numbered `$1`, `$2`… for PostgreSQL, skipping quoted strings and
 * identifiers (a `?` there is text). Cached by the SQL, which is a table module's constant.
 */
export function numberedPlaceholders(sql: string): string {
  let text = numbered.get(sql);
  if (text !== undefined) return text;
  let n = 0;
  let quote: string | null = null;
  text = "";
  for (const char of sql) {
    if (quote !== null) {
      if (char === quote) quote = null;
      text += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      text += char;
    } else text += char === "?" ? `$${++n}` : char;
  }
  numbered.set(sql, text);
  return text;
}
