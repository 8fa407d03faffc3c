/**
 * Events an adapter reports about its session. Every turn-scoped event carries the `turnId`
 * the host passed to `startTurn`, so the host can attribute output to the right attempt even
 * when an interrupted turn's last events arrive after the next one started.
 */

/** Kinds of tool calls, so timelines can summarise them without knowing the provider. @public */
export type ToolKindV1 = "command" | "file_read" | "file_change" | "mcp" | "web" | "search" | "subagent" | "other";

/** Kinds of approvals a provider can ask for (seed 000 `pendingApproval.kind`). @public */
export type ApprovalKindV1 = "command" | "file-read" | "file-change" | "mcp-elicitation" | "permission";

/** Final status of a turn. @public */
export type TurnTerminalStatusV1 = "completed" | "failed" | "interrupted" | "cancelled";

/** An error reported by the provider for a turn. @public */
export interface ProviderTurnErrorV1 {
  /** The provider's own code, if it has one (for example `rate_limited`, `-32603`). */
  readonly code?: string;
  /** Human-readable message from the provider. */
  readonly message: string;
}

/** The provider accepted the turn and began working on it. @public */
export interface TurnStartedEventV1 {
  readonly type: "turn.started";
  /** The host's turn id from `startTurn`. */
  readonly turnId: string;
  /** The provider's own turn id, when it has one. */
  readonly providerTurnId?: string;
}

/** A piece of assistant text. Deltas for one `itemId` concatenate in order. @public */
export interface MessageDeltaEventV1 {
  readonly type: "message.delta";
  readonly turnId: string;
  /** Stable id of the assistant message within the turn. */
  readonly itemId: string;
  /** The text to append. */
  readonly text: string;
}

/** An assistant message is complete; `text` is its whole content (authoritative over deltas). @public */
export interface MessageCompletedEventV1 {
  readonly type: "message.completed";
  readonly turnId: string;
  readonly itemId: string;
  /** The complete message text. */
  readonly text: string;
}

/** A piece of reasoning (thinking) text. @public */
export interface ReasoningDeltaEventV1 {
  readonly type: "reasoning.delta";
  readonly turnId: string;
  readonly itemId: string;
  readonly text: string;
}

/** A reasoning item is complete. @public */
export interface ReasoningCompletedEventV1 {
  readonly type: "reasoning.completed";
  readonly turnId: string;
  readonly itemId: string;
  /** The complete reasoning text (may be a summary). */
  readonly text: string;
}

/** The agent started a tool call. @public */
export interface ToolCallStartedEventV1 {
  readonly type: "tool_call.started";
  readonly turnId: string;
  /** Stable id of the tool call within the turn. */
  readonly itemId: string;
  /** What kind of tool this is. */
  readonly kind: ToolKindV1;
  /** The tool's name as the provider reports it (`exec_command`, `mcp__switchyard__delegate_task`). */
  readonly name: string;
  /** Short summary for a timeline (`echo hi`, `switchyard/delegate_task`). */
  readonly title: string;
  /** The MCP server name, for MCP tool calls. */
  readonly server?: string;
  /** The arguments, when the provider reports them. */
  readonly input?: unknown;
}

/** A tool call finished. @public */
export interface ToolCallCompletedEventV1 {
  readonly type: "tool_call.completed";
  readonly turnId: string;
  readonly itemId: string;
  /** How it ended. */
  readonly status: "completed" | "failed" | "declined";
  /** Its output, as text (may be truncated by the adapter). */
  readonly output?: string;
  /** A command's exit code, when the tool ran one and the provider reports it. */
  readonly exitCode?: number;
}

/** One option of an approval request. @public */
export interface ApprovalOptionV1 {
  /** The provider's id for this option. */
  readonly id: string;
  /** Label shown to a person. */
  readonly label: string;
  /** What choosing it means. */
  readonly decision: ApprovalDecisionV1;
}

/** The decision a client gives an approval request. @public */
export type ApprovalDecisionV1 = "accept" | "accept_for_session" | "decline" | "cancel";

/** The provider asks for approval before doing something. @public */
export interface ApprovalRequestV1 {
  readonly kind: "approval";
  /** What needs approval. */
  readonly approvalKind: ApprovalKindV1;
  /** One-line summary (the command, the file, the tool). */
  readonly title: string;
  /** More detail, such as a diff or the arguments. */
  readonly detail?: string;
  /** The choices, when the provider offers specific ones. */
  readonly options?: readonly ApprovalOptionV1[];
}

