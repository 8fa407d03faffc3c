import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { ApprovalDecision, ApprovalKind, ApprovalOption, ApprovalRequest, RuntimeMode } from "@switchyard/spec";

/** What an ACP permission option kind means as a Switchyard decision. @public */
export function decisionOfOptionKind(kind: acp.PermissionOptionKind): ApprovalDecision {
  switch (kind) {
    case "allow_once":
      return "accept";
    case "allow_always":
      return "accept_for_session";
    case "reject_once":
    case "reject_always":
      return "decline";
  }
}

/** The options of a permission request, as approval options. @public */
export function approvalOptions(options: readonly acp.PermissionOption[]): ApprovalOption[] {
  return options.map((option) => ({
    id: option.optionId,
    label: option.name,
    decision: decisionOfOptionKind(option.kind),
  }));
}

/** What kind of approval a tool call asks for, from its ACP kind. @public */
export function approvalKindOf(toolKind: acp.ToolKind | null | undefined): ApprovalKind {
  switch (toolKind) {
    case "execute":
      return "command";
    case "read":
    case "search":
      return "file-read";
    case "edit":
    case "delete":
    case "move":
      return "file-change";
    default:
      return "permission";
  }
}

/**
 * The ACP outcome for a Switchyard decision: the first option of the preferred kinds, in order.
 * `cancel`, or a decision the agent offered no option for, answers `cancelled`.
 * @public
 */
export function outcomeForDecision(
  decision: ApprovalDecision,
  options: readonly acp.PermissionOption[],
): acp.RequestPermissionOutcome {
  const preference: Record<ApprovalDecision, acp.PermissionOptionKind[]> = {
    accept: ["allow_once", "allow_always"],
    accept_for_session: ["allow_always", "allow_once"],
    decline: ["reject_once", "reject_always"],
    cancel: [],
  };
  for (const kind of preference[decision]) {
    const option = options.find((candidate) => candidate.kind === kind);
    if (option) return { outcome: "selected", optionId: option.optionId };
  }
  return { outcome: "cancelled" };
}

/**
 * The answer the client gives on its own, without asking the host, under a runtime mode:
 * `full-access` allows everything; `auto-accept-edits` allows file edits (edit, delete, move);
 * otherwise null (ask the host). Only `allow_once` / `allow_always` options are picked, so an
 * agent that offers no allow option is still asked through the host.
 * @public
 */
export function automaticOutcome(
  runtimeMode: RuntimeMode,
  toolKind: acp.ToolKind | null | undefined,
  options: readonly acp.PermissionOption[],
): acp.RequestPermissionOutcome | null {
  const isEdit = toolKind === "edit" || toolKind === "delete" || toolKind === "move";
  if (runtimeMode === "full-access" || (runtimeMode === "auto-accept-edits" && isEdit)) {
    const outcome = outcomeForDecision("accept", options);
    return outcome.outcome === "selected" ? outcome : null;
  }
  return null;
}

/** What a tool call asks to do, for the person deciding: its diff, else its raw input. @public */
export function permissionDetail(toolCall: acp.ToolCallUpdate): string | undefined {
  const diff = toolCall.content?.find((item) => item.type === "diff");
  if (diff && diff.type === "diff") return `--- ${diff.path}\n${diff.newText}`;
  if (toolCall.rawInput !== undefined && toolCall.rawInput !== null) {
    return typeof toolCall.rawInput === "string" ? toolCall.rawInput : JSON.stringify(toolCall.rawInput);
  }
  return undefined;
}

/** A `session/request_permission` as the approval request the host sees. @public */
export function permissionApproval(params: acp.RequestPermissionRequest): ApprovalRequest {
  const detail = permissionDetail(params.toolCall);
  return {
    kind: "approval",
    approvalKind: approvalKindOf(params.toolCall.kind),
    title: params.toolCall.title ?? params.toolCall.toolCallId,
    ...(detail !== undefined ? { detail } : {}),
    options: approvalOptions(params.options),
  };
}
