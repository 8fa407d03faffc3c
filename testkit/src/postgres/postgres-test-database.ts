import { startPostgresServer, type PostgresServer } from "./postgres-server.js";

let shared: Promise<PostgresServer> | null = null;

/**
 * One server per test process (a vitest worker), started on the first call and stopped by
 * {@link stopSharedPostgresServer} or, if the worker dies first, by the server's watchdog.
 * Throws `PostgresNotInstalledError` (a failing test, not a skipped one) when PostgreSQL is
 * missing; test files that may skip use `describe.skipIf(postgresTestsSkipped())`.
 * @public
 */
export function sharedPostgresServer(): Promise<PostgresServer> {
  shared ??= startPostgresServer().catch((error: unknown) => {
    shared = null;
    throw error;
  });
  return shared;
}

/**
 * A fresh, empty database on the worker's shared server (one per test file, or per test that
 * wants its own); answers its connection string.
 * @public
 */
export async function createTestDatabase(): Promise<string> {
  return (await sharedPostgresServer()).createDatabase();
}

/** Stops the worker's shared server, if one was started (a test file's `afterAll`). @public */
export async function stopSharedPostgresServer(): Promise<void> {
  const server = shared;
  shared = null;
  if (server) await (await server).stop();
}
