/**
 * The Switchyard extension for Pi. The adapter copies the compiled form of this file into the
 * plugin's cache directory and starts `pi --mode rpc --extension <that file>`; Pi loads it with
 * jiti inside its own process. It must stay self-contained: Node built-ins only at run time
 * (the Pi imports below are type-only and vanish when compiled).
 *
 * It does three things:
 * 1. **MCP bridge.** Pi has no MCP client. When `SWITCHYARD_MCP_URL` is set, the factory speaks
 *    raw JSON-RPC to the Switchyard endpoint (Streamable HTTP, stateless, JSON or SSE bodies),
 *    lists its tools and registers each as `mcp__<server>__<tool>`; a call goes back over HTTP
 *    with the original tool name, the session's bearer token and Pi's abort signal. The token
 *    comes from the environment until the host rotates it: then the state file carries the new
 *    one, read at every call. Requests use `node:http`, which has no headers or body timeout (Node's
 *    `fetch` stops at undici's 300 s), bounded instead by `SWITCHYARD_MCP_TOOL_TIMEOUT_MS`, which
 *    the host sets above its longest blocking wait, so a wait always ends with the server's own
 *    resumable pending result. Progress notifications become tool updates. On Pi 0.99+ only
 *    {@link DIRECT_TOOLS} are declared to the model; the others are `deferred`, found through Pi's
 *    built-in `tool_search` (activated here), and hidden `mcp__<normalized key>__` aliases hold the
 *    names Pi's own MCP client would give a server of the same key (seed 000, "Pi V2").
 * 2. **Instructions.** The shared orchestration instructions ride on the system prompt of every
 *    run (`before_agent_start`), so they reach the first turn and survive a resume.
 * 3. **Runtime modes.** Pi has no approval policy of its own. A `tool_call` hook reads the
 *    session's runtime mode from `SWITCHYARD_PI_STATE_FILE` (rewritten by the adapter before each
 *    prompt) and, where the mode requires it, asks through Pi's extension UI: a `select` dialog
 *    whose title starts with {@link APPROVAL_TITLE_PREFIX}, answered by the adapter on stdin.
 *    Read-only tools and the Switchyard tools never ask; a missing or unreadable state file
 *    means `approval-required`.
 * 4. **A profile's tool rules** (in the same state file) come first at every tool call: a deny
 *    rule blocks the call, an ask rule asks in every mode and each time, an allow rule runs it
 *    unasked, and with `allowOnly` Pi's own tools no rule names are blocked.
 *
 * A throw in an extension factory stops Pi at startup, so every failure here is caught and
 * reported (stderr and a UI notification) and Pi starts without the bridge.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { ExtensionAPI, ExtensionContext, ToolCallEvent } from "@earendil-works/pi-coding-agent";

/** Environment variables the adapter sets for the extension. */
export const EXTENSION_ENV = {
  /** The Switchyard MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: "SWITCHYARD_MCP_URL",
  /** The provider session's bearer token. Never logged, never in argv. */
  token: "SWITCHYARD_MCP_TOKEN",
  /** The server key in tool names (`switchyard` → `mcp__switchyard__<tool>`). */
  serverName: "SWITCHYARD_MCP_SERVER_NAME",
  /** The longest a tool call may take before the bridge gives up (ms). */
  toolTimeoutMs: "SWITCHYARD_MCP_TOOL_TIMEOUT_MS",
  /** A JSON file `{ "runtimeMode": …, "mcpToken"?: … }` the adapter rewrites as they change. */
  stateFile: "SWITCHYARD_PI_STATE_FILE",
} as const;

/** Marks the extension's approval dialogs among other extensions' dialogs. */
export const APPROVAL_TITLE_PREFIX = "switchyard-approval:";

/** The options of an approval dialog, in order; the adapter answers with one of them. */
export const APPROVAL_CHOICES = ["accept", "accept_for_session", "decline"] as const;

/** One of {@link APPROVAL_CHOICES}. */
export type ApprovalChoice = (typeof APPROVAL_CHOICES)[number];

/** What the title of an approval dialog carries after {@link APPROVAL_TITLE_PREFIX}, as JSON. */
export interface ApprovalPrompt {
  /** Pi's id of the tool call that waits. */
  readonly toolCallId: string;
  /** The tool's name. */
  readonly toolName: string;
  /** What needs approval. */
  readonly approvalKind: "command" | "file-change" | "permission";
  /** One line: the command, the file. */
  readonly title: string;
  /** More detail (arguments, new content), truncated. */
  readonly detail?: string;
}

