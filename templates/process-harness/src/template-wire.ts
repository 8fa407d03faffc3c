/**
 * The harness protocol this driver speaks: JSON-RPC 2.0, one message per line on the harness's
 * stdin and stdout, one long-lived process per session. `harness/template-harness.mjs` is a
 * stand-in that speaks it (its "model" follows directives in the prompt), so the plugin runs and
 * tests green before a real agent is wired in; replace these types with your harness's own
 * (generated from its schema where it publishes one).
 */

/** Methods and notifications, by direction. */
export const TEMPLATE_METHODS = {
  /** Client → harness request: open a new conversation or resume one. */
  initialize: "initialize",
  /** Client → harness request: start a turn. Answers at once; the turn reports by notifications. */
  turnStart: "turn/start",
  /** Client → harness request: stop the running turn; it then ends `interrupted`. */
  turnInterrupt: "turn/interrupt",
  /** Harness → client request: may this command run? */
  approval: "approval/request",
  /** Harness → client notifications of a turn. */
  turnStarted: "turn/started",
  messageDelta: "message/delta",
  messageCompleted: "message/completed",
  toolStarted: "tool/started",
  toolCompleted: "tool/completed",
  /** The last notification of every turn. */
  turnEnded: "turn/ended",
} as const;

/** The JSON-RPC error code of an `initialize` whose conversation the harness does not have. */
export const CONVERSATION_NOT_FOUND = -32004;

/**
 * The environment the harness reads. The MCP token travels here and nowhere else: never in
 * argv (every local user can read a command line), never in a log line.
 */
export const TEMPLATE_ENV = {
  /** Where the harness keeps its conversations (the instance's home, else the plugin's data folder). */
  home: "TEMPLATE_HOME",
  /** The Switchyard MCP endpoint of this session (`http://127.0.0.1:<port>/mcp`). */
  mcpUrl: "TEMPLATE_MCP_URL",
  /** This session's bearer token for it. */
  mcpToken: "TEMPLATE_MCP_TOKEN",
  /** The server key to report tools under (`switchyard`). */
  mcpServer: "TEMPLATE_MCP_SERVER",
  /** How long one MCP tool call may take, in milliseconds. */
  mcpToolTimeoutMs: "TEMPLATE_MCP_TOOL_TIMEOUT_MS",
} as const;

/** `initialize` params. */
export interface InitializeParams {
  /** The conversation to resume (the session's resume cursor), or null for a new one. */
  readonly conversationId: string | null;
}

/** `initialize` result. */
export interface InitializeResult {
  /** The conversation's id: the resume cursor. */
  readonly conversationId: string;
  /** True when an existing conversation was loaded. */
  readonly resumed: boolean;
  /** The harness's version. */
  readonly version: string;
}

/** Whether the harness asks before it runs a command. */
export type ApprovalPolicy = "ask" | "never";

/** `turn/start` params. */
export interface TurnStartParams {
  /** The user's message. */
  readonly text: string;
  /** What the model is told besides the message (its system channel), or null. */
  readonly instructions: string | null;
  /** The model for this turn, or null for the harness's default. */
  readonly model: string | null;
  readonly approvals: ApprovalPolicy;
}

/** `turn/start` result. */
export interface TurnStartResult {
  /** The harness's id for the turn; every notification of the turn carries it. */
  readonly turnId: string;
}

/** `turn/interrupt` params. */
export interface TurnInterruptParams {
  readonly turnId: string;
}

/** `turn/started` params. */
export interface TurnStartedParams {
  readonly turnId: string;
}

/** `message/delta` params: a piece of assistant text. */
export interface MessageDeltaParams {
  readonly turnId: string;
  readonly itemId: string;
  readonly text: string;
}

/** `message/completed` params: the whole message. */
export interface MessageCompletedParams {
  readonly turnId: string;
  readonly itemId: string;
  readonly text: string;
}

/** The harness's tools. */
export type HarnessTool = "shell" | "mcp";

/** `tool/started` params. */
export interface ToolStartedParams {
  readonly turnId: string;
  readonly itemId: string;
  readonly tool: HarnessTool;
  /** The tool's name (`shell`, or the MCP tool's name). */
  readonly name: string;
  /** One line for a timeline (the command, `switchyard/<tool>`). */
  readonly title: string;
  /** The MCP server, for MCP tools. */
  readonly server?: string;
  readonly input?: unknown;
}

/** `tool/completed` params. */
export interface ToolCompletedParams {
  readonly turnId: string;
  readonly itemId: string;
  readonly status: "completed" | "failed" | "declined";
  readonly output?: string;
}

/** `turn/ended` params. */
export interface TurnEndedParams {
  readonly turnId: string;
  readonly status: "completed" | "failed" | "interrupted" | "cancelled";
  readonly error?: { readonly message: string };
}

/** `approval/request` params. */
export interface ApprovalRequestParams {
  readonly turnId: string;
  /** The tool call waiting for the decision. */
  readonly itemId: string;
  readonly command: string;
}

/** `approval/request` result. `cancel` stops the turn; `decline` skips the command. */
export interface ApprovalRequestResult {
  readonly decision: "accept" | "decline" | "cancel";
}
