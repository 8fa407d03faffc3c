import type { ApprovalKind, ApprovalRequest, RuntimeMode, RuntimeRequestOutcome } from "@switchyard/sdk";
import { parseMcpToolName } from "@switchyard/sdk";
import type { PermissionMode, PermissionResult, PermissionUpdate } from "./claude-wire.js";

/** What a runtime mode means for a Claude session. */
export interface ClaudeModeSettings {
  /** The permission mode Claude Code runs in. */
  readonly permissionMode: PermissionMode;
  /** The adapter answers every permission prompt with allow itself (full access). */
  readonly allowEverything: boolean;
}

/**
 * The permission rules every session starts with (Claude's flag settings layer): every shell
 * command asks. Claude's `default` mode lets read-only commands such as `echo` or `ls` run
 * unasked, and `approval-required` means every command asks first. Claude honours an ask rule
 * in every mode, `bypassPermissions` included, so in full access the adapter answers those asks
 * itself. (A rule rather than a `PreToolUse` hook answering `ask`: no callback into the host.)
 */
export const COMMAND_ASK_SETTINGS = { permissions: { ask: ["Bash"] } };

/**
 * Runtime mode → Claude permission mode.
 * - `approval-required`: `default`; with {@link COMMAND_ASK_SETTINGS} every shell command asks,
 *   and each ask becomes a runtime request the host answers.
 * - `auto-accept-edits`: `acceptEdits` (file edits run); every shell command still asks.
 * - `full-access`: `bypassPermissions`, and the adapter allows the shell asks itself. Claude
 *   Code refuses that mode to root unless `IS_SANDBOX=1` is in its environment; the adapter
 *   never sets that variable. Without it, full access runs in `default` mode with the adapter
 *   allowing every prompt (Claude's own deny rules still apply), and the session says so in a
 *   warning.
 */
export function claudeModeSettings(mode: RuntimeMode, bypassAvailable: boolean): ClaudeModeSettings {
  switch (mode) {
    case "full-access":
      return { permissionMode: bypassAvailable ? "bypassPermissions" : "default", allowEverything: true };
    case "auto-accept-edits":
      return { permissionMode: "acceptEdits", allowEverything: false };
    case "approval-required":
    default:
      return { permissionMode: "default", allowEverything: false };
  }
}

/**
 * True when Claude Code accepts `bypassPermissions` with this environment: not root, or root in
 * what Claude 2.1.332 counts as a deliberate sandbox (`IS_SANDBOX` exactly `1`, or
 * `CLAUDE_CODE_BUBBLEWRAP` set).
 */
export function bypassPermissionsAvailable(
  env: Readonly<Record<string, string | undefined>>,
  isRoot: boolean,
): boolean {
  return !isRoot || env["IS_SANDBOX"] === "1" || (env["CLAUDE_CODE_BUBBLEWRAP"] ?? "") !== "";
}

/** The warning a session reports when full access cannot use `bypassPermissions`. */
export const ROOT_FULL_ACCESS_WARNING =
  "Claude Code refuses bypassPermissions to root unless IS_SANDBOX=1 is set, and Switchyard does not set it for you: full-access runs in Claude's default mode with every permission prompt allowed by the adapter. Set IS_SANDBOX=1 in the instance environment (only on a machine you treat as a sandbox) to use bypassPermissions.";

const COMMAND_TOOLS = new Set(["Bash", "BashOutput", "KillShell", "PowerShell", "Monitor"]);
const EDIT_TOOLS = new Set(["Edit", "MultiEdit", "Write", "NotebookEdit"]);
const READ_TOOLS = new Set(["Read", "Glob", "Grep", "LS", "NotebookRead"]);

/** The approval kind of a Claude tool. */
export function approvalKindOf(toolName: string): ApprovalKind {
  if (COMMAND_TOOLS.has(toolName)) return "command";
  if (EDIT_TOOLS.has(toolName)) return "file-change";
  if (READ_TOOLS.has(toolName)) return "file-read";
  return "permission";
}

/** What Claude's `canUseTool` tells us about one prompt. */
export interface PermissionPrompt {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  /** Claude's own sentence ("Claude wants to read foo.txt"), when it gives one. */
  readonly title?: string;
  readonly description?: string;
  readonly decisionReason?: string;
  readonly blockedPath?: string;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

/** The approval request a permission prompt becomes. */
export function approvalRequestOf(prompt: PermissionPrompt): ApprovalRequest {
  const input = prompt.input;
  const mcp = parseMcpToolName(prompt.toolName);
  const subject =
    text(input["command"]) ??
    text(input["file_path"]) ??
    text(input["notebook_path"]) ??
    text(input["path"]) ??
    text(input["url"]) ??
    (mcp !== null ? `${mcp.server}/${mcp.tool}` : null);
  const title = subject !== null ? `${prompt.toolName}: ${subject}` : (text(prompt.title) ?? prompt.toolName);
  const details = [
    text(prompt.title),
    text(prompt.description),
    text(prompt.decisionReason),
    prompt.blockedPath ? `Path: ${prompt.blockedPath}` : null,
    `Input: ${JSON.stringify(input)}`,
  ];
  return {
    kind: "approval",
    approvalKind: approvalKindOf(prompt.toolName),
    title: title.length > 200 ? `${title.slice(0, 197)}...` : title,
    detail: details.filter((line): line is string => line !== null && line !== title).join("\n"),
  };
}

/** Session-scoped copies of Claude's "always allow" suggestions (they default to settings files). */
function forThisSession(suggestions: readonly PermissionUpdate[] | undefined): PermissionUpdate[] {
  return (suggestions ?? []).map((update) => ({ ...update, destination: "session" }) as PermissionUpdate);
}

/**
 * The host's answer as Claude's permission result.
 * - accept → allow (the input unchanged); accept_for_session → allow, plus Claude's suggested
 *   rules for the rest of this session only (never written to settings files);
 * - decline → deny, and Claude goes on without the tool;
 * - cancel → deny and interrupt the turn;
 * - no answer (dismissed, the turn or the session ended) → deny; Claude goes on.
 */
export function permissionResultOf(
  outcome: RuntimeRequestOutcome,
  input: Record<string, unknown>,
  suggestions: readonly PermissionUpdate[] | undefined,
): PermissionResult {
  if (outcome.kind === "cancelled") {
    return {
      behavior: "deny",
      message: outcome.dismissed
        ? "The request was dismissed without an answer; do not run this tool call."
        : "The request was cancelled before anyone answered it.",
    };
  }
  const response = outcome.response;
  if (response.kind !== "approval") return { behavior: "deny", message: "The answer was not an approval decision." };
  switch (response.decision) {
    case "accept":
      return { behavior: "allow", updatedInput: input, decisionClassification: "user_temporary" };
    case "accept_for_session":
      return {
        behavior: "allow",
        updatedInput: input,
        updatedPermissions: forThisSession(suggestions),
        decisionClassification: "user_permanent",
      };
    case "cancel":
      return {
        behavior: "deny",
        message: "The user cancelled this tool call and stopped the turn.",
        interrupt: true,
        decisionClassification: "user_reject",
      };
    case "decline":
    default:
      return { behavior: "deny", message: "The user declined this tool call.", decisionClassification: "user_reject" };
  }
}
