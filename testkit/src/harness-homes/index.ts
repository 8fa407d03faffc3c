/**
 * Isolated, temporary homes for real harnesses pointed at the scripted model server. Every home
 * lives under `os.tmpdir()`, points HOME, the XDG dirs and TMPDIR into itself and returns a complete `env`
 * (the parent's environment is not inherited), so the user's own config and keys are never used.
 */
export type { HarnessHome, HarnessMcpServer, HarnessSandbox } from "./sandbox.js";
export { DUMMY_API_KEY, INHERITED_ENV_VARS, createHarnessSandbox } from "./sandbox.js";
export type { CodexHome, CodexHomeOptions, CodexMcpServer } from "./codex-home.js";
export { CODEX_API_KEY_ENV, createCodexHome } from "./codex-home.js";
export type { PiApi, PiHome, PiHomeOptions } from "./pi-home.js";
export { createPiHome } from "./pi-home.js";
export type { ClaudeHome, ClaudeHomeOptions } from "./claude-home.js";
export { createClaudeHome } from "./claude-home.js";
export type { OpenCodeHome, OpenCodeHomeOptions } from "./opencode-home.js";
export { createOpenCodeHome } from "./opencode-home.js";
export type { GeminiHome, GeminiHomeOptions } from "./gemini-home.js";
export { createGeminiHome } from "./gemini-home.js";
export type { CursorHome, CursorHomeOptions } from "./cursor-home.js";
export { createCursorHome } from "./cursor-home.js";
