import { cleanUserText, toolOutputSnippet } from "../model-server/conversation.js";
import { DEFAULT_REPLY } from "../model-server/decision.js";
import { parseScript, type ScriptStep, type ToolArguments } from "../model-server/script.js";
import {
  mcpResultText,
  mcpToolResultOf,
  parsedShellCommand,
  shellResultText,
  type AgentClientMessageJson,
  type ExecClientMessageJson,
  type FakeTurnRecord,
  type InjectContextActionJson,
  type McpStateServerJson,
  type RunRequestJson,
  type SteerAnswer,
} from "./cursor-wire-json.js";

/** A tool call the fake's agent loop made in a run. */
export interface FakeCursorToolCall {
  readonly callId: string;
  readonly kind: "shell" | "mcp";
  /** The command, or the MCP tool's name as the client listed it (`switchyard-delegate_task`). */
  readonly name: string;
  readonly args: unknown;
  /** The result's text, once the client answered. */
  output: string | null;
}

/** A steer the client sent into a run, and how the fake answered it. */
export interface FakeCursorSteer {
  readonly text: string;
  readonly injectionId: string;
  readonly answer: SteerAnswer;
}

/** What the fake reported at the end of a turn (`turn_ended`). */
export interface FakeCursorUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/** One run as the fake backend saw it: the stream a `RunSSE` call opened. */
export interface FakeCursorRunRecord {
  /** The Bidi request id (the SDK's run request id). */
  readonly requestId: string;
  /** The agent id the SDK sent as `conversation_id`. */
  readonly conversationId: string;
  /** The user's text with injected context (`<switchyard_instructions>`) removed. */
  readonly userText: string;
  /** The user's text as sent. */
  readonly rawUserText: string;
  /** The model the client asked for. */
  readonly model: string | null;
  /** Earlier user messages, read back from the checkpoint the client sent (`conversation_state`). */
  readonly history: readonly string[];
  readonly steers: FakeCursorSteer[];
  readonly toolCalls: FakeCursorToolCall[];
  /** The MCP servers the client reported when the fake asked (null until it asked). */
  mcpServers: readonly McpStateServerJson[] | null;
  status: "running" | "finished" | "cancelled" | "failed";
  /** The gate the run is held on, while it is. */
  heldOn: string | null;
  /** The final reply text. */
  reply: string | null;
  usage: FakeCursorUsage | null;
  /** The kinds of every client message of this run, in order (`runRequest`, `execClientMessage`…). */
  readonly clientMessages: string[];
}

/** What a run needs from the backend. */
export interface FakeRunHost {
  /** Waits until a gate is released (latched); resolves false when the run ended first. */
  hold(gate: string, cancelled: Promise<void>): Promise<boolean>;
  /** How the next steer is answered. */
  steerAnswer(): SteerAnswer;
  readonly checkpoints: boolean;
  readonly chunkSize: number;
  readonly heartbeatMs: number;
  /** Something about the run changed (for waiters). */
  changed(): void;
  log(line: string): void;
}

/** Writes server messages into the open `RunSSE` response. */
export interface FakeRunStream {
  send(message: Record<string, unknown>): void;
  /**
   * Ends the stream, with a Connect error when the run failed (`status` is the scripted
   * HTTP-style status the backend's error detail is derived from).
   */
  end(error?: FakeRunError): void;
}

/** Why a run failed, as the fake reports it. */
export interface FakeRunError {
  readonly code: string;
  readonly message: string;
  readonly status?: number;
}

class RunEnded extends Error {}

/**
 * The Connect error code for a scripted failure's HTTP-style status (`@@fail 400 …`). The SDK
 * retries server errors (`internal`, `unavailable`) a few times with backoff and gives up at
 * once on client errors.
 */
export function connectCodeOf(status: number): string {
  switch (status) {
    case 400:
      return "invalid_argument";
    case 401:
      return "unauthenticated";
    case 403:
      return "permission_denied";
    case 404:
      return "not_found";
    case 409:
      return "aborted";
    case 429:
      return "resource_exhausted";
    case 503:
      return "unavailable";
    default:
      return status >= 400 && status < 500 ? "failed_precondition" : "internal";
  }
}

function decodeTurns(turns: readonly string[] | undefined): FakeTurnRecord[] {
  const records: FakeTurnRecord[] = [];
  for (const turn of turns ?? []) {
    try {
      const parsed = JSON.parse(Buffer.from(turn, "base64").toString("utf8")) as Partial<FakeTurnRecord>;
      if (typeof parsed.user === "string")
        records.push({ user: parsed.user, steers: parsed.steers ?? [], assistant: parsed.assistant ?? "" });
    } catch {
      // a checkpoint the fake did not write
    }
  }
  return records;
}

