import type { RuntimeRequestBook } from "@switchyard/sdk";
import { approvalAnswer, approvalRequestOf, decisionOf, dismissDialog, parseApprovalDialog } from "./pi-approvals.js";
import type { PiTurn } from "./pi-turn.js";
import { PI_DIALOG_METHODS, type PiExtensionUiRequest, type PiExtensionUiResponse } from "./pi-wire.js";

/** What answers an approval: the extension's dialog, in the process that asked. */
export interface PiDialog {
  readonly uiRequestId: string;
  readonly toolCallId: string;
  /** The Pi process that asked (a restarted Pi no longer waits for the answer). */
  readonly generation: number;
}

/** Where a dialog goes: the live turn, the session's warnings, and the Pi process that asked. */
export interface DialogRoute {
  /** The running turn, or null between turns. */
  readonly turn: PiTurn | null;
  readonly generation: number;
  warn(message: string): void;
  answer(response: PiExtensionUiResponse): void;
}

/**
 * Handles one `extension_ui_request`. The Switchyard extension's approval dialog becomes a
 * runtime request of the live turn in the book, and the dialog is answered with the host's
 * decision once it settles (cancelled when dismissed, interrupted or ended; a decline marks the
 * tool call declined). Another extension's dialog is dismissed with a warning, as is an
 * approval outside a turn; `notify` becomes a warning; other fire-and-forget calls are ignored.
 */
export function routeUiRequest(
  request: PiExtensionUiRequest,
  requests: RuntimeRequestBook<PiDialog>,
  route: DialogRoute,
): void {
  if (!PI_DIALOG_METHODS.includes(request.method)) {
    if (request.method === "notify" && typeof request.message === "string") route.warn(`Pi: ${request.message}`);
    return;
  }
  const prompt = parseApprovalDialog(request);
  const turn = route.turn;
  if (prompt === null || turn === null) {
    if (prompt === null)
      route.warn(
        `A Pi extension asked "${request.title ?? request.method}" through a ${request.method} dialog, which Switchyard does not show; it was dismissed.`,
      );
    route.answer(dismissDialog(request.id));
    return;
  }
  const { outcome } = requests.open(turn.turnId, approvalRequestOf(prompt), {
    uiRequestId: request.id,
    toolCallId: prompt.toolCallId,
    generation: route.generation,
  });
  void outcome.then((settled) => {
    const decision = decisionOf(settled);
    if (decision === "decline") turn.declineTool(prompt.toolCallId);
    route.answer(approvalAnswer(request.id, decision));
  });
}
