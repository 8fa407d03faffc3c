/**
 * The shared policy: one module of pure functions over projections and capabilities that
 * decides, per request, how a message is delivered, how a fork is carried out, how a thread's
 * conversation goes on in a provider session that opens (resumed or handed over), which modes a
 * child or target runs with, and what can be stopped; and, from the same functions, what
 * `orchestrator_capabilities` says the policy does on each provider. Every decision reports
 * what was asked and what is done.
 */
export * from "./message-dispatch.js";
export * from "./fork.js";
export * from "./session-continuation.js";
export * from "./modes.js";
export * from "./stopping.js";
export * from "./provider-conduct.js";
export * from "./profile-support.js";