/** The state file's content. */
export interface ExtensionSessionState {
  readonly runtimeMode: "approval-required" | "auto-accept-edits" | "full-access";
  /** A rotated MCP token; it replaces the one in the environment. The file is private (0600). */
  readonly mcpToken?: string;
  /** The session's profile tool rules (the sdk's `ToolRules`), by Pi's tool names. */
  readonly toolRules?: {
    readonly allow: readonly string[];
    readonly deny: readonly string[];
    readonly ask: readonly string[];
    readonly allowOnly: boolean;
  };
}

/**
 * The Switchyard tools Pi >= 0.99 keeps declared to the model (seed 000, "Pi V2"); the others
 * are registered with `deferred` exposure and found through Pi's built-in `tool_search`, so a
 * long tool list does not fill every request. On an older Pi, or one without `tool_search`, every
 * tool stays direct.
 */
export const DIRECT_TOOLS: ReadonlySet<string> = new Set(["orchestrator_capabilities", "delegate_task", "task_status"]);

/** Pi's built-in tool that finds and declares deferred tools (Pi >= 0.99; registered inactive). */
export const TOOL_SEARCH = "tool_search";

/**
 * The name Pi's native MCP client gives a server's tool: `mcp__<server>__<tool>` with every
 * character other than letters, digits and `_` replaced by `_` (`t3-code` → `t3_code`).
 */
export function normalizedToolName(publicName: string): string {
  return publicName.replace(/[^A-Za-z0-9_]/g, "_");
}

/** Pi's built-in tools that only read. */
const READ_ONLY_TOOLS = new Set(["read", "grep", "find", "ls"]);
/** Pi's built-in tools that change files. */
const FILE_CHANGE_TOOLS = new Set(["edit", "write"]);
/** The MCP protocol version the bridge asks for. */
const MCP_PROTOCOL_VERSION = "2025-06-18";
/** Bounds the startup handshake, so a dead endpoint cannot stall Pi's startup. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
const MAX_DETAIL_CHARS = 2_000;

type RegisteredTool = Parameters<ExtensionAPI["registerTool"]>[0];
type ToolResult = Awaited<ReturnType<RegisteredTool["execute"]>>;
type ToolContent = ToolResult["content"][number];

interface JsonRpcMessage {
  readonly jsonrpc?: string;
  readonly id?: string | number | null;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code?: number; readonly message?: string; readonly data?: unknown };
}

interface McpTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: Record<string, unknown>;
}

/** A failed HTTP exchange with the endpoint (never carries the token). */
class McpHttpError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "McpHttpError";
  }
}

