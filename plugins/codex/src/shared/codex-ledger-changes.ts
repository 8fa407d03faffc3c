import type { ToolCallStart, TurnLedger, TurnUsage } from "@switchyard/sdk";

/**
 * A change to a turn's items, as data: what both drivers' pure event mappings return for the
 * kit's {@link TurnLedger}, so the mapping is testable without a session and applied one way.
 */
export type LedgerChange =
  | { readonly type: "message_delta"; readonly itemId: string; readonly text: string }
  | { readonly type: "reasoning_delta"; readonly itemId: string; readonly text: string }
  /** `text` is Codex's whole text; when empty the ledger keeps what streamed. */
  | { readonly type: "message_completed"; readonly itemId: string; readonly text: string }
  | { readonly type: "reasoning_completed"; readonly itemId: string; readonly text: string }
  | { readonly type: "tool_started"; readonly start: ToolCallStart }
  | {
      readonly type: "tool_completed";
      readonly itemId: string;
      readonly status: "completed" | "failed" | "declined";
      readonly output?: string;
    }
  /** The turn's usage so far (replaces what was reported before). */
  | { readonly type: "usage"; readonly usage: TurnUsage };

const LEDGER_CHANGES: ReadonlySet<string> = new Set<LedgerChange["type"]>([
  "message_delta",
  "reasoning_delta",
  "message_completed",
  "reasoning_completed",
  "tool_started",
  "tool_completed",
  "usage",
]);

/** True for a change the ledger applies. */
export function isLedgerChange(change: { readonly type: string }): change is LedgerChange {
  return LEDGER_CHANGES.has(change.type);
}

/** Applies one change to a turn's ledger (which ignores it once the turn ended). */
export function applyLedgerChange(ledger: TurnLedger, change: LedgerChange): void {
  switch (change.type) {
    case "message_delta":
      return ledger.messageDelta(change.itemId, change.text);
    case "reasoning_delta":
      return ledger.reasoningDelta(change.itemId, change.text);
    case "message_completed":
      return ledger.messageCompleted(change.itemId, change.text);
    case "reasoning_completed":
      return ledger.reasoningCompleted(change.itemId, change.text);
    case "tool_started":
      ledger.toolStarted(change.start);
      return;
    case "tool_completed":
      return ledger.toolCompleted(change.itemId, change.status, change.output);
    case "usage":
      return ledger.setUsage(change.usage);
  }
}
