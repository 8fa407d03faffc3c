/**
 * Switchyard provider spec v1: the contract between the host and provider plugins.
 * Dependency-free on purpose; the sdk re-exports it for plugin authors.
 */
export * from "./version.js";
export * from "./modes.js";
export * from "./capabilities.js";
export * from "./errors.js";
export * from "./events.js";
export * from "./adapter.js";
export * from "./driver.js";
export * from "./stderr-tail.js";
