/**
 * A throw-away PostgreSQL server for tests (Debian's binaries, a temporary data folder, a
 * loopback port, a generated password), and one database per test file on it.
 */
export type { PostgresServer, StartPostgresServerOptions } from "./postgres-server.js";
export {
  PostgresNotInstalledError,
  findPostgresBinDir,
  postgresTestsSkipped,
  startPostgresServer,
} from "./postgres-server.js";
export { createTestDatabase, sharedPostgresServer, stopSharedPostgresServer } from "./postgres-test-database.js";