function truncate(text: string, max = MAX_DETAIL_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Splits an SSE stream into `data:` payloads, one per event. */
class SseParser {
  private buffer = "";
  private data: string[] = [];

  push(chunk: string, onData: (data: string) => void): void {
    this.buffer += chunk;
    for (;;) {
      const newline = this.buffer.indexOf("\n");
      if (newline < 0) return;
      let line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        if (this.data.length > 0) onData(this.data.join("\n"));
        this.data = [];
      } else if (line.startsWith("data:")) {
        this.data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
      // `event:`, `id:`, `retry:` and comments carry nothing the bridge needs.
    }
  }

  end(onData: (data: string) => void): void {
    if (this.buffer !== "") this.push("\n", onData);
    if (this.data.length > 0) onData(this.data.join("\n"));
    this.data = [];
  }
}

/**
 * A minimal MCP client over Streamable HTTP: one POST per message, the response read as JSON or
 * as SSE. `node:http` sets no timeouts of its own; the caller's deadline and abort signal bound
 * each request.
 */
class McpHttpClient {
  private nextId = 1;
  private protocolVersion: string | null = null;
  private sessionId: string | null = null;

  constructor(
    private readonly url: URL,
    /** The session's current token (it may be rotated while Pi runs). */
    private readonly token: () => string,
  ) {}

  async initialize(): Promise<void> {
    const result = await this.request(
      "initialize",
      {
        protocolVersion: MCP_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "switchyard-pi-bridge", version: "1.0.0" },
      },
      { timeoutMs: HANDSHAKE_TIMEOUT_MS },
    );
    const version = result["protocolVersion"];
    this.protocolVersion = typeof version === "string" ? version : MCP_PROTOCOL_VERSION;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { timeoutMs: HANDSHAKE_TIMEOUT_MS });
  }

  async listTools(): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const result = await this.request("tools/list", cursor === undefined ? {} : { cursor }, {
        timeoutMs: HANDSHAKE_TIMEOUT_MS,
      });
      const page = Array.isArray(result["tools"]) ? (result["tools"] as McpTool[]) : [];
      tools.push(...page.filter((tool) => typeof tool?.name === "string"));
      cursor = typeof result["nextCursor"] === "string" ? result["nextCursor"] : undefined;
    } while (cursor !== undefined);
    return tools;
  }

  /** Sends a request and resolves with its `result`; a JSON-RPC error rejects. */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: { timeoutMs: number; signal?: AbortSignal; onNotification?: (message: JsonRpcMessage) => void },
  ): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const messages = await this.post({ jsonrpc: "2.0", id, method, params }, { ...options, expectId: id });
    const response = messages.find(
      (message) => message.id === id && (message.result !== undefined || message.error !== undefined),
    );
    if (response === undefined) throw new McpHttpError(`The MCP endpoint sent no response to ${method}.`);
    if (response.error !== undefined) {
      throw new McpHttpError(
        `MCP error ${response.error.code ?? "?"} from ${method}: ${response.error.message ?? "unknown error"}`,
      );
    }
    return response.result ?? {};
  }

  private headers(body: string): Record<string, string> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${this.token()}`,
      "content-length": String(Buffer.byteLength(body)),
    };
    if (this.protocolVersion !== null) headers["mcp-protocol-version"] = this.protocolVersion;
    if (this.sessionId !== null) headers["mcp-session-id"] = this.sessionId;
    return headers;
  }

  /** POSTs one message; resolves with every JSON-RPC message of the answer (none for 202). */
  private post(
    message: JsonRpcMessage,
    options: {
      timeoutMs: number;
      signal?: AbortSignal;
      expectId?: number;
      onNotification?: (message: JsonRpcMessage) => void;
    },
  ): Promise<JsonRpcMessage[]> {
    const body = JSON.stringify(message);
    const transport = this.url.protocol === "https:" ? https : http;
    return new Promise<JsonRpcMessage[]>((resolve, reject) => {
      let settled = false;
      const messages: JsonRpcMessage[] = [];
      const finish = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        if (error) {
          request.destroy();
          reject(error);
        } else {
          resolve(messages);
        }
      };
      const onAbort = () => finish(new Error("This operation was aborted"));
      const timer = setTimeout(
        () =>
          finish(
            new McpHttpError(
              `The Switchyard MCP endpoint did not answer ${message.method ?? "a request"} within ${options.timeoutMs} ms.`,
            ),
          ),
        options.timeoutMs,
      );
      // `agent: false`: a fresh connection per message, so no pooled socket can go stale.
      const request = transport.request(
        this.url,
        { method: "POST", headers: this.headers(body), agent: false },
        (response) => {
          const status = response.statusCode ?? 0;
          const sessionId = response.headers["mcp-session-id"];
          if (typeof sessionId === "string" && sessionId !== "") this.sessionId = sessionId;
          const contentType = String(response.headers["content-type"] ?? "");
          response.setEncoding("utf8");
          if (status < 200 || status >= 300) {
            let text = "";
            response.on("data", (chunk: string) => {
              if (text.length < 4_000) text += chunk;
            });
            response.on("end", () => {
              const hint =
                status === 401 ? " (the session's credential was refused: it may have expired or been revoked)" : "";
              finish(
                new McpHttpError(
                  `The Switchyard MCP endpoint answered HTTP ${status}${hint}: ${truncate(text.trim(), 300)}`,
                  status,
                ),
              );
            });
            response.on("error", (error) => finish(error));
            return;
          }
          const accept = (raw: string) => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(raw);
            } catch {
              return;
            }
            for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
              if (typeof item !== "object" || item === null) continue;
              const rpc = item as JsonRpcMessage;
              messages.push(rpc);
              if (rpc.method !== undefined && rpc.id === undefined) options.onNotification?.(rpc);
              // The answer is in: don't wait for the server to close an SSE stream.
              if (options.expectId !== undefined && rpc.id === options.expectId && rpc.method === undefined) finish();
            }
          };
          if (contentType.includes("text/event-stream")) {
            const parser = new SseParser();
            response.on("data", (chunk: string) => parser.push(chunk, accept));
            response.on("end", () => {
              parser.end(accept);
              finish();
            });
          } else {
            let text = "";
            response.on("data", (chunk: string) => {
              text += chunk;
            });
            response.on("end", () => {
              if (text.trim() !== "") accept(text);
              finish();
            });
          }
          response.on("error", (error) => finish(error));
        },
      );
      request.on("error", (error) => finish(error));
      if (options.signal?.aborted) {
        onAbort();
        return;
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      request.end(body);
    });
  }
}

/** MCP result content → Pi tool content. */
function toPiContent(content: unknown): ToolContent[] {
  if (!Array.isArray(content)) return [];
  const out: ToolContent[] = [];
  for (const item of content as Record<string, unknown>[]) {
    if (item["type"] === "text" && typeof item["text"] === "string") out.push({ type: "text", text: item["text"] });
    else if (item["type"] === "image" && typeof item["data"] === "string" && typeof item["mimeType"] === "string") {
      out.push({ type: "image", data: item["data"], mimeType: item["mimeType"] });
    } else if (item["type"] === "resource" || item["type"] === "resource_link")
      out.push({ type: "text", text: JSON.stringify(item) });
  }
  return out;
}

function contentText(content: readonly ToolContent[]): string {
  return content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

/** One bridged tool: how to register it again under another exposure or name. */
type BridgedTool = Omit<RegisteredTool, "exposure"> & { readonly mcpName: string };

/** What the factory registered, for the session to finish once Pi has loaded every extension. */
interface McpRegistration {
  readonly tools: BridgedTool[];
  readonly problem: string | null;
}

/** Registers the Switchyard MCP tools, or says why it could not. */
async function registerMcpTools(pi: ExtensionAPI, env: NodeJS.ProcessEnv): Promise<McpRegistration> {
  const url = env[EXTENSION_ENV.url];
  const token = env[EXTENSION_ENV.token];
  if (url === undefined || url === "") return { tools: [], problem: null };
  if (token === undefined || token === "") return { tools: [], problem: `${EXTENSION_ENV.token} is not set` };
  const serverName = env[EXTENSION_ENV.serverName] || "switchyard";
  const parsedTimeout = Number(env[EXTENSION_ENV.toolTimeoutMs]);
  const toolTimeoutMs = Number.isFinite(parsedTimeout) && parsedTimeout > 0 ? parsedTimeout : 150_000;
  const stateFile = env[EXTENSION_ENV.stateFile];
  const client = new McpHttpClient(new URL(url), () => readState(stateFile).mcpToken ?? token);
  try {
    await client.initialize();
    const tools = await client.listTools();
    const registered: BridgedTool[] = [];
    for (const tool of tools) {
      const name = `mcp__${serverName}__${tool.name}`;
      const bridged: BridgedTool = {
        mcpName: tool.name,
        name,
        label: tool.title ?? tool.name,
        description: tool.description ?? tool.title ?? tool.name,
        // Pi takes plain JSON Schema as well as TypeBox; the MCP schema passes through as-is.
        parameters: (tool.inputSchema ?? { type: "object", properties: {} }) as unknown as RegisteredTool["parameters"],
        async execute(toolCallId, params, signal, onUpdate) {
          const result = await client.request(
            "tools/call",
            { name: tool.name, arguments: params ?? {}, _meta: { progressToken: toolCallId } },
            {
              timeoutMs: toolTimeoutMs,
              ...(signal !== undefined ? { signal } : {}),
              onNotification: (message) => {
                if (message.method !== "notifications/progress" || onUpdate === undefined) return;
                const progress = message.params ?? {};
                const text =
                  typeof progress["message"] === "string"
                    ? progress["message"]
                    : `progress ${String(progress["progress"] ?? "")}`;
                onUpdate({ content: [{ type: "text", text }], details: { progress } });
              },
            },
          );
          const content = toPiContent(result["content"]);
          if (content.length === 0 && result["structuredContent"] !== undefined) {
            content.push({ type: "text", text: JSON.stringify(result["structuredContent"]) });
          }
          // Pi marks a tool result as an error when execute throws.
          if (result["isError"] === true) throw new Error(contentText(content) || `${tool.name} failed`);
          return { content, details: { server: serverName, tool: tool.name } };
        },
      };
      // Deferred unless it is one of the three the model always sees. A Pi older than 0.99
      // ignores `exposure` (every tool direct); a newer one without `tool_search` gets the tool
      // again as direct once the session starts (finishRegistration).
      pi.registerTool({ ...bridged, exposure: DIRECT_TOOLS.has(tool.name) ? "direct" : "deferred" } as RegisteredTool);
      registered.push(bridged);
    }
    return { tools: registered, problem: null };
  } catch (error) {
    return { tools: [], problem: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Finishes the registration once Pi has loaded every extension (Pi refuses `getAllTools` while
 * extensions load), for a Pi that has tool exposure (0.99+): activates `tool_search` for the
 * deferred tools, or, without it, makes them direct again; and registers the hidden
 * `mcp__<normalized server>__<tool>` aliases, which reserve the names Pi's native MCP client
 * would give a configured server of the same key, without declaring anything or adding search
 * results. Returns the alias names (Switchyard tools, for the approval hook).
 */
function finishRegistration(pi: ExtensionAPI, tools: readonly BridgedTool[]): string[] {
  if (tools.length === 0 || typeof pi.getAllTools !== "function") return [];
  const all = pi.getAllTools();
  if (!all.some((tool) => typeof tool.exposure === "string")) return [];
  if (all.some((tool) => tool.name === TOOL_SEARCH)) {
    if (!pi.getActiveTools().includes(TOOL_SEARCH)) pi.setActiveTools([...pi.getActiveTools(), TOOL_SEARCH]);
  } else {
    for (const tool of tools)
      if (!DIRECT_TOOLS.has(tool.mcpName)) pi.registerTool({ ...tool, exposure: "direct" } as RegisteredTool);
  }
  const aliases: string[] = [];
  for (const tool of tools) {
    const alias = normalizedToolName(tool.name);
    if (alias === tool.name || all.some((existing) => existing.name === alias)) continue;
    pi.registerTool({ ...tool, name: alias, exposure: "hidden" } as RegisteredTool);
    aliases.push(alias);
  }
  return aliases;
}

function readState(file: string | undefined): ExtensionSessionState {
  if (file === undefined || file === "") return { runtimeMode: "approval-required" };
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<ExtensionSessionState>;
    const mode = parsed.runtimeMode;
    const mcpToken = typeof parsed.mcpToken === "string" && parsed.mcpToken !== "" ? { mcpToken: parsed.mcpToken } : {};
    const rules = parsed.toolRules !== undefined ? { toolRules: parsed.toolRules } : {};
    if (mode === "full-access" || mode === "auto-accept-edits" || mode === "approval-required")
      return { runtimeMode: mode, ...mcpToken, ...rules };
    return { runtimeMode: "approval-required", ...mcpToken, ...rules };
  } catch {
    // fall through: the strictest mode
  }
  return { runtimeMode: "approval-required" };
}

/**
 * Whether a profile rule names a call: the sdk's `toolRuleMatches`, repeated here because Pi
 * loads this file on its own from the plugin's cache, where no `@switchyard/sdk` resolves. A rule
 * is a tool name (`*` any run, case-insensitive) with an optional argument pattern in
 * parentheses (a trailing `:*` is any rest).
 */
function ruleMatches(rule: string, toolName: string, argument: string | null): boolean {
  const glob = (pattern: string, flags: string) =>
    new RegExp(
      `^${pattern
        .split("*")
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
      flags,
    );
  const open = rule.indexOf("(");
  const namePattern = open === -1 ? rule : rule.slice(0, open);
  if (!glob(namePattern.trim(), "i").test(toolName)) return false;
  if (open === -1 || !rule.endsWith(")")) return open === -1;
  return argument !== null && glob(rule.slice(open + 1, -1).replace(/:\*$/, "*"), "").test(argument);
}

