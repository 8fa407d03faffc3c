import type { ApprovalDecision, ApprovalOption, ApprovalRequest } from "@switchyard/sdk";
import { commandTitle } from "../shared/codex-tool-calls.js";
import type { ServerRequestParams, ServerRequestResults, v2 } from "../codex-wire.js";

/** The server requests that are approvals. */
export type ApprovalMethod =
  | "item/commandExecution/requestApproval"
  | "item/fileChange/requestApproval"
  | "item/permissions/requestApproval"
  | "mcpServer/elicitation/request";

const DECISION_LABELS: Readonly<Record<ApprovalDecision, string>> = {
  accept: "Allow once",
  accept_for_session: "Allow for this session",
  decline: "Decline (the agent continues)",
  cancel: "Cancel (stops the turn)",
};

function options(decisions: readonly ApprovalDecision[]): ApprovalOption[] {
  return decisions.map((decision) => ({ id: decision, label: DECISION_LABELS[decision], decision }));
}

const ALL_DECISIONS: readonly ApprovalDecision[] = ["accept", "accept_for_session", "decline", "cancel"];

/** True for an MCP elicitation that is Codex asking whether a tool may run (not a form for the user). */
export function isToolCallApproval(params: ServerRequestParams<"mcpServer/elicitation/request">): boolean {
  const meta = params._meta;
  return (
    typeof meta === "object" &&
    meta !== null &&
    !Array.isArray(meta) &&
    (meta as Record<string, unknown>).codex_approval_kind === "mcp_tool_call"
  );
}

/** The approval a person sees for a Codex approval request. */
export function approvalRequestOf<M extends ApprovalMethod>(
  method: M,
  params: ServerRequestParams<M>,
  context: { readonly fileChange?: Extract<v2.ThreadItem, { type: "fileChange" }> },
): ApprovalRequest {
  switch (method) {
    case "item/commandExecution/requestApproval": {
      const p = params as ServerRequestParams<"item/commandExecution/requestApproval">;
      const command = p.command ?? "";
      const detail = [
        p.reason ? `Reason: ${p.reason}` : null,
        p.cwd ? `cwd: ${p.cwd}` : null,
        command && command !== commandTitle({ command, commandActions: p.commandActions ?? null }) ? command : null,
      ]
        .filter((line): line is string => line !== null)
        .join("\n");
      return {
        kind: "approval",
        approvalKind: "command",
        title: command
          ? commandTitle({ command, commandActions: p.commandActions ?? null })
          : (p.reason ?? "Run a command"),
        ...(detail ? { detail } : {}),
        options: options(ALL_DECISIONS),
      };
    }
    case "item/fileChange/requestApproval": {
      const p = params as ServerRequestParams<"item/fileChange/requestApproval">;
      const changes = context.fileChange?.changes ?? [];
      const detail = [
        p.reason ? `Reason: ${p.reason}` : null,
        ...changes.map((change) => `--- ${change.path}\n${change.diff}`),
      ]
        .filter((line): line is string => line !== null)
        .join("\n");
      return {
        kind: "approval",
        approvalKind: "file-change",
        title:
          changes.length > 0
            ? `Edit ${changes.map((change) => change.path).join(", ")}`
            : (p.reason ?? "Apply file changes"),
        ...(detail ? { detail } : {}),
        options: options(ALL_DECISIONS),
      };
    }
    case "item/permissions/requestApproval": {
      const p = params as ServerRequestParams<"item/permissions/requestApproval">;
      return {
        kind: "approval",
        approvalKind: "permission",
        title: p.reason ?? "Grant additional permissions",
        detail: JSON.stringify(p.permissions),
        options: options(ALL_DECISIONS),
      };
    }
    default: {
      const p = params as ServerRequestParams<"mcpServer/elicitation/request">;
      const meta = (p._meta ?? {}) as Record<string, unknown>;
      const tool = typeof meta.tool_name === "string" ? meta.tool_name : null;
      const args = meta.tool_params;
      return {
        kind: "approval",
        approvalKind: "mcp-elicitation",
        title: tool !== null ? `${p.serverName}/${tool}` : p.message,
        detail: [p.message, args !== undefined ? JSON.stringify(args) : null, p.mode === "url" ? p.url : null]
          .filter(Boolean)
          .join("\n"),
        options: options(["accept", "decline", "cancel"]),
      };
    }
  }
}

/** Codex's answer for a decision (`dismiss` is `cancel`). */
export function approvalResponseOf<M extends ApprovalMethod>(
  method: M,
  params: ServerRequestParams<M>,
  decision: ApprovalDecision,
): ServerRequestResults[M] {
  switch (method) {
    case "item/commandExecution/requestApproval":
    case "item/fileChange/requestApproval": {
      const wire = decision === "accept_for_session" ? "acceptForSession" : decision;
      return { decision: wire } as ServerRequestResults[M];
    }
    case "item/permissions/requestApproval": {
      const p = params as ServerRequestParams<"item/permissions/requestApproval">;
      const granted: v2.GrantedPermissionProfile =
        decision === "accept" || decision === "accept_for_session"
          ? {
              ...(p.permissions.network !== null ? { network: p.permissions.network } : {}),
              ...(p.permissions.fileSystem !== null ? { fileSystem: p.permissions.fileSystem } : {}),
            }
          : {};
      const response: v2.PermissionsRequestApprovalResponse = {
        permissions: granted,
        scope: decision === "accept_for_session" ? "session" : "turn",
      };
      return response as ServerRequestResults[M];
    }
    default: {
      const action: v2.McpServerElicitationAction =
        decision === "accept" || decision === "accept_for_session" ? "accept" : decision;
      const response: v2.McpServerElicitationRequestResponse = {
        action,
        content: action === "accept" ? {} : null,
        _meta: null,
      };
      return response as ServerRequestResults[M];
    }
  }
}
