import type { ApprovalDecision, ApprovalOption, ApprovalRequest, RuntimeRequestOutcome } from "@switchyard/sdk";
import {
  APPROVAL_CHOICES,
  APPROVAL_TITLE_PREFIX,
  type ApprovalChoice,
  type ApprovalPrompt,
} from "./pi-extension/switchyard-extension.js";
import type { PiExtensionUiRequest, PiExtensionUiResponse } from "./pi-wire.js";

/** The options every Switchyard approval offers, in the extension's order. */
const OPTIONS: readonly ApprovalOption[] = [
  { id: "accept", label: "Allow once", decision: "accept" },
  { id: "accept_for_session", label: "Allow for this session", decision: "accept_for_session" },
  { id: "decline", label: "Decline", decision: "decline" },
];

/**
 * Reads the extension's approval dialog (a `select` whose title is the prefix plus JSON), or
 * null for any other extension's dialog.
 */
export function parseApprovalDialog(request: PiExtensionUiRequest): ApprovalPrompt | null {
  if (
    request.method !== "select" ||
    typeof request.title !== "string" ||
    !request.title.startsWith(APPROVAL_TITLE_PREFIX)
  )
    return null;
  try {
    const prompt = JSON.parse(request.title.slice(APPROVAL_TITLE_PREFIX.length)) as Partial<ApprovalPrompt>;
    if (
      typeof prompt.toolCallId !== "string" ||
      typeof prompt.toolName !== "string" ||
      typeof prompt.title !== "string"
    )
      return null;
    const kind =
      prompt.approvalKind === "command" || prompt.approvalKind === "file-change" ? prompt.approvalKind : "permission";
    return {
      toolCallId: prompt.toolCallId,
      toolName: prompt.toolName,
      approvalKind: kind,
      title: prompt.title,
      ...(typeof prompt.detail === "string" ? { detail: prompt.detail } : {}),
    };
  } catch {
    return null;
  }
}

/** The runtime request the host sees for an approval dialog. */
export function approvalRequestOf(prompt: ApprovalPrompt): ApprovalRequest {
  return {
    kind: "approval",
    approvalKind: prompt.approvalKind,
    title: prompt.title,
    ...(prompt.detail !== undefined ? { detail: prompt.detail } : {}),
    options: OPTIONS,
  };
}

/** The decision the host made, or null when the request was dismissed or cancelled (the dialog is then cancelled too). */
export function decisionOf(outcome: RuntimeRequestOutcome): ApprovalDecision | null {
  return outcome.kind === "answered" && outcome.response.kind === "approval" ? outcome.response.decision : null;
}

/** The dialog answer for a decision: the matching choice, or a cancellation. */
export function approvalAnswer(uiRequestId: string, decision: ApprovalDecision | null): PiExtensionUiResponse {
  const choice =
    decision === null ? undefined : (APPROVAL_CHOICES as readonly string[]).find((value) => value === decision);
  return choice === undefined
    ? { type: "extension_ui_response", id: uiRequestId, cancelled: true }
    : { type: "extension_ui_response", id: uiRequestId, value: choice as ApprovalChoice };
}

/** Dismisses a dialog the adapter cannot show. */
export function dismissDialog(uiRequestId: string): PiExtensionUiResponse {
  return { type: "extension_ui_response", id: uiRequestId, cancelled: true };
}
