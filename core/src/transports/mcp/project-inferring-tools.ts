/**
 * The tools that pick a project for new work when the call names none: from a client's session,
 * its roots say which (see CallerContext.workProject), so they are asked for first.
 */
const PROJECT_INFERRING_TOOLS = new Set(["create_threads", "t3_thread_launch", "delegate_task"]);

/** Whether a POST (one message or a batch) calls a project-inferring tool without naming a project (its client's roots then matter). */
export function callsWithoutProject(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const call = message as {
      method?: unknown;
      params?: { name?: unknown; arguments?: { projectId?: unknown } };
    } | null;
    return (
      call?.method === "tools/call" &&
      typeof call.params?.name === "string" &&
      PROJECT_INFERRING_TOOLS.has(call.params.name) &&
      call.params.arguments?.projectId === undefined
    );
  });
}