/** The argument a rule's pattern is matched against: a command line, else a path. */
function mainArgument(event: ToolCallEvent): string | null {
  const input = (event.input ?? {}) as Record<string, unknown>;
  for (const key of ["command", "path", "pattern"]) if (typeof input[key] === "string") return input[key];
  return null;
}

/**
 * What the session's profile rules say of a call, strictest first (the sdk's `toolRuleVerdict`):
 * `deny`, `ask` (asks in every mode), `allow` (runs without asking), or `default` (the runtime
 * mode decides). With `allowOnly`, Pi's own tools no allow or ask rule names are denied; the
 * Switchyard tools and `tool_search` are exempt (orchestration needs them).
 */
function ruleVerdict(
  event: ToolCallEvent,
  bridged: ReadonlySet<string>,
  state: ExtensionSessionState,
): "deny" | "ask" | "allow" | "default" {
  const rules = state.toolRules;
  if (rules === undefined) return "default";
  const argument = mainArgument(event);
  const named = (list: readonly string[]) => list.some((rule) => ruleMatches(rule, event.toolName, argument));
  if (named(rules.deny)) return "deny";
  if (named(rules.ask)) return "ask";
  if (named(rules.allow)) return "allow";
  const exempt = bridged.has(event.toolName) || event.toolName === TOOL_SEARCH;
  return rules.allowOnly && !exempt ? "deny" : "default";
}

