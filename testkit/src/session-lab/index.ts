/**
 * The adapter test lab every plugin shares: `createSessionLab` (a plugin's lab calls it with its
 * home, its model's stand-in and its adapter factory), session and turn inputs and MCP grants
 * shaped as the host makes them, driver options validated as the host validates them, and what
 * `/proc` shows of the processes a test started (argv and environment, for secrecy checks).
 */
export {
  createSessionLab,
  openRecordedSession,
  type RecordedSession,
  type SessionLab,
  type SessionLabFixtures,
} from "./session-lab.js";
export { mcpGrantFor, openSessionInput, turnInput } from "./session-inputs.js";
export { validateDriverOptions } from "./driver-options.js";
export {
  commandLineOf,
  descendantCommandLines,
  environmentOf,
  environmentVariablesOf,
  isRunning,
} from "./process-inspection.js";
