import { sqliteBackend } from "./sqlite-backend.js";
import type { StoreBackend } from "./store-harness.js";

/**
 * The backends every store contract test runs on (`describe.each(backends)`), each a real
 * database: no stand-in passes this suite.
 *
 * How a backend joins (the PostgreSQL backend of issue 34): write `<name>-backend.ts` beside
 * sqlite-backend.ts, a `StoreBackend` whose `open*` make a database of their own per call (for
 * PostgreSQL, a schema per database on the server CI starts, so test files run in parallel) and
 * whose harness maps each `StoreHarness` method onto the backend's store; list it here. For
 * PostgreSQL the server is the testkit's (`createTestDatabase`, one throw-away server per
 * worker; `core/test/store/postgres/support.ts`), which fails without PostgreSQL installed
 * unless `SWITCHYARD_SKIP_POSTGRES_TESTS=1` (`postgresTestsSkipped()`) leaves it out on
 * purpose. The suite itself does not change.
 */
export const backends: readonly StoreBackend[] = [sqliteBackend()];