let callCounter = 0;

/**
 * One run of the fake Cursor backend's agent loop. Cursor's agent loop runs on its backend, so
 * the fake plays the model and the loop together: it reads the scripted model server's
 * directives from the user's text (`@@reply`, `@@shell`, `@@tool`, `@@hold`, `@@wait`, `@@fail`,
 * `@@then`; `{{output}}`, `{{output.<field>}}`, `{{tool}}`, `{{user}}`, `{{history}}`), asks
 * the client to run shell commands and MCP tools (`exec_server_message`), streams text and tool
 * updates, answers steers, sends a checkpoint and ends the turn with usage.
 */
export class FakeCursorRun {
  readonly record: FakeCursorRunRecord;
  readonly #host: FakeRunHost;
  readonly #stream: FakeRunStream;
  readonly #turns: FakeTurnRecord[];
  readonly #execs = new Map<number, (message: ExecClientMessageJson) => void>();
  #nextExecId = 1;
  #ended = false;
  #markEnded!: () => void;
  /** Settles when the run ended, whichever way. */
  readonly ended = new Promise<void>((resolve) => (this.#markEnded = resolve));
  #heartbeat: NodeJS.Timeout | null = null;

  constructor(requestId: string, request: RunRequestJson, stream: FakeRunStream, host: FakeRunHost) {
    this.#host = host;
    this.#stream = stream;
    this.#turns = decodeTurns(request.conversationState?.turns);
    const raw = request.action?.userMessageAction?.userMessage?.text ?? "";
    this.record = {
      requestId,
      conversationId: request.conversationId ?? "",
      userText: cleanUserText(raw),
      rawUserText: raw,
      model: request.requestedModel?.modelId ?? null,
      history: this.#turns.flatMap((turn) => [turn.user, ...turn.steers]),
      steers: [],
      toolCalls: [],
      mcpServers: null,
      status: "running",
      heldOn: null,
      reply: null,
      usage: null,
      clientMessages: ["runRequest"],
    };
  }

  /** Everything the "model" received in this run: history, the user's text, the steers delivered. */
  get modelInput(): string {
    return [
      ...this.#turns.map((turn) => JSON.stringify(turn)),
      this.record.rawUserText,
      ...this.record.steers.filter((s) => s.answer === "delivered").map((s) => s.text),
    ].join("\n");
  }

  /** Plays the script; resolves when the run ended. */
  async play(): Promise<void> {
    this.#heartbeat = setInterval(() => this.#send({ interactionUpdate: { heartbeat: {} } }), this.#host.heartbeatMs);
    this.#heartbeat.unref();
    try {
      const parsed = parseScript(this.record.userText);
      if (parsed !== undefined && parsed.errors.length > 0) {
        await this.#reply(`SCRIPT ERROR: ${parsed.errors.join("; ")}`);
        return;
      }
      await this.#playSteps(parsed?.steps ?? []);
    } catch (error) {
      if (!(error instanceof RunEnded)) {
        this.#host.log(
          `fake cursor backend: run ${this.record.requestId} failed: ${(error as Error).stack ?? String(error)}`,
        );
        this.#finish("failed", {
          code: "internal",
          message: `fake cursor backend: ${(error as Error).message}`,
          status: 500,
        });
      }
    }
  }

  async #playSteps(steps: readonly ScriptStep[]): Promise<void> {
    let last: { tool: string; output: string } | null = null;
    for (let index = 0; ; index++) {
      const step = steps[index];
      if (step === undefined) {
        await this.#reply(last === null ? DEFAULT_REPLY : `DONE after ${last.tool}: ${toolOutputSnippet(last.output)}`);
        return;
      }
      if (step.waitMs !== undefined && step.waitMs > 0) await this.#pause(step.waitMs);
      if (step.hold !== undefined) await this.#holdOn(step.hold);
      const fill = (text: string) => this.#substitute(text, last);
      if ("reply" in step) return this.#reply(fill(step.reply));
      if ("echo" in step) return this.#reply(parseScript(this.record.userText)?.prose ?? this.record.userText);
      if ("fail" in step) {
        this.#finish("failed", {
          code: connectCodeOf(step.status ?? 500),
          message: step.fail,
          status: step.status ?? 500,
        });
        return;
      }
      if ("shell" in step) {
        last = { tool: "shell", output: await this.#shell(fill(step.shell)) };
        continue;
      }
      if ("tool" in step) {
        const called = await this.#mcp(step.tool, this.#substituteArgs(step.args ?? {}, last));
        if (called === null) return;
        last = called;
        continue;
      }
      // Timing alone plays the default reply.
      await this.#reply(last === null ? DEFAULT_REPLY : `DONE after ${last.tool}: ${toolOutputSnippet(last.output)}`);
      return;
    }
  }

  /** A client message for this run (after the run request). */
  onClientMessage(message: AgentClientMessageJson): void {
    this.record.clientMessages.push(Object.keys(message)[0] ?? "empty");
    if (message.execClientMessage !== undefined) {
      const id = message.execClientMessage.id ?? 0;
      const waiter = this.#execs.get(id);
      this.#execs.delete(id);
      waiter?.(message.execClientMessage);
    } else if (message.conversationAction?.injectContextAction !== undefined) {
      this.#steer(message.conversationAction.injectContextAction);
    }
    this.#host.changed();
  }

  /** The client closed the stream: that is how `run.cancel()` reaches the backend. */
  onClientGone(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.record.status = "cancelled";
    this.record.heldOn = null;
    this.#stop();
  }

  #steer(action: InjectContextActionJson): void {
    const answer = this.#ended ? "none" : this.#host.steerAnswer();
    const text = action.userContext?.userMessage?.text ?? "";
    this.record.steers.push({ text, injectionId: action.injectionId ?? "", answer });
    if (answer === "none" || this.#ended) return;
    this.#send({
      interactionUpdate: { contextInjectionState: { injectionId: action.injectionId ?? "", state: { [answer]: {} } } },
    });
  }

  #substitute(text: string, last: { tool: string; output: string } | null): string {
    return text
      .replace(/\{\{output\.([A-Za-z0-9_]+)\}\}/g, (_match, field: string) => {
        const found = new RegExp(`\\\\?"${field}\\\\?"\\s*:\\s*\\\\?"([^"\\\\]+)`).exec(last?.output ?? "");
        return found?.[1] ?? "";
      })
      .replace(/\{\{history\}\}/g, this.record.history.join(" | "))
      .replace(/\{\{output\}\}/g, last === null ? "" : toolOutputSnippet(last.output))
      .replace(/\{\{tool\}\}/g, last?.tool ?? "")
      .replace(/\{\{user\}\}/g, this.record.userText);
  }

  #substituteArgs(value: ToolArguments, last: { tool: string; output: string } | null): ToolArguments {
    const walk = (entry: unknown): unknown => {
      if (typeof entry === "string") return this.#substitute(entry, last);
      if (Array.isArray(entry)) return entry.map(walk);
      if (typeof entry === "object" && entry !== null)
        return Object.fromEntries(Object.entries(entry).map(([key, inner]) => [key, walk(inner)]));
      return entry;
    };
    return walk(value) as ToolArguments;
  }

  async #pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), this.ended]);
    clearTimeout(timer);
    this.#assertRunning();
  }

  async #holdOn(gate: string): Promise<void> {
    this.record.heldOn = gate;
    this.#host.changed();
    await this.#host.hold(gate, this.ended);
    this.record.heldOn = null;
    this.#assertRunning();
  }

  #assertRunning(): void {
    if (this.#ended) throw new RunEnded();
  }

  /** Sends an exec request and waits for the client's answer. */
  async #exec(request: Record<string, unknown>): Promise<ExecClientMessageJson> {
    this.#assertRunning();
    const id = this.#nextExecId++;
    const answered = new Promise<ExecClientMessageJson>((resolve) => this.#execs.set(id, resolve));
    this.#send({ execServerMessage: { id, execId: `exec-${id}`, ...request } });
    const answer = await Promise.race([answered, this.ended.then(() => null)]);
    if (answer === null) throw new RunEnded();
    return answer;
  }

  async #shell(command: string): Promise<string> {
    const callId = `toolu_cursor_${(++callCounter).toString(36)}`;
    const args = {
      command,
      workingDirectory: "",
      timeout: 300_000,
      toolCallId: callId,
      ...parsedShellCommand(command),
    };
    const call: FakeCursorToolCall = { callId, kind: "shell", name: command, args, output: null };
    this.record.toolCalls.push(call);
    this.#send({ interactionUpdate: { toolCallStarted: { callId, toolCall: { shellToolCall: { args } } } } });
    const answer = await this.#exec({ shellArgs: args });
    const result = answer.shellResult ?? {};
    call.output = shellResultText(result);
    this.#send({ interactionUpdate: { toolCallCompleted: { callId, toolCall: { shellToolCall: { args, result } } } } });
    return call.output;
  }

  /** Calls the MCP tool whose name ends with `suffix`; null when none is offered (the run replied so). */
  async #mcp(suffix: string, args: ToolArguments): Promise<{ tool: string; output: string } | null> {
    if (this.record.mcpServers === null) {
      const state = await this.#exec({ mcpStateExecArgs: {} });
      this.record.mcpServers = state.mcpStateExecResult?.success?.servers ?? [];
      this.#host.changed();
    }
    const offered = this.record.mcpServers.flatMap((server) => (server.tools ?? []).map((tool) => ({ server, tool })));
    const match = offered.find(({ tool }) => tool.toolName === suffix || (tool.name ?? "").endsWith(suffix));
    if (match === undefined) {
      const names = offered.map(({ tool }) => tool.name ?? "?").join(", ") || "none";
      const broken = this.record.mcpServers
        .filter((server) => server.status !== "connected")
        .map((server) => `${server.serverName}: ${server.status ?? "?"} ${server.errorMessage ?? ""}`.trim());
      await this.#reply(
        `TOOL NOT OFFERED: ${suffix}. Offered: ${names}${broken.length > 0 ? `. Not connected: ${broken.join("; ")}` : ""}`,
      );
      return null;
    }
    const callId = `toolu_cursor_${(++callCounter).toString(36)}`;
    const mcpArgs = {
      name: match.tool.name ?? suffix,
      args: typeof args === "string" ? { input: args } : args,
      toolCallId: callId,
      providerIdentifier: match.tool.providerIdentifier ?? match.server.serverIdentifier ?? "",
      toolName: match.tool.toolName ?? suffix,
    };
    const call: FakeCursorToolCall = { callId, kind: "mcp", name: mcpArgs.name, args: mcpArgs.args, output: null };
    this.record.toolCalls.push(call);
    this.#send({ interactionUpdate: { toolCallStarted: { callId, toolCall: { mcpToolCall: { args: mcpArgs } } } } });
    const answer = await this.#exec({ mcpArgs });
    const result = answer.mcpResult ?? {};
    call.output = mcpResultText(result);
    this.#send({
      interactionUpdate: {
        toolCallCompleted: { callId, toolCall: { mcpToolCall: { args: mcpArgs, result: mcpToolResultOf(result) } } },
      },
    });
    return { tool: mcpArgs.name, output: call.output };
  }

  /** Streams the reply, sends the checkpoint and ends the turn with usage. */
  async #reply(text: string): Promise<void> {
    this.#assertRunning();
    for (let offset = 0; offset < text.length; offset += this.#host.chunkSize) {
      this.#send({ interactionUpdate: { textDelta: { text: text.slice(offset, offset + this.#host.chunkSize) } } });
    }
    this.record.reply = text;
    if (this.#host.checkpoints) {
      const turn: FakeTurnRecord = {
        user: this.record.userText,
        steers: this.record.steers.filter((s) => s.answer === "delivered").map((s) => s.text),
        assistant: text,
      };
      const turns = [...this.#turns, turn].map((record) => Buffer.from(JSON.stringify(record)).toString("base64"));
      this.#send({ conversationCheckpointUpdate: { turns } });
    }
    // Deterministic figures from what the "model" read and wrote, about four characters a token.
    const usage: FakeCursorUsage = {
      inputTokens: Math.ceil(this.modelInput.length / 4),
      outputTokens: Math.ceil(text.length / 4),
      cacheReadTokens: this.#turns.length,
      cacheWriteTokens: 1,
    };
    this.record.usage = usage;
    this.#send({
      interactionUpdate: {
        turnEnded: {
          inputTokens: String(usage.inputTokens),
          outputTokens: String(usage.outputTokens),
          cacheReadTokens: String(usage.cacheReadTokens),
          cacheWriteTokens: String(usage.cacheWriteTokens),
        },
      },
    });
    this.#finish("finished");
  }

  #send(message: Record<string, unknown>): void {
    if (this.#ended) return;
    this.#stream.send(message);
  }

  #finish(status: "finished" | "failed", error?: FakeRunError): void {
    if (this.#ended) return;
    this.record.status = status;
    this.#ended = true;
    this.#stream.end(error);
    this.#stop();
  }

  #stop(): void {
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#execs.clear();
    this.#markEnded();
    this.#host.changed();
  }
}
