import { inject, injectable } from "tsyringe";
import { type HarnessProcessControl, HarnessProcessTreesToken } from "../plugin-host/ports.js";
import type { CommandContext } from "./command-context.js";
import type { EngineReaction } from "./engine-reaction.js";

/**
 * A stopped thread's harness tools stop with the stop's commit. Its harness keeps running (it
 * is asked to interrupt its turn, and reports what the turn used); everything the harness
 * started outside its own process group (tool commands, shells, detached background loops) is
 * frozen as the last step before the stop commits, so none of it sends anything once the stop
 * is recorded, and ended (SIGKILL) right after. A stop that does not commit lets them go on.
 * The harness and its own group end when the host closes the stopped thread's session.
 */
@injectable()
export class StopFreezesHarnessTools implements EngineReaction {
  readonly name = "stop-freezes-harness-tools";

  constructor(@inject(HarnessProcessTreesToken) private readonly trees: HarnessProcessControl) {}

  onThreadStopped(ctx: CommandContext, threadId: string): void {
    ctx.onCommit({
      prepare: () => void this.trees.freezeDetached(threadId),
      committed: () => void this.trees.endDetached(threadId),
      rolledBack: () => this.trees.thawDetached(threadId),
    });
  }
}
