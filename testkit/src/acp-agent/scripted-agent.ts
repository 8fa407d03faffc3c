import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { parseAcpAgentScript, type AcpAgentScriptStep } from "./script.js";

/**
 * Vendor extension requests the scripted agent sends to the client, shaped like xAI's Grok CLI
 * (`_x.ai/ask_user_question`, `_x.ai/exit_plan_mode`). Off unless configured.
 */
export interface ScriptedAgentVendorExtensions {
  /** Method for structured questions: params `{sessionId, toolCallId, questions}`. */
  readonly askUserQuestion?: string;
  /** Method for leaving plan mode: params `{sessionId, toolCallId, planContent}`. */
  readonly exitPlanMode?: string;
}

/** The xAI method names, for `vendorExtensions`. */
export const XAI_VENDOR_EXTENSIONS: Required<ScriptedAgentVendorExtensions> = {
  askUserQuestion: "_x.ai/ask_user_question",
  exitPlanMode: "_x.ai/exit_plan_mode",
};

/** What the scripted agent advertises and how it behaves. Everything is JSON (it travels in argv). */
export interface ScriptedAcpAgentOptions {
  /** `agentInfo.name`. */
  readonly name?: string;
  /** `agentInfo.version`. */
  readonly version?: string;
  /** `agentCapabilities.loadSession` (default true). */
  readonly loadSession?: boolean;
  /** `sessionCapabilities.resume` (default false). */
  readonly resume?: boolean;
  /** `/unstable` `sessionCapabilities.fork` (default false). */
  readonly fork?: boolean;
  /** `mcpCapabilities` (default `{ http: true }`). */
  readonly mcp?: { readonly http?: boolean; readonly sse?: boolean };
  /** `authMethods` (default none). */
  readonly authMethods?: readonly { readonly id: string; readonly name: string }[];
  /** `session/new` fails with auth_required until `authenticate` succeeded. */
  readonly requireAuth?: boolean;
  /** Session modes (default none). The first is current. */
  readonly modes?: readonly { readonly id: string; readonly name: string }[];
  /** Models, offered as a `model` config option (default none). The first is current. */
  readonly models?: readonly string[];
  /** Vendor extension requests it may send. */
  readonly vendorExtensions?: ScriptedAgentVendorExtensions;
  /** Where sessions persist, so a new process can `session/load` them. Default: memory only. */
  readonly stateDir?: string;
  /** Ignores `session/cancel` (a misbehaving agent, to test the client's cancel timeout). */
  readonly ignoreCancel?: boolean;
  /**
   * Folder whose files are gates: `@gate <name>` waits until `<gateDir>/<name>` exists. Release
   * one with `releaseGate(gateDir, name)` from `@switchyard/testkit/scripted-provider`
   * (the same convention as the scripted provider's `@@gate`).
   */
  readonly gateDir?: string;
}

interface StoredSession {
  cwd: string;
  history: { user: string; agent: string }[];
  modeId: string | null;
  model: string | null;
}

