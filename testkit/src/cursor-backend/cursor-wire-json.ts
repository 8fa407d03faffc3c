/**
 * The few `agent.v1` messages the fake Cursor backend reads and writes, in protobuf's JSON form
 * (lowerCamelCase field names, a oneof as the one field that is set, 64-bit integers as
 * strings, bytes as base64). Written from the wire as seen on this machine, not from Cursor's
 * generated code; the SDK's own classes validate every message both ways, so a field named
 * wrong here fails loudly instead of silently.
 */

/** `agent.v1.AgentRunRequest`: the first client message of a run. */
export interface RunRequestJson {
  readonly conversationState?: ConversationStateJson;
  readonly action?: {
    readonly userMessageAction?: { readonly userMessage?: { readonly text?: string; readonly messageId?: string } };
  };
  readonly conversationId?: string;
  readonly requestedModel?: { readonly modelId?: string };
  readonly runId?: string;
}

/** `agent.v1.ConversationStateStructure`, the part the fake uses: one opaque record per turn. */
export interface ConversationStateJson {
  /** Base64 bytes; the fake writes a JSON {@link FakeTurnRecord} in each. */
  readonly turns?: readonly string[];
}

/** What the fake keeps per turn in a checkpoint (the real backend keeps blob ids here). */
export interface FakeTurnRecord {
  readonly user: string;
  readonly steers: readonly string[];
  readonly assistant: string;
}

/** A shell command's result as the client reports it (`agent.v1.ShellResult`). */
export interface ShellResultJson {
  readonly success?: { readonly stdout?: string; readonly stderr?: string; readonly exitCode?: number };
  readonly failure?: {
    readonly stdout?: string;
    readonly stderr?: string;
    readonly exitCode?: number;
    readonly aborted?: boolean;
  };
  readonly timeout?: { readonly timeoutMs?: number };
  readonly rejected?: { readonly reason?: string };
  readonly spawnError?: { readonly error?: string };
  readonly permissionDenied?: { readonly error?: string };
  readonly [key: string]: unknown;
}

/** An MCP server the client connected to, with its tools (`agent.v1.McpStateServer`). */
export interface McpStateServerJson {
  readonly serverName?: string;
  readonly serverIdentifier?: string;
  readonly status?: string;
  readonly errorMessage?: string;
  readonly tools?: readonly {
    readonly name?: string;
    readonly toolName?: string;
    readonly providerIdentifier?: string;
  }[];
}

/** An MCP tool call's result as the client reports it (`agent.v1.McpResult`). */
export interface McpResultJson {
  readonly success?: {
    readonly content?: readonly { readonly text?: { readonly text?: string } }[];
    readonly isError?: boolean;
  };
  readonly error?: { readonly error?: string; readonly needsAuth?: boolean };
  readonly rejected?: { readonly reason?: string };
  readonly permissionDenied?: { readonly error?: string };
  readonly toolNotFound?: { readonly name?: string };
  readonly serverNotFound?: { readonly name?: string };
}

/** `agent.v1.ExecClientMessage`: the answer to one exec request. */
export interface ExecClientMessageJson {
  readonly id?: number;
  readonly shellResult?: ShellResultJson;
  readonly mcpStateExecResult?: {
    readonly success?: { readonly servers?: readonly McpStateServerJson[] };
    readonly error?: { readonly error?: string };
  };
  readonly mcpResult?: McpResultJson;
  readonly [key: string]: unknown;
}

/** `agent.v1.InjectContextAction`: a steer. */
export interface InjectContextActionJson {
  readonly injectionId?: string;
  readonly expectedRunId?: string;
  readonly userContext?: { readonly userMessage?: { readonly text?: string; readonly messageId?: string } };
}

/** `agent.v1.AgentClientMessage`. */
export interface AgentClientMessageJson {
  readonly runRequest?: RunRequestJson;
  readonly execClientMessage?: ExecClientMessageJson;
  readonly execClientControlMessage?: Record<string, unknown>;
  readonly conversationAction?: {
    readonly injectContextAction?: InjectContextActionJson;
    readonly cancelAction?: Record<string, unknown>;
    readonly [key: string]: unknown;
  };
  readonly clientHeartbeat?: Record<string, unknown>;
  readonly kvClientMessage?: Record<string, unknown>;
  readonly interactionResponse?: Record<string, unknown>;
}

/** The oneof case a client message carries, for records and logs. */
export function clientMessageKind(message: AgentClientMessageJson): string {
  return Object.keys(message)[0] ?? "empty";
}

/** How the fake answers a steer (`agent.v1.ContextInjectionState`), or `none` for no answer at all. */
export type SteerAnswer = "delivered" | "queuedForNextTurn" | "cancelled" | "rejected" | "none";

/** The text of an MCP result, as a model would read it. */
export function mcpResultText(result: McpResultJson): string {
  if (result.success !== undefined)
    return (result.success.content ?? []).map((item) => item.text?.text ?? "").join("\n");
  if (result.error !== undefined) return `error: ${result.error.error ?? ""}`;
  if (result.rejected !== undefined) return `rejected: ${result.rejected.reason ?? ""}`;
  if (result.permissionDenied !== undefined) return `permission denied: ${result.permissionDenied.error ?? ""}`;
  if (result.toolNotFound !== undefined) return `tool not found: ${result.toolNotFound.name ?? ""}`;
  if (result.serverNotFound !== undefined) return `server not found: ${result.serverNotFound.name ?? ""}`;
  return "";
}

/** An MCP result in the shape a completed tool call carries (`agent.v1.McpToolResult`). */
export function mcpToolResultOf(result: McpResultJson): Record<string, unknown> {
  if (result.success !== undefined) return { success: result.success };
  if (result.rejected !== undefined) return { rejected: result.rejected };
  if (result.permissionDenied !== undefined) return { permissionDenied: result.permissionDenied };
  return { error: { error: mcpResultText(result) } };
}

/** The text of a shell result, as a model would read it. */
export function shellResultText(result: ShellResultJson): string {
  const output = result.success ?? result.failure;
  if (output !== undefined) return [output.stdout ?? "", output.stderr ?? ""].filter((part) => part !== "").join("\n");
  if (result.timeout !== undefined) return `timed out after ${result.timeout.timeoutMs ?? 0} ms`;
  if (result.rejected !== undefined) return `rejected: ${result.rejected.reason ?? ""}`;
  if (result.spawnError !== undefined) return `spawn error: ${result.spawnError.error ?? ""}`;
  if (result.permissionDenied !== undefined) return `permission denied: ${result.permissionDenied.error ?? ""}`;
  return "";
}

/**
 * The parse of a shell command the real backend sends with it (`ShellCommandParsingResult`):
 * the client refuses to run a command without one ("Parsing result is required"). Commands are
 * split on `;`, `&&`, `||` and `|`, words on whitespace; enough for test commands.
 */
export function parsedShellCommand(command: string): {
  simpleCommands: string[];
  parsingResult: Record<string, unknown>;
} {
  const simpleCommands = command
    .split(/\s*(?:;|&&|\|\||\|)\s*/)
    .map((part) => part.trim())
    .filter((part) => part !== "");
  return {
    simpleCommands,
    parsingResult: {
      executableCommands: simpleCommands.map((text) => {
        const [name = "", ...args] = text.split(/\s+/);
        return { name, fullText: text, args: args.map((value) => ({ type: "word", value })) };
      }),
    },
  };
}
