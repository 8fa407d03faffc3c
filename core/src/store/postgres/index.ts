/**
 * The PostgreSQL backend's groundwork (issue 34): the pool, the schema and its migrations, and
 * the ordered event reader. The only folder of core/src that imports `pg` (a dependency rule
 * holds it). The store itself (`PostgresEventStore`) passes the store contract suite, the
 * engine's commands included: it runs the engine's units of work (`UnitOfWorkStore`).
 */
export type { MigratePostgresOptions, PostgresMigration } from "./postgres-migrations.js";
export { MIGRATION_LOCK_KEY, POSTGRES_MIGRATIONS, migratePostgres } from "./postgres-migrations.js";
export type { PostgresClient, PostgresPool, PostgresPoolOptions } from "./postgres-pool.js";
export { openPostgresPool, redactedUrl } from "./postgres-pool.js";
export type { OrderedRead } from "./ordered-event-reader.js";
export { OrderedEventReader } from "./ordered-event-reader.js";
export { POSTGRES_BASELINE_SQL } from "./postgres-schema.js";
export type {
  EffectToEnqueue,
  PostgresAsyncUnitOfWork,
  PostgresSyncUnitOfWork,
  PostgresUnitOfWork,
} from "./postgres-event-store.js";
export { openPostgresEventStore, PostgresEventStore } from "./postgres-event-store.js";
