import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * What a one-prompt-per-process harness can do. It cannot steer or fork, so the shared policy
 * degrades: steering interrupts and restarts the turn, forks carry portable context. Anything
 * left out is read as unsupported.
 */
export const TEMPLATE_CAPABILITIES: CapabilityDeclaration = {
  turns: {
    emitsTurnStarted: true,
    interrupt: true,
    steeringByInterruptRestart: true,
    terminalStatusQuality: "strong",
  },
  identity: { nativeThreadIds: "none", nativeTurnIds: "none", nativeItemIds: "none" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};
