import { injectable } from "tsyringe";
import type { CommandContext } from "../../engine/command-context.js";
import type { EngineReaction } from "../../engine/engine-reaction.js";
import { isTerminalRunStatus, type RunRecord } from "../../store/records.js";
import { workspaceOf, WORKSPACE_EFFECT } from "./workspace-records.js";

/**
 * When a run of a thread with its own git workspace ends, its work is committed there (named
 * after the task) unless the harness did: queued in the transaction that ends the run, so a
 * crash right after the run still commits it once the server is back.
 */
@injectable()
export class WorkspaceRunEnd implements EngineReaction {
  readonly name = "workspace-run-end";

  async onRunTerminal(ctx: CommandContext, run: RunRecord): Promise<void> {
    if (!isTerminalRunStatus(run.status)) return;
    const workspace = await workspaceOf(ctx, run.threadId);
    if (workspace === null || workspace.status !== "ready" || workspace.repository === null) return;
    ctx.effect({
      id: `effect:workspace.snapshot:${run.id}`,
      lane: workspace.id,
      type: WORKSPACE_EFFECT.snapshot,
      payload: { workspaceId: workspace.id },
    });
  }
}
