import type {
  ApprovalDecision,
  ApprovalKind,
  ApprovalRequest,
  RuntimeRequestOutcome,
  UserInputRequest,
} from "@switchyard/sdk";
import { mcpToolOf } from "./opencode-items.js";
import type { PermissionReply, PermissionRequest, QuestionRequest } from "./opencode-wire.js";

/** What a session needs to answer OpenCode for a runtime request. */
export type OpenCodeRequestHandle =
  | { readonly kind: "permission"; readonly requestID: string; readonly callID: string | null }
  | { readonly kind: "question"; readonly requestID: string; readonly questionIds: readonly string[] };

/** The feedback OpenCode passes to the model when the user declines (it then carries on). */
export const DECLINED_FEEDBACK =
  "The user declined this request. Do not retry it; continue without it or ask what to do instead.";

const APPROVAL_KINDS: Readonly<Record<string, ApprovalKind>> = {
  bash: "command",
  edit: "file-change",
  write: "file-change",
  patch: "file-change",
  multiedit: "file-change",
  apply_patch: "file-change",
  read: "file-read",
  list: "file-read",
  glob: "file-read",
  grep: "file-read",
  external_directory: "file-read",
};

/** An OpenCode `permission.asked` as a Switchyard approval request. */
export function approvalRequestOf(request: PermissionRequest, serverKeys: readonly string[]): ApprovalRequest {
  const command = typeof request.metadata["command"] === "string" ? request.metadata["command"] : null;
  const mcp = mcpToolOf(request.permission, serverKeys);
  const title =
    command ?? (mcp !== null ? `${mcp.server}/${mcp.tool}` : `${request.permission}: ${request.patterns.join(" ")}`);
  const diff = typeof request.metadata["diff"] === "string" ? request.metadata["diff"] : null;
  return {
    kind: "approval",
    approvalKind: APPROVAL_KINDS[request.permission] ?? "permission",
    title: title.slice(0, 500),
    ...(diff !== null ? { detail: diff } : {}),
    options: [
      { id: "once", label: "Allow once", decision: "accept" },
      {
        id: "always",
        label: `Always allow ${request.always.join(", ") || request.permission} in this session`,
        decision: "accept_for_session",
      },
      { id: "reject-feedback", label: "Decline (the agent carries on)", decision: "decline" },
      { id: "reject", label: "Decline and stop the turn", decision: "cancel" },
    ],
  };
}

/**
 * An approval's outcome as OpenCode's reply: `decline` rejects with feedback (the model carries
 * on without it), `cancel`, a dismissal or the end of the turn reject without (OpenCode stops).
 */
export function permissionReplyOf(outcome: RuntimeRequestOutcome): {
  readonly reply: PermissionReply;
  readonly message?: string;
} {
  if (outcome.kind !== "answered" || outcome.response.kind !== "approval") return { reply: "reject" };
  const decision: ApprovalDecision = outcome.response.decision;
  switch (decision) {
    case "accept":
      return { reply: "once" };
    case "accept_for_session":
      return { reply: "always" };
    case "decline":
      return { reply: "reject", message: DECLINED_FEEDBACK };
    case "cancel":
    default:
      return { reply: "reject" };
  }
}

/** An OpenCode `question.asked` (its `question` tool) as a user-input request; question ids are `q1`, `q2`… */
export function userInputRequestOf(request: QuestionRequest): {
  readonly request: UserInputRequest;
  readonly questionIds: string[];
} {
  const questionIds = request.questions.map((_, index) => `q${index + 1}`);
  return {
    questionIds,
    request: {
      kind: "user_input",
      blocking: true,
      questions: request.questions.map((question, index) => ({
        id: questionIds[index]!,
        header: question.header,
        question: question.question,
        options: question.options.map((option) => ({ label: option.label, description: option.description })),
        ...(question.multiple === true ? { multiSelect: true } : {}),
      })),
    },
  };
}

/** The host's answers in OpenCode's shape: one list of chosen labels (or free text) per question, in order. */
export function questionAnswersOf(
  answers: Readonly<Record<string, string | readonly string[]>>,
  questionIds: readonly string[],
): string[][] {
  return questionIds.map((id) => {
    const answer = answers[id];
    if (answer === undefined) return [];
    return typeof answer === "string" ? [answer] : [...answer];
  });
}
