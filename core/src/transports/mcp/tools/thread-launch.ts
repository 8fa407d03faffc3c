import { threadLaunchAnswer, ThreadLaunchInput, ThreadLaunchOutput } from "../../../contract/thread-launch.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const threadLaunchTool = defineTool({
  name: "t3_thread_launch",
  title: "Launch a thread",
  description:
    'Launches one ordinary top-level thread, bound to its workspace before the agent starts: workspaceStrategy "root" (default, the project root), "existing_worktree" (with worktreePath), or "worktree" (a new git worktree on a new branch from baseRef; startFromOrigin defaults to true; for stacked PRs pass the parent branch as baseRef with startFromOrigin false). scratch: true launches in a folder of its own under the Scratch project. Pass the task in message. Project, model and modes inherit; workspace does not. Launch has no retry key: after a failed or lost response, list threads before launching again.',
  input: ThreadLaunchInput,
  output: ThreadLaunchOutput,
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) =>
    threadLaunchAnswer(await services.launches.launch(callerFromScope(scope), input), services.queries),
});
