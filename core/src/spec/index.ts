/**
 * The provider spec, which lives in its own zero-dependency package, `@switchyard/spec`. Core
 * modules import it from here; `@switchyard/core/spec` stays as an alias for older plugins.
 */
export * from "@switchyard/spec";
