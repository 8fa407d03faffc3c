/**
 * @switchyard/plugin-grok: Grok (xAI's `grok agent stdio`) as a flavor of the shared ACP
 * adapter, plus xAI's extension requests (structured questions, exit-plan-mode).
 */
import { definePlugin } from "@switchyard/sdk";
import { createGrokDriver } from "./grok-adapter.js";

export { createGrokDriver, grokFlavor, grokOptionsSchema, PLAN_RECORDED_FEEDBACK, type GrokOptions } from "./grok-adapter.js";
export { GROK_CAPABILITIES, refineGrokCapabilities } from "./grok-capabilities.js";
export * from "./grok-wire.js";

export default definePlugin({ drivers: [createGrokDriver()] });
