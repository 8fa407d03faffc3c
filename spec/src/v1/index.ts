/**
 * Spec v1: every type under its versioned name. Plugins written for v1 keep these names; the
 * unversioned aliases (`OrchestrationAdapter`…) follow the current version.
 */
export * from "./capabilities.js";
export * from "./events.js";
export * from "./adapter.js";
export * from "./driver.js";
export * from "./commands.js";
export * from "./routes.js";
