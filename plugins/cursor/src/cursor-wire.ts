/**
 * The protocol between the plugin (in the host) and its sidecar (on the host's Node, or
 * `nodePath`: ≥ 22.13, which the Cursor SDK needs): JSON-RPC 2.0, one message per line over the sidecar's stdio,
 * through the harness kit's `JsonLinesChannel` and `JsonRpcPeer`. The Cursor SDK's own types
 * are re-exported (type-only: nothing of the SDK loads in the host).
 */
import type { McpServerConfig, RunResult, SDKMessage, SteerAckOutcome, TokenUsage } from "@cursor/sdk";

export type { McpServerConfig, RunResult, SDKMessage, SteerAckOutcome, TokenUsage };

/** The `@cursor/sdk` release this plugin is built and tested against. */
export const CURSOR_SDK_VERSION = "1.0.32";

/** The oldest Node the Cursor SDK runs on (its `engines`; `node:sqlite` storage, its native addons). */
export const CURSOR_SDK_MIN_NODE = { major: 22, minor: 13 } as const;

/** `initialize`: load the SDK. */
export interface InitializeParams {
  /** The `@cursor/sdk` package folder (the plugin found it; the sidecar imports its entry points from there). */
  readonly sdkDir: string;
}

/** `initialize`: the sidecar loaded the SDK. */
export interface InitializeResult {
  readonly sdkVersion: string;
  readonly nodeVersion: string;
}

/** `agent/open`: create a local agent, or resume one from the store. */
export interface OpenAgentParams {
  readonly cwd: string;
  /** The folder of this thread's agent store (SQLite). */
  readonly storeDir: string;
  /** A model id, or null for the first model of the account's catalog (new agents) or the agent's own (resumed ones). */
  readonly model: string | null;
  /** An agent id to resume, or null for a new agent. */
  readonly resume: string | null;
  /** Servers for the agent (the Switchyard endpoint with its bearer header); travel over stdin only. */
  readonly mcpServers: Record<string, McpServerConfig> | null;
}

/** The agent the session runs on. */
export interface OpenAgentResult {
  readonly agentId: string;
  /** The model the agent's runs use unless a turn names another. */
  readonly model: string;
}

/** `agent/send`: start a run. Its messages arrive as `run/message`, its end as `run/ended`. */
export interface SendParams {
  /** The host's turn id; every notification of the run carries it. */
  readonly turnId: string;
  readonly text: string;
  /** Always set: a local agent's every run needs one. */
  readonly model: string;
  /** The servers again: on 1.0.39+ send-level servers replace only the create-time inline set. */
  readonly mcpServers: Record<string, McpServerConfig> | null;
}

/** The run started. */
export interface SendResult {
  readonly runId: string;
}

/** `run/steer`: `run.steer(text)` on the running run. */
export interface SteerParams {
  readonly turnId: string;
  readonly text: string;
}

/** What Cursor's backend did with the steer. */
export interface SteerResult {
  readonly outcome: SteerAckOutcome;
}

/** `run/cancel`: `run.cancel()`. */
export interface CancelParams {
  readonly turnId: string;
}

/** `models/list`: `Cursor.models.list()` (the account's catalog; no model call). */
export interface ModelsResult {
  readonly models: readonly { readonly id: string; readonly displayName?: string }[];
}

/** `run/message` (notification): one message of the run's stream. */
export interface RunMessageNotification {
  readonly turnId: string;
  readonly message: SDKMessage;
}

/** `run/ended` (notification): the run's result, or why it could not be read. */
export interface RunEndedNotification {
  readonly turnId: string;
  readonly result?: RunResult;
  readonly error?: SidecarErrorData & { readonly message: string };
}

/** How the sidecar classifies an SDK error (its class names are minified, so it checks `instanceof` itself). */
export type SidecarErrorKind =
  "busy" | "not_found" | "authentication" | "rate_limit" | "configuration" | "network" | "unsupported" | "unknown";

/** The `data` of a JSON-RPC error the sidecar answers with. */
export interface SidecarErrorData {
  readonly kind: SidecarErrorKind;
  readonly code?: string;
  readonly status?: number;
  readonly retryable?: boolean;
}

/** The JSON-RPC methods the sidecar answers. */
export const SIDECAR_METHODS = {
  initialize: "initialize",
  openAgent: "agent/open",
  send: "agent/send",
  steer: "run/steer",
  cancel: "run/cancel",
  listModels: "models/list",
} as const;

/** The notifications the sidecar sends. */
export const SIDECAR_NOTIFICATIONS = {
  runMessage: "run/message",
  runEnded: "run/ended",
} as const;