/** One question in a user-input request. @public */
export interface UserInputQuestionV1 {
  /** Stable id, used as the key of the answer. */
  readonly id: string;
  /** Short header. */
  readonly header?: string;
  /** The question itself. */
  readonly question: string;
  /** Suggested answers; free text is allowed unless the provider says otherwise. */
  readonly options?: readonly { readonly label: string; readonly description?: string }[];
  /** More than one option may be chosen. */
  readonly multiSelect?: boolean;
}

/** The provider asks the user one or more questions. @public */
export interface UserInputRequestV1 {
  readonly kind: "user_input";
  /** The questions. */
  readonly questions: readonly UserInputQuestionV1[];
  /** The turn cannot continue until the questions are answered. */
  readonly blocking: boolean;
}

/** A runtime request opened: the provider waits for the client (approval) or the user. @public */
export interface RuntimeRequestOpenedEventV1 {
  readonly type: "runtime_request.opened";
  readonly turnId: string;
  /** The adapter's id for the request; the host answers it with this id. */
  readonly requestId: string;
  /** What is asked. */
  readonly request: ApprovalRequestV1 | UserInputRequestV1;
  /**
   * The `nativeId` of the provider-native sub-agent that asks, when the harness routes a
   * child's request through the root session; omitted for the session's own requests.
   * @experimental
   */
  readonly subagentNativeId?: string;
}

/** A runtime request ended without (or after) an answer from the host. @public */
export interface RuntimeRequestResolvedEventV1 {
  readonly type: "runtime_request.resolved";
  readonly turnId: string;
  readonly requestId: string;
  /** How it ended. */
  readonly resolution: "answered" | "cancelled" | "expired";
}

/**
 * A provider-native sub-agent was observed. Switchyard shows it; it never owns it.
 *
 * One event type carries the child's whole life: `running` when it is spawned (and again when
 * something about it becomes known), then exactly one of `completed` or `failed` when it ends.
 * Each event is a snapshot of what is known of the child so far, never a patch: a field once
 * reported is repeated in every later event for the same `nativeId` (the harness kit's
 * `NativeSubagentBook` does this), so a consumer may keep only the latest event. Every field
 * past `status` is optional and additive within v1; a consumer that knows only the first ones
 * keeps working.
 * @public
 */
export interface SubagentObservedEventV1 {
  readonly type: "subagent.observed";
  readonly turnId: string;
  /** The provider's id for the sub-agent (never used as a Switchyard primary key). */
  readonly nativeId: string;
  /** Its title or task. */
  readonly title?: string;
  /** Its state. */
  readonly status: "running" | "completed" | "failed";
  /** Its result summary, when finished. */
  readonly summary?: string;
  /** The native thread id of the sub-agent, when the provider exposes one. */
  readonly nativeThreadId?: string;
  /** The `itemId` of the parent's tool call that spawned it, when one did. @experimental */
  readonly parentItemId?: string;
  /** The instructions the parent gave it (its prompt), when reported. @experimental */
  readonly task?: string;
  /** Its agent type or role as the provider names it (`general-purpose`, `explorer`). @experimental */
  readonly agentType?: string;
  /** The model it ran on, when the provider says. @experimental */
  readonly model?: string;
  /**
   * What it used, on its final event, when the provider reports it per sub-agent. Usually
   * already counted in the parent turn's own usage (the harness bills the whole turn): a
   * breakdown for the tree, never to be added to the turn's figures. @experimental
   */
  readonly usage?: TurnUsageReportV1;
}

/**
 * A piece of a native sub-agent's transcript, where the harness gives it: the instructions it
 * received (`user`) and what it said (`assistant`), in order. Follows the child's first
 * `subagent.observed` and precedes its last.
 * @experimental
 */
export interface SubagentMessageEventV1 {
  readonly type: "subagent.message";
  readonly turnId: string;
  /** The `nativeId` of the sub-agent, as in `subagent.observed`. */
  readonly nativeId: string;
  /** Stable id of this message within the sub-agent's transcript. */
  readonly itemId: string;
  /** Who said it. */
  readonly role: "user" | "assistant";
  /** The message's text. */
  readonly text: string;
}

