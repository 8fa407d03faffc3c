import type { HarnessConnector, HarnessId } from "./harness-connector.js";
import { claudeConnector } from "./harnesses/claude-connector.js";
import { codexConnector } from "./harnesses/codex-connector.js";
import { cursorConnector } from "./harnesses/cursor-connector.js";
import { geminiConnector } from "./harnesses/gemini-connector.js";
import { openCodeConnector } from "./harnesses/opencode-connector.js";
import { piConnector } from "./harnesses/pi-connector.js";

/** Every harness `switchyard connect` knows, by id. */
export const HARNESS_CONNECTORS: Readonly<Record<HarnessId, HarnessConnector>> = {
  claude: claudeConnector,
  codex: codexConnector,
  cursor: cursorConnector,
  opencode: openCodeConnector,
  gemini: geminiConnector,
  pi: piConnector,
};
