/**
 * @switchyard/sdk: what plugin authors import. The spec (re-exported from
 * `@switchyard/core/spec`), helpers to define plugins and drivers, and typed errors.
 * The harness kit (turn ledger, runtime-request book, JSON-lines and JSON-RPC channels over a
 * harness process, the adapter shell) is exported here too.
 * The test lab lives in `@switchyard/sdk/testkit`; the shared ACP adapter in `@switchyard/sdk/acp`.
 */
export * from "@switchyard/core/spec";
export { definePlugin, defineDriver } from "./define.js";
export { unsupported, requireCapability, capabilityEnabled } from "./capability-guard.js";
export * from "./harness/index.js";