/** What a tool call needs under a runtime mode, or null when it may run. */
function approvalFor(
  event: ToolCallEvent,
  bridged: ReadonlySet<string>,
  state: ExtensionSessionState,
): ApprovalPrompt | null {
  const { toolName, toolCallId } = event;
  // The Switchyard tools check the caller's modes on the server side; tool_search only declares
  // tools (a call to what it found asks on its own).
  if (READ_ONLY_TOOLS.has(toolName) || bridged.has(toolName) || toolName === TOOL_SEARCH) return null;
  if (state.runtimeMode === "full-access") return null;
  const input = (event.input ?? {}) as Record<string, unknown>;
  if (FILE_CHANGE_TOOLS.has(toolName)) {
    if (state.runtimeMode === "auto-accept-edits") return null;
    const path = typeof input["path"] === "string" ? input["path"] : "(unknown file)";
    const body = typeof input["content"] === "string" ? input["content"] : JSON.stringify(input);
    return { toolCallId, toolName, approvalKind: "file-change", title: `${toolName} ${path}`, detail: truncate(body) };
  }
  if (toolName === "bash") {
    const command = typeof input["command"] === "string" ? input["command"] : JSON.stringify(input);
    return { toolCallId, toolName, approvalKind: "command", title: truncate(command, 500) };
  }
  return { toolCallId, toolName, approvalKind: "permission", title: toolName, detail: truncate(JSON.stringify(input)) };
}

