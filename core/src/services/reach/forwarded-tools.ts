import type { GrantVerb } from "../credentials/reach-grant.js";

/**
 * How one tool crosses to a linked environment: the grant verb the other side holds it to, and
 * what the delegating side keeps of its answer. One table for every tool, so forwarding is one
 * mechanism: the endpoint looks the tool up here, never branches on its name.
 */
export interface ForwardedTool {
  /** The verb of the grant the call needs on the other side (it checks it too). */
  readonly verb: GrantVerb;
  /**
   * `delegation`: the call starts a child of the caller's run there, so it carries the parent's
   * lineage and budgets and its answer is recorded as a task owed to the parent here.
   * `task`: it names a task by `taskId`; a task delegated to another environment forwards there
   * even without `environmentId`.
   */
  readonly kind?: "delegation" | "task";
}

/** The tools that take an optional `environmentId` (issue 18, item 4), with their grant verbs. */
export const FORWARDED_TOOLS: Readonly<Record<string, ForwardedTool>> = {
  create_threads: { verb: "create" },
  t3_thread_launch: { verb: "create" },
  t3_thread_list: { verb: "read" },
  t3_thread_read: { verb: "read" },
  t3_thread_send: { verb: "send" },
  t3_thread_wait: { verb: "read" },
  t3_thread_interrupt: { verb: "cancel" },
  delegate_task: { verb: "delegate", kind: "delegation" },
  task_status: { verb: "read", kind: "task" },
  task_cancel: { verb: "cancel", kind: "task" },
  // A question of a child there is answered there.
  t3_pending_request: { verb: "send" },
  orchestrator_capabilities: { verb: "read" },
};

/** The `_meta` key under which a forwarded call says who asks on the delegating side. */
export const REACH_META_KEY = "dev.switchyard/reach";
