import type { RuntimeMode } from "@switchyard/sdk";
import type { v2 } from "../codex-wire.js";

/** What a runtime mode means for an app-server thread. */
export interface AppServerModeSettings {
  /** `approvalPolicy` for `thread/start|resume|fork` and `turn/start`. */
  readonly approvalPolicy: v2.AskForApproval;
  /** `sandbox` for `thread/start|resume|fork`. */
  readonly sandbox: v2.SandboxMode;
  /** The same sandbox as a `turn/start` `sandboxPolicy`. */
  readonly sandboxPolicy: v2.SandboxPolicy;
  /** File-change approvals are answered `accept` by the adapter. */
  readonly autoAcceptFileChanges: boolean;
  /** Every approval is answered `accept` by the adapter (Codex should not ask at all). */
  readonly autoAcceptAll: boolean;
}

const WORKSPACE_WRITE: v2.SandboxPolicy = {
  type: "workspaceWrite",
  writableRoots: [],
  networkAccess: false,
  excludeTmpdirEnvVar: false,
  excludeSlashTmp: false,
};

/**
 * Runtime mode → Codex policy (app-server).
 * - `approval-required`: `untrusted` + `workspace-write`. Codex asks before every command that is
 *   not a known read-only one (and before edits); approved commands run in the workspace sandbox.
 *   (`on-request` would let sandboxed commands run without asking, which is not this mode.)
 * - `auto-accept-edits`: the same policy, and the adapter accepts file-change approvals itself;
 *   commands still ask.
 * - `full-access`: `never` + `danger-full-access`; nothing asks.
 */
export function appServerModeSettings(mode: RuntimeMode): AppServerModeSettings {
  switch (mode) {
    case "full-access":
      return {
        approvalPolicy: "never",
        sandbox: "danger-full-access",
        sandboxPolicy: { type: "dangerFullAccess" },
        autoAcceptFileChanges: true,
        autoAcceptAll: true,
      };
    case "auto-accept-edits":
      return {
        approvalPolicy: "untrusted",
        sandbox: "workspace-write",
        sandboxPolicy: WORKSPACE_WRITE,
        autoAcceptFileChanges: true,
        autoAcceptAll: false,
      };
    case "approval-required":
    default:
      return {
        approvalPolicy: "untrusted",
        sandbox: "workspace-write",
        sandboxPolicy: WORKSPACE_WRITE,
        autoAcceptFileChanges: false,
        autoAcceptAll: false,
      };
  }
}

/** What a runtime mode means for one `codex exec` turn. */
export interface ExecModeSettings {
  readonly approvalPolicy: "never";
  readonly sandboxMode: "read-only" | "danger-full-access";
  /** The mode actually applied (exec offers no `auto-accept-edits`). */
  readonly applied: RuntimeMode;
}

/**
 * Runtime mode → Codex policy (exec). `codex exec` cannot ask for approval, so nothing is left
 * to ask: `approval-required` runs read-only (a command that would need approval fails in the
 * sandbox instead), `full-access` runs unsandboxed. `auto-accept-edits` (commands would still
 * need approval) runs as `approval-required`, as the spec says for modes a provider does not offer.
 */
export function execModeSettings(mode: RuntimeMode): ExecModeSettings {
  return mode === "full-access"
    ? { approvalPolicy: "never", sandboxMode: "danger-full-access", applied: "full-access" }
    : { approvalPolicy: "never", sandboxMode: "read-only", applied: "approval-required" };
}
