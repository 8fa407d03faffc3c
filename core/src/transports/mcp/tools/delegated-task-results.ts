import { DelegatedTaskResultsInput, DelegatedTaskResultsOutput } from "../../../contract/delegated-task-results.js";
import { OrchestratorFailure } from "../../../engine/orchestrator-failure.js";
import { linkedGrantOf } from "../linked-caller.js";
import { defineTool, CHANGES_STATE } from "../tool-definition.js";

/**
 * The outbox of tasks a linked environment delegated here, as that environment takes it: the
 * results it has not acknowledged yet, waiting up to `waitMs` (woken by commits) when there is
 * none, after acknowledging the ones it took last time. Only linked environments see or call it.
 */
export const delegatedTaskResultsTool = defineTool({
  name: "delegated_task_results",
  title: "Results of tasks delegated here from a linked environment",
  description:
    "For linked environments only: returns the results of tasks delegated here under this link that it has not acknowledged, waiting up to waitMs for one; acknowledge lists the taskIds it holds durably (they are not handed over again).",
  input: DelegatedTaskResultsInput,
  output: DelegatedTaskResultsOutput,
  annotations: CHANGES_STATE,
  requires: "orchestration:read",
  audience: "linked_environments",
  handle: async (input, { scope, services, signal }) => {
    const grant = linkedGrantOf(scope);
    if (grant === null)
      throw new OrchestratorFailure(
        "capability_denied",
        "delegated_task_results is for linked environments (a caller with a link secret).",
        { reason: "tool" },
      );
    const results = await services.foreignTasks.results(grant, {
      ...(input.acknowledge !== undefined ? { acknowledge: input.acknowledge } : {}),
      waitMs: input.waitMs ?? 0,
      signal,
    });
    return { results };
  },
});
