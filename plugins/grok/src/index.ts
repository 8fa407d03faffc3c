/**
 * @switchyard/plugin-grok: Grok (xAI's `grok agent stdio`) as a flavor of the shared ACP
 * adapter, plus xAI's extension requests (structured questions, exit-plan-mode).
 */
import { definePlugin } from "@switchyard/sdk";
import { createGrokDriver } from "./grok-adapter.js";

export { createGrokDriver, grokFlavor, grokOptionsSchema, type GrokOptions } from "./grok-adapter.js";
export { PLAN_RECORDED_FEEDBACK, XAI_EXTENSIONS } from "./grok-extensions.js";
export { GROK_CAPABILITIES, refineGrokCapabilities } from "./grok-capabilities.js";
export * from "./grok-wire.js";

export default definePlugin({ drivers: [createGrokDriver()] });
