/**
 * Small helpers an adapter test lab needs in every plugin: turn inputs and MCP grants shaped as
 * the host makes them, and what `/proc` shows of the processes a test started (argv and
 * environment, for secrecy checks).
 */
export { mcpGrantFor, turnInput } from "./session-inputs.js";
export { commandLineOf, descendantCommandLines, environmentOf } from "./process-inspection.js";
