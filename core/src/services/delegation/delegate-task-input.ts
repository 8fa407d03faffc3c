import type { TreeBudgetConfig } from "../../config/config-schema.js";
import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import type { DelegatedTaskRole } from "../../store/records.js";
import type { TargetRequest } from "../provider-selection-service.js";
import type { WorkspaceChoice } from "../workspaces/workspace-planner.js";

/** seed 000 `DelegateTaskInput`. */
export interface DelegateTaskInput {
  readonly task: string;
  readonly target?: TargetRequest | undefined;
  /** The project the child works in (its root); default the parent's project and workspace. */
  readonly projectId?: string | undefined;
  readonly title?: string | undefined;
  readonly role?: DelegatedTaskRole | undefined;
  readonly mode?: "async" | "wait" | undefined;
  readonly timeoutMs?: number | undefined;
  readonly clientRequestId?: string | undefined;
  readonly runtimeMode?: RuntimeMode | "inherit" | undefined;
  readonly interactionMode?: InteractionMode | "inherit" | undefined;
  /** Limits on the task's whole tree; each must fit in what is left of the budgets above it (Switchyard's addition). */
  readonly budget?: TreeBudgetConfig | undefined;
  /** Where the child works (Switchyard's addition): default the project's, else `shared` (the parent's workspace). */
  readonly workspace?: WorkspaceChoice | undefined;
  /** The profile to delegate to (Switchyard's addition, docs/profiles.md): its target, instructions and ceilings. */
  readonly profile?: string | undefined;
}

/** How a wait reports that it is still waiting. */
export interface WaitControl {
  readonly signal?: AbortSignal;
  readonly onProgress?: (message: string) => void;
}
