/**
 * The shared policy: one module of pure functions over projections and capabilities that
 * decides, per request, how a message is delivered, how a fork is carried out and which modes
 * a child or target runs with. Every decision reports what was asked and what is done.
 */
export * from "./message-dispatch.js";
export * from "./fork.js";
export * from "./modes.js";