/** Pi's extension entry point. */
export default async function switchyardExtension(pi: ExtensionAPI): Promise<void> {
  const env = process.env;

  const { tools, problem } = await registerMcpTools(pi, env);
  const bridged = new Set(tools.map((tool) => tool.name));
  if (problem !== null) process.stderr.write(`[switchyard] MCP tools unavailable: ${problem}\n`);

  pi.on("session_start", (_event, ctx: ExtensionContext) => {
    if (problem !== null) ctx.ui.notify(`Switchyard MCP tools are unavailable: ${problem}`, "warning");
    for (const alias of finishRegistration(pi, tools)) bridged.add(alias);
  });

  // Approvals granted "for the session" last as long as this process (one Pi process per session).
  const sessionGrants = new Set<string>();
  pi.on("tool_call", async (event, ctx) => {
    const state = readState(env[EXTENSION_ENV.stateFile]);
    const verdict = ruleVerdict(event, bridged, state);
    if (verdict === "deny")
      return { block: true, reason: `The session's profile does not allow this ${event.toolName} call.` };
    if (verdict === "allow") return undefined;
    // An ask rule asks in every mode, each time (no grant for the session spares it).
    const prompt =
      verdict === "ask"
        ? (approvalFor(event, bridged, { runtimeMode: "approval-required" }) ?? {
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            approvalKind: "permission" as const,
            title: event.toolName,
            detail: truncate(JSON.stringify(event.input ?? {})),
          })
        : approvalFor(event, bridged, state);
    if (prompt === null) return undefined;
    const grant = `${prompt.approvalKind}:${prompt.toolName}`;
    if (verdict !== "ask" && sessionGrants.has(grant)) return undefined;
    if (!ctx.hasUI)
      return { block: true, reason: `This session needs approval for ${prompt.toolName}, and no client can give it.` };
    const choice = await ctx.ui.select(
      `${APPROVAL_TITLE_PREFIX}${JSON.stringify(prompt)}`,
      [...APPROVAL_CHOICES],
      ctx.signal ? { signal: ctx.signal } : undefined,
    );
    if (choice === "accept") return undefined;
    if (choice === "accept_for_session") {
      sessionGrants.add(grant);
      return undefined;
    }
    return {
      block: true,
      reason:
        choice === "decline"
          ? `The user declined this ${prompt.toolName} call.`
          : `The approval request for this ${prompt.toolName} call was cancelled.`,
    };
  });
}
