import { postgresTestsSkipped } from "@switchyard/testkit";
import { postgresBackend } from "./postgres-backend.js";
import { sqliteBackend } from "./sqlite-backend.js";
import type { StoreBackend } from "./store-harness.js";

/**
 * The backends every store contract test runs on (`describe.each(backends)`), each a real
 * database: no stand-in passes this suite.
 *
 * How a backend joins: write `<name>-backend.ts` beside sqlite-backend.ts, a `StoreBackend`
 * whose `open*` make a database of their own per call and whose harness maps each
 * `StoreHarness` method onto the backend's store, saying in `has` what it cannot serve yet;
 * list it here. PostgreSQL's server is the testkit's (`createTestDatabase`, one throw-away
 * server per worker), which fails without PostgreSQL installed unless
 * `SWITCHYARD_SKIP_POSTGRES_TESTS=1` (`postgresTestsSkipped()`) leaves it out on purpose.
 */
export const backends: readonly StoreBackend[] = [
  sqliteBackend(),
  ...(postgresTestsSkipped() ? [] : [postgresBackend()]),
];
