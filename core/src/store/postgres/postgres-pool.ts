import pg from "pg";
import { SwitchyardError } from "../../spec/index.js";

/** The PostgreSQL connection pool the store uses; `pg`'s own type stays inside this folder. */
export type PostgresPool = pg.Pool;
/** One connection taken from a {@link PostgresPool}. */
export type PostgresClient = pg.PoolClient;

/** @public */
export interface PostgresPoolOptions {
  /** Most connections open at once (default 10). */
  readonly max?: number;
  /** Shown in `pg_stat_activity` (default `switchyard`). */
  readonly applicationName?: string;
  /** Hears an idle connection's failure (the server restarted, a network cut); the pool drops it. */
  readonly onIdleError?: (error: Error) => void;
}

/** 64-bit integers (sequences, epoch milliseconds) as numbers; past 2^53 they would lose digits. */
function parseBigint(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw new SwitchyardError("internal", `a 64-bit integer from PostgreSQL does not fit a JavaScript number: ${text}`);
  return value;
}

const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID && format !== "binary"
      ? parseBigint
      : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** The URL with its password hidden, for messages and logs. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}

/**
 * A pool of connections to the database at `url` (`postgres://` or `postgresql://`). Connects
 * lazily; a bad URL is refused here with a typed error that never repeats its password.
 */
export function openPostgresPool(url: string, options: PostgresPoolOptions = {}): PostgresPool {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SwitchyardError(
      "config_invalid",
      "The PostgreSQL URL is not a URL: expected postgresql://user:password@host:port/database.",
      {
        url: redactedUrl(url),
      },
    );
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
    throw new SwitchyardError(
      "config_invalid",
      `The PostgreSQL URL must start with postgresql:// (found ${parsed.protocol}//).`,
      { url: redactedUrl(url) },
    );
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? "switchyard",
    types,
  });
  // Without a listener, an idle connection's error (the server restarting) would end the process.
  pool.on("error", (error) => options.onIdleError?.(error));
  return pool;
}
