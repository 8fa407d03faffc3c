import { RUNTIME_MODES, type RuntimeMode } from "../../spec/index.js";
import type { GrantVerb } from "../credentials/reach-grant.js";

/**
 * The grant verb each MCP tool needs when a linked environment calls it; null: the tool is not
 * offered across environments at all (scheduling, pull-request links, settling and settings are
 * the local user's and their own agents'). Every tool the endpoint serves must have an entry:
 * the endpoint refuses to start otherwise, so a new tool cannot slip through unclassified. One
 * table, read by B's endpoint (authorization) and A's link client (audit), never branches in
 * handlers.
 */
export const TOOL_GRANT_VERBS: Readonly<Record<string, GrantVerb | null>> = {
  orchestrator_capabilities: "read",
  t3_thread_list: "read",
  t3_thread_read: "read",
  t3_thread_wait: "read",
  task_status: "read",
  create_threads: "create",
  t3_thread_launch: "create",
  t3_thread_send: "send",
  // Answering a child's question is a message to it; listing them needs the same verb.
  t3_pending_request: "send",
  delegate_task: "delegate",
  t3_thread_interrupt: "cancel",
  task_cancel: "cancel",
  // The results of tasks it delegated here: only a grant that could delegate has any.
  delegated_task_results: "delegate",
  t3_thread_update: null,
  set_thread_settled: null,
  link_pull_request: null,
  unlink_pull_request: null,
  schedule_task: null,
  list_scheduled_tasks: null,
  delete_scheduled_task: null,
  // A child's changes are files on this machine: reading them is a read; applying or
  // discarding them changes this machine's folders and is the local user's and their agents'.
  read_changes: "read",
  apply_changes: null,
  discard_changes: null,
};

/** The verb a tool needs across environments: a verb, null (not offered), or undefined (unknown tool). */
export function grantVerbOf(toolName: string): GrantVerb | null | undefined {
  return Object.hasOwn(TOOL_GRANT_VERBS, toolName) ? TOOL_GRANT_VERBS[toolName] : undefined;
}

function modeOf(value: unknown): RuntimeMode | null {
  return typeof value === "string" && (RUNTIME_MODES as readonly string[]).includes(value)
    ? (value as RuntimeMode)
    : null;
}

/**
 * The runtime modes a validated call input asks for (`runtimeMode` at the top level and in the
 * entries of top-level arrays, as create_threads' `threads`), to hold them to a grant's ceiling
 * before the handler runs. Work without an explicit mode gets the caller's ceiling, which for a
 * linked environment is the grant's.
 */
export function requestedRuntimeModes(input: unknown): RuntimeMode[] {
  if (typeof input !== "object" || input === null) return [];
  const record = input as Record<string, unknown>;
  const modes: RuntimeMode[] = [];
  const top = modeOf(record.runtimeMode);
  if (top !== null) modes.push(top);
  for (const value of Object.values(record)) {
    if (!Array.isArray(value)) continue;
    for (const entry of value) {
      const mode =
        typeof entry === "object" && entry !== null ? modeOf((entry as Record<string, unknown>).runtimeMode) : null;
      if (mode !== null) modes.push(mode);
    }
  }
  return modes;
}
