/**
 * @switchyard/plugin-pi: Pi (`@earendil-works/pi-coding-agent`) over `pi --mode rpc`, with a
 * Switchyard-owned Pi extension that bridges the MCP endpoint, carries the orchestration
 * instructions and enforces runtime modes.
 */
import { definePlugin } from "@switchyard/sdk";
import { createPiDriver } from "./pi-adapter.js";

export { createPiAdapter, createPiDriver, type PiAdapter } from "./pi-adapter.js";
export { parseModelTable, probePi } from "./pi-probe.js";
export { PI_HARNESS, findPi, resolvePiBinary, type PiBinary, type PiLookup } from "./pi-launch.js";
export { PI_CAPABILITIES } from "./pi-capabilities.js";
export { piOptionsSchema, reservedFlagsIn, RESERVED_PI_FLAGS, type PiOptions } from "./pi-options.js";
export { PiProviderSession } from "./pi-session.js";
export { writeSwitchyardExtension, extensionSource, EXTENSION_SOURCE_PATH } from "./pi-extension-writer.js";
export {
  APPROVAL_CHOICES,
  APPROVAL_TITLE_PREFIX,
  EXTENSION_ENV,
  type ApprovalPrompt,
} from "./pi-extension/switchyard-extension.js";
export * from "./pi-wire.js";

export default definePlugin({ drivers: [createPiDriver()] });