interface LiveSession extends StoredSession {
  readonly id: string;
  mcpServers: acp.McpServer[];
  cancel: AbortController | null;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Waits until `file` exists or `signal` aborts (polling: fs.watch misses renames on some filesystems). */
function waitForFile(file: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || existsSync(file)) return resolve();
    const timer = setInterval(() => {
      if (existsSync(file)) finish();
    }, 50);
    const finish = () => {
      clearInterval(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    };
    signal.addEventListener("abort", finish, { once: true });
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Parses `@ask` text: JSON `{questions:[…]}` or `Question? | option, option`. */
function askQuestions(text: string): unknown[] {
  if (text.trim().startsWith("{")) return (JSON.parse(text) as { questions: unknown[] }).questions;
  const [question, options] = text.split("|").map((part) => part.trim());
  return [
    {
      question: question ?? "",
      options: (options ?? "")
        .split(",")
        .map((label) => label.trim())
        .filter(Boolean)
        .map((label) => ({ label, description: "" })),
      multiSelect: false,
    },
  ];
}

/**
 * A protocol-faithful ACP agent driven by a script in the prompt text (see `script.ts`). Built
 * on the SDK's agent side; run it as a child process (`bin.js`) so clients are tested over
 * real stdio, or connect it in-process.
 */
export function createScriptedAcpAgent(
  options: ScriptedAcpAgentOptions = {},
  exit: (code: number) => void = (code) => process.exit(code),
): acp.AgentApp {
  const sessions = new Map<string, LiveSession>();
  let authenticated = false;
  let clientCapabilities: acp.ClientCapabilities = {};
  let toolCounter = 0;

  const storePath = (id: string) =>
    options.stateDir ? path.join(options.stateDir, `${id.replace(/[^A-Za-z0-9_-]/g, "_")}.json`) : null;
  const persist = (session: LiveSession) => {
    const file = storePath(session.id);
    if (file === null) return;
    mkdirSync(path.dirname(file), { recursive: true });
    const stored: StoredSession = {
      cwd: session.cwd,
      history: session.history,
      modeId: session.modeId,
      model: session.model,
    };
    writeFileSync(file, JSON.stringify(stored));
  };
  const restore = (id: string): StoredSession | null => {
    const live = sessions.get(id);
    if (live) return live;
    const file = storePath(id);
    if (file === null) return null;
    try {
      return JSON.parse(readFileSync(file, "utf8")) as StoredSession;
    } catch {
      return null;
    }
  };

  const modeState = (session: StoredSession): acp.SessionModeState | undefined =>
    options.modes && options.modes.length > 0 && session.modeId !== null
      ? {
          currentModeId: session.modeId,
          availableModes: options.modes.map((mode) => ({ id: mode.id, name: mode.name })),
        }
      : undefined;
  const configOptions = (session: StoredSession): acp.SessionConfigOption[] | undefined =>
    options.models && options.models.length > 0 && session.model !== null
      ? [
          {
            id: "model",
            name: "Model",
            category: "model",
            type: "select",
            currentValue: session.model,
            options: options.models.map((value) => ({ value, name: value })),
          },
        ]
      : undefined;
  const setup = (session: StoredSession) => {
    const modes = modeState(session);
    const config = configOptions(session);
    return { ...(modes ? { modes } : {}), ...(config ? { configOptions: config } : {}) };
  };
  const open = (id: string, stored: StoredSession, cwd: string, mcpServers: acp.McpServer[]): LiveSession => {
    const live: LiveSession = { ...stored, id, cwd, mcpServers, cancel: null };
    sessions.set(id, live);
    return live;
  };
  const sessionOf = (id: string): LiveSession => {
    const session = sessions.get(id);
    if (!session) throw acp.RequestError.sessionNotFound(id);
    return session;
  };

  const app = acp.agent({ name: options.name ?? "scripted-acp-agent" });
  app
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientCapabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: options.loadSession ?? true,
          promptCapabilities: { image: false, audio: false, embeddedContext: false },
          mcpCapabilities: { http: options.mcp?.http ?? true, sse: options.mcp?.sse ?? false },
          sessionCapabilities: {
            ...(options.resume ? { resume: {} } : {}),
            ...(options.fork ? { fork: {} } : {}),
            close: {},
          },
        },
        authMethods: (options.authMethods ?? []).map((method) => ({ id: method.id, name: method.name })),
        agentInfo: { name: options.name ?? "scripted-acp-agent", version: options.version ?? "0.0.0" },
      };
    })
    .onRequest(acp.methods.agent.authenticate, ({ params }) => {
      if (!(options.authMethods ?? []).some((method) => method.id === params.methodId)) {
        throw acp.RequestError.invalidParams({ methodId: params.methodId }, "unknown auth method");
      }
      authenticated = true;
      return {};
    })
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      if (options.requireAuth && !authenticated) throw acp.RequestError.authRequired();
      const id = `sess-${randomUUID()}`;
      const stored: StoredSession = {
        cwd: params.cwd,
        history: [],
        modeId: options.modes?.[0]?.id ?? null,
        model: options.models?.[0] ?? null,
      };
      const live = open(id, stored, params.cwd, params.mcpServers);
      persist(live);
      return { sessionId: id, ...setup(live) };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      if (options.loadSession === false) throw acp.RequestError.methodNotFound(acp.methods.agent.session.load);
      const stored = restore(params.sessionId);
      if (stored === null) throw acp.RequestError.sessionNotFound(params.sessionId);
      const live = open(params.sessionId, stored, params.cwd, params.mcpServers);
      for (const turn of live.history) {
        await client.notify(acp.methods.client.session.update, {
          sessionId: live.id,
          update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: turn.user } },
        });
        await client.notify(acp.methods.client.session.update, {
          sessionId: live.id,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: turn.agent } },
        });
      }
      return setup(live);
    })
    .onRequest(acp.methods.agent.session.resume, ({ params }) => {
      if (!options.resume) throw acp.RequestError.methodNotFound(acp.methods.agent.session.resume);
      const stored = restore(params.sessionId);
      if (stored === null) throw acp.RequestError.sessionNotFound(params.sessionId);
      return setup(open(params.sessionId, stored, params.cwd, params.mcpServers ?? []));
    })
    .onRequest(acp.methods.agent.session.fork, ({ params }) => {
      if (!options.fork) throw acp.RequestError.methodNotFound(acp.methods.agent.session.fork);
      // Any session it knows, as session/load does: live in this process or saved under stateDir.
      const source = restore(params.sessionId);
      if (source === null) throw acp.RequestError.sessionNotFound(params.sessionId);
      const id = `sess-${randomUUID()}`;
      const live = open(
        id,
        { ...source, history: source.history.map((turn) => ({ ...turn })) },
        params.cwd,
        params.mcpServers ?? [],
      );
      persist(live);
      return { sessionId: id, ...setup(live) };
    })
    .onRequest(acp.methods.agent.session.close, ({ params }) => {
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest(acp.methods.agent.session.setMode, async ({ params, client }) => {
      const session = sessionOf(params.sessionId);
      if (!(options.modes ?? []).some((mode) => mode.id === params.modeId))
        throw acp.RequestError.invalidParams({ modeId: params.modeId });
      session.modeId = params.modeId;
      persist(session);
      await client.notify(acp.methods.client.session.update, {
        sessionId: session.id,
        update: { sessionUpdate: "current_mode_update", currentModeId: params.modeId },
      });
      return {};
    })
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
      const session = sessionOf(params.sessionId);
      const value = (params as { value: unknown }).value;
      if (params.configId !== "model" || typeof value !== "string" || !(options.models ?? []).includes(value)) {
        throw acp.RequestError.invalidParams({ configId: params.configId, value });
      }
      session.model = value;
      persist(session);
      return { configOptions: configOptions(session) ?? [] };
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      if (options.ignoreCancel) return;
      sessions.get(params.sessionId)?.cancel?.abort();
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
      const session = sessionOf(params.sessionId);
      const cancel = new AbortController();
      session.cancel = cancel;
      const abortOnRequest = () => cancel.abort();
      signal.addEventListener("abort", abortOnRequest, { once: true });
      const promptText = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("\n");
      let reply = "";
      const update = (value: acp.SessionUpdate) =>
        client.notify(acp.methods.client.session.update, { sessionId: session.id, update: value });
      const stream = async (kind: "agent_message_chunk" | "agent_thought_chunk", text: string) => {
        for (const piece of text.match(/\S+\s*|\s+/g) ?? []) {
          if (kind === "agent_message_chunk") reply += piece;
          await update({ sessionUpdate: kind, content: { type: "text", text: piece } });
        }
      };
      const say = (text: string) =>
        stream("agent_message_chunk", reply.length > 0 && !reply.endsWith("\n") ? `\n${text}` : text);
      const nextToolId = () => `tool-${++toolCounter}`;
      const absolute = (p: string) => (path.isAbsolute(p) ? p : path.join(session.cwd, p));

      const run = async (step: AcpAgentScriptStep): Promise<acp.StopReason | null> => {
        switch (step.op) {
          case "say":
            await say(step.text);
            return null;
          case "think":
            await stream("agent_thought_chunk", step.text);
            return null;
          case "tool": {
            const toolCallId = nextToolId();
            await update({
              sessionUpdate: "tool_call",
              toolCallId,
              title: step.title,
              kind: step.kind as acp.ToolKind,
              status: "in_progress",
            });
            await update({
              sessionUpdate: "tool_call_update",
              toolCallId,
              status: "completed",
              content: [{ type: "content", content: { type: "text", text: `${step.title}: ok` } }],
            });
            return null;
          }
          case "permission": {
            const toolCallId = nextToolId();
            const toolCall = { toolCallId, title: step.title, kind: step.kind as acp.ToolKind };
            await update({ sessionUpdate: "tool_call", ...toolCall, status: "pending" });
            const permissionOptions: acp.PermissionOption[] = [
              { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
              { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
              { optionId: "reject-once", name: "Reject", kind: "reject_once" },
              { optionId: "reject-always", name: "Always reject", kind: "reject_always" },
            ];
            const response: acp.RequestPermissionResponse = await client.request(
              acp.methods.client.session.requestPermission,
              {
                sessionId: session.id,
                toolCall,
                options: permissionOptions,
              },
            );
            const outcome =
              response.outcome.outcome === "selected" ? `selected ${response.outcome.optionId}` : "cancelled";
            const allowed = response.outcome.outcome === "selected" && response.outcome.optionId.startsWith("allow");
            await update({ sessionUpdate: "tool_call_update", toolCallId, status: allowed ? "completed" : "failed" });
            await say(`permission: ${outcome}`);
            return null;
          }
          case "ask": {
            const method = options.vendorExtensions?.askUserQuestion;
            if (!method) {
              await say("ask: unsupported");
              return null;
            }
            const toolCallId = nextToolId();
            await update({
              sessionUpdate: "tool_call",
              toolCallId,
              title: "AskUserQuestion",
              kind: "other",
              status: "pending",
            });
            const response = await client.request<{ outcome: string; answers?: Record<string, string> }>(method, {
              sessionId: session.id,
              toolCallId,
              questions: askQuestions(step.text),
            });
            await update({
              sessionUpdate: "tool_call_update",
              toolCallId,
              status: response.outcome === "answered" ? "completed" : "failed",
            });
            await say(
              response.outcome === "answered"
                ? `answers: ${JSON.stringify(response.answers ?? {})}`
                : `question: ${response.outcome}`,
            );
            return null;
          }
          case "exit-plan": {
            const method = options.vendorExtensions?.exitPlanMode;
            if (!method) {
              await say("exit-plan: unsupported");
              return null;
            }
            const toolCallId = nextToolId();
            await update({
              sessionUpdate: "tool_call",
              toolCallId,
              title: "ExitPlanMode",
              kind: "switch_mode",
              status: "pending",
            });
            const response = await client.request<{ outcome: string; feedback?: string }>(method, {
              sessionId: session.id,
              toolCallId,
              planContent: step.text,
            });
            await update({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
            await say(`plan: ${response.outcome}${response.feedback ? ` (${response.feedback})` : ""}`);
            if (response.outcome !== "approved") return "end_turn";
            return null;
          }
          case "plan":
            await update({
              sessionUpdate: "plan",
              entries: step.text
                .split(";")
                .map((content) => ({ content: content.trim(), priority: "medium", status: "pending" })),
            });
            return null;
          case "elicit": {
            if (!clientCapabilities.elicitation?.form) {
              await say("elicitation: unsupported by the client");
              return null;
            }
            const response: acp.CreateElicitationResponse = await client.request(
              acp.methods.client.elicitation.create,
              {
                sessionId: session.id,
                mode: "form",
                message: "The agent needs input",
                requestedSchema: JSON.parse(step.text) as acp.ElicitationSchema,
              },
            );
            await say(`elicitation: ${JSON.stringify(response)}`);
            return null;
          }
          case "mcp":
            await callMcp(step.tool, step.args);
            return null;
          case "read":
            try {
              const { content } = await client.request(acp.methods.client.fs.readTextFile, {
                sessionId: session.id,
                path: absolute(step.path),
              });
              await say(`read: ${content}`);
            } catch (error) {
              await say(`read error: ${errorMessage(error)}`);
            }
            return null;
          case "write":
            try {
              await client.request(acp.methods.client.fs.writeTextFile, {
                sessionId: session.id,
                path: absolute(step.path),
                content: step.content,
              });
              await say(`wrote: ${step.path}`);
            } catch (error) {
              await say(`write error: ${errorMessage(error)}`);
            }
            return null;
          case "sleep":
            await wait(step.ms, cancel.signal);
            return null;
          case "hold":
            await wait(2_147_483_647, cancel.signal);
            return null;
          case "gate":
            if (!options.gateDir) {
              await say("gate error: the agent has no gateDir");
              return null;
            }
            await waitForFile(path.join(options.gateDir, path.basename(step.name)), cancel.signal);
            return null;
          case "fail":
            throw new acp.RequestError(-32603, step.text || "scripted failure");
          case "crash":
            exit(step.code);
            await wait(2_147_483_647, cancel.signal);
            return null;
          case "refuse":
            return "refusal";
          case "stop":
            return step.text as acp.StopReason;
          case "echo-prompt":
            await say(promptText);
            return null;
          case "report-mcp":
            await say(JSON.stringify(session.mcpServers));
            return null;
          case "history":
            await say(
              `history: ${session.history.length} turns; ${JSON.stringify(session.history.map((turn) => turn.user))}`,
            );
            return null;
          case "pid":
            await say(`pid: ${process.pid}`);
            return null;
          case "state":
            await say(`mode: ${session.modeId ?? "none"}; model: ${session.model ?? "none"}`);
            return null;
        }
      };

      const callMcp = async (tool: string, args: Record<string, unknown>) => {
        const server = session.mcpServers[0];
        if (!server) {
          await say("mcp error: no MCP server was injected");
          return;
        }
        const toolCallId = nextToolId();
        await update({
          sessionUpdate: "tool_call",
          toolCallId,
          title: `${server.name}/${tool}`,
          name: `mcp__${server.name}__${tool}`,
          kind: "other",
          status: "in_progress",
          rawInput: args,
        });
        const mcpClient = new Client({ name: "scripted-acp-agent", version: "0.0.0" });
        try {
          const transport =
            "type" in server && (server.type === "http" || server.type === "sse")
              ? new StreamableHTTPClientTransport(new URL(server.url), {
                  requestInit: {
                    headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])),
                  },
                })
              : new StdioClientTransport({
                  command: (server as acp.McpServerStdio).command,
                  args: (server as acp.McpServerStdio).args,
                  env: Object.fromEntries((server as acp.McpServerStdio).env.map((entry) => [entry.name, entry.value])),
                });
          await mcpClient.connect(transport);
          const result = await mcpClient.callTool({ name: tool, arguments: args });
          const text = (result.content as { type: string; text?: string }[])
            .filter((block) => block.type === "text")
            .map((block) => block.text ?? "")
            .join("\n");
          await update({
            sessionUpdate: "tool_call_update",
            toolCallId,
            status: result.isError ? "failed" : "completed",
            content: [{ type: "content", content: { type: "text", text } }],
          });
          await say(`mcp: ${text}`);
        } catch (error) {
          await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
          await say(`mcp error: ${errorMessage(error)}`);
        } finally {
          await mcpClient.close().catch(() => undefined);
        }
      };

      try {
        let stopReason: acp.StopReason = "end_turn";
        for (const step of parseAcpAgentScript(promptText)) {
          if (cancel.signal.aborted) break;
          const stop = await run(step);
          if (stop !== null) {
            stopReason = stop;
            break;
          }
        }
        if (cancel.signal.aborted) stopReason = "cancelled";
        session.history.push({ user: promptText, agent: reply });
        persist(session);
        return { stopReason };
      } finally {
        signal.removeEventListener("abort", abortOnRequest);
        if (session.cancel === cancel) session.cancel = null;
      }
    });
  return app;
}

/** Runs the scripted agent on this process's stdin/stdout until the client goes away. */
export async function runScriptedAcpAgentOverStdio(options: ScriptedAcpAgentOptions = {}): Promise<void> {
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = createScriptedAcpAgent(options, (code) => {
    // Let the last messages reach the pipe, then die like a crashing agent would.
    setTimeout(() => process.exit(code), 20);
  }).connect(stream);
  await connection.closed;
}
