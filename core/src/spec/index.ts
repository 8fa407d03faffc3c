/**
 * The provider spec, which lives in its own zero-dependency package, `@switchyard/spec`. Core
 * modules import it from here; `@switchyard/core/spec` stays as an alias for older plugins.
 * Deprecated as a package entry: import `@switchyard/spec` (a plugin: `@switchyard/sdk`). Each
 * export keeps the release tag the spec gives it.
 */
export * from "@switchyard/spec";