/** The provider proposed a plan (for example when leaving plan mode). @public */
export interface PlanProposedEventV1 {
  readonly type: "plan.proposed";
  readonly turnId: string;
  readonly itemId: string;
  /** The plan, as markdown. */
  readonly text: string;
}

/**
 * What a turn used, as far as the provider reports it. Every field is optional: a provider
 * reports what it knows and leaves out what it does not (never a 0 it did not measure); the
 * host stores it as reported and prices it only where `costUsd` is absent (flagged estimated).
 * A turn that reports no usage at all is recorded as unknown, never as zero.
 * @public
 */
export interface TurnUsageReportV1 {
  /** Input tokens sent to the model (not counting cache reads). */
  readonly inputTokens?: number;
  /** Output tokens the model produced. */
  readonly outputTokens?: number;
  /** Input tokens served from the provider's prompt cache. */
  readonly cacheReadInputTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheCreationInputTokens?: number;
  /**
   * Of the output tokens, those the model spent on reasoning (thinking). Already counted in
   * `outputTokens` (OpenAI and Anthropic bill them as output); a breakdown, never added to it.
   * Optional and additive within v1: a plugin that cannot tell leaves it out.
   */
  readonly reasoningOutputTokens?: number;
  /** The provider's own cost estimate for the turn, in US dollars. */
  readonly costUsd?: number;
  /** The same figures per model, when the turn used more than one (a sub-agent, compaction). */
  readonly byModel?: Readonly<Record<string, Omit<TurnUsageReportV1, "byModel">>>;
}

/** The turn ended. Exactly one per started turn. @public */
export interface TurnTerminalEventV1 {
  readonly type: "turn.terminal";
  readonly turnId: string;
  /** How it ended. */
  readonly status: TurnTerminalStatusV1;
  /** The provider's error, for `failed` (and optionally `interrupted`). */
  readonly error?: ProviderTurnErrorV1;
  /** What the turn used, when reported. */
  readonly usage?: TurnUsageReportV1;
}

/** The session's resume cursor changed (for example the native thread id became known). @public */
export interface ResumeCursorEventV1 {
  readonly type: "session.resume_cursor";
  /** Opaque value the host stores and passes back as `resumeCursor` to reopen the session. */
  readonly cursor: string;
}

/** The session ended on its own (the harness process exited or the connection dropped). @public */
export interface SessionExitedEventV1 {
  readonly type: "session.exited";
  /** Why, for logs and the timeline. */
  readonly reason: string;
  /** The error that ended it, if any. */
  readonly error?: ProviderTurnErrorV1;
}

/**
 * A usage limit that keeps a turn from going on: the model's or provider's capacity (rate limits,
 * overload) or the account's quota (a used-up free tier or plan). Harnesses often keep retrying
 * such a request on their own, and the turn then never ends.
 * @experimental
 */
export interface ProviderLimitV1 {
  /** `capacity`: the provider or model has no room now; `quota`: the account's allowance is used up. */
  readonly kind: "capacity" | "quota";
  /** The provider's own code, when it gives one (for example `free_tier_limit`, `rate_limit_exceeded`). */
  readonly code?: string;
}

/** Something the host should record but that changes no state (an unsupported setting, a retry). @public */
export interface WarningEventV1 {
  readonly type: "warning";
  readonly turnId?: string;
  readonly message: string;
  /**
   * Set when the warning reports a capacity or quota limit the turn cannot get past (not a retry
   * the adapter expects to succeed): the host then stops the turn and fails its run with the
   * message as the reason. Omitted: an ordinary warning. @experimental
   */
  readonly limit?: ProviderLimitV1;
}

/** Every event an adapter can report. @public */
export type AdapterEventV1 =
  | TurnStartedEventV1
  | MessageDeltaEventV1
  | MessageCompletedEventV1
  | ReasoningDeltaEventV1
  | ReasoningCompletedEventV1
  | ToolCallStartedEventV1
  | ToolCallCompletedEventV1
  | RuntimeRequestOpenedEventV1
  | RuntimeRequestResolvedEventV1
  | SubagentObservedEventV1
  | SubagentMessageEventV1
  | PlanProposedEventV1
  | TurnTerminalEventV1
  | ResumeCursorEventV1
  | SessionExitedEventV1
  | WarningEventV1;

/** The `type` of every adapter event. @public */
export type AdapterEventTypeV1 = AdapterEventV1["type"];
