/**
 * @switchyard/sdk: what plugin authors import. The spec (re-exported from `@switchyard/spec`),
 * helpers to define plugins, drivers and command groups, and typed errors. The harness kit
 * (turn ledger, runtime-request book, JSON-lines and JSON-RPC channels over a harness process,
 * the adapter shell) is exported here too; the shared ACP adapter in `@switchyard/sdk/acp`.
 * The test lab is its own package, `@switchyard/testkit`.
 */
export * from "@switchyard/spec";
export { definePlugin, defineDriver, defineCommandGroup, defineRoute, defineRoutes } from "./define.js";
export { unsupported, requireCapability, capabilityEnabled } from "./capability-guard.js";
export * from "./harness/index.js";
