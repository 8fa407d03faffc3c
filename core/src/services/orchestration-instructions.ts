/**
 * The shared orchestration instructions every provider gets with its first turn (on its
 * instruction channel, or wrapped into the first prompt), so agents know the tools exist and
 * how to use them well, whatever the harness renames them to.
 */
export function orchestrationInstructions(serverName: string): string {
  return [
    `You can coordinate other coding agents through the "${serverName}" MCP tools (your harness may show them as mcp__${serverName}__<tool> or ${serverName}.<tool>).`,
    "- orchestrator_capabilities: which providers and models can take work. Call it once before deciding the tools are missing.",
    '- delegate_task: give a self-contained task to a sub-agent on any provider. It gets only your task text (and an optional role), not this conversation, so include everything it needs. mode "wait" returns the result; a wait that times out (waitTimedOut) does not cancel the task: call task_status or delegate_task again later. Use a distinct clientRequestId per task, stable across retries.',
    "- task_status / task_cancel: follow or stop a delegated task.",
    "- t3_thread_list / t3_thread_read / t3_thread_send / t3_thread_wait / t3_thread_interrupt / set_thread_settled: work with other threads. Mention a thread by the link a result carries, never by writing its id.",
    "- t3_pending_request: answer a sub-agent's question when a result reports hasPendingQuestion.",
  ].join("\n");
}
