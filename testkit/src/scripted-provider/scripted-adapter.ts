import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import {
  SPECIFICATION_VERSION,
  SwitchyardError,
  UnsupportedCapabilityError,
  type AdapterEvent,
  type ForkInput,
  type InterruptInput,
  type McpEndpointGrant,
  type ModelSource,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type ProbeOptions,
  type ProviderCapabilities,
  type ProviderSession,
  type ProviderStatus,
  type RuntimeRequestResponse,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
  type TurnUsageReport,
} from "@switchyard/spec";
import { addUsage, sessionEnvironment, toolRuleVerdict } from "@switchyard/sdk";
import { parseProviderScript, type ProviderScriptStep } from "./scripted-script.js";

/** Options of a scripted provider instance (its `options` in config.json). */
export interface ScriptedProviderOptions {
  /** Folder whose files are gates: `@@gate name` waits until `<gateDir>/<name>` exists. */
  readonly gateDir?: string;
  /** Folder where conversations are kept, so a resumed session (even in a new process) has them. */
  readonly stateDir?: string;
  /** Models to advertise. */
  readonly models?: readonly string[];
  /** The model the probe marks `isDefault` (default: the first). */
  readonly defaultModel?: string;
  /** Where the probe says each model comes from (`ModelDescriptor.source`), by model id. */
  readonly modelSources?: Readonly<Record<string, ModelSource>>;
  /** The reasoning efforts each model takes (`ModelDescriptor.efforts`), by model id. */
  readonly modelEfforts?: Readonly<Record<string, readonly string[]>>;
  /** What the status probe reports. */
  readonly status?: ScriptedStatus;
  /**
   * A JSON file ({@link ScriptedStatus}) the probe reads each time, over `status`, so a test can
   * change it; a session fails to open while it says not installed or not executable.
   */
  readonly statusFile?: string;
  /** A gate in `gateDir` every probe waits for (a slow harness). */
  readonly probeGate?: string;
  /** A file each probe appends its depth to, one line per probe (so a test can count them). */
  readonly probeLog?: string;
  /** A delay before every reply, in milliseconds. */
  readonly replyDelayMs?: number;
}

/** What a scripted probe reports; omitted fields are true. */
export interface ScriptedStatus {
  readonly installed?: boolean;
  readonly executable?: boolean;
  readonly authenticated?: boolean | "unknown";
}

interface Exchange {
  user: string;
  /** Null while the turn runs: a process killed mid-turn leaves it pending. */
  assistant: string | null;
  /** The script the turn ran (so a continuation after a crash can run it again). */
  script?: string;
}

interface ActiveTurn {
  readonly input: TurnInput;
  readonly abort: AbortController;
  readonly steers: string[];
  readonly pending: Map<string, (response: RuntimeRequestResponse | null) => void>;
  interruptStatus: "interrupted" | "cancelled" | null;
  /** `@@refuse-steers`: every steer into this turn fails. */
  readonly refusesSteers: boolean;
  /** What the turn's `@@usage` steps reported so far (null: none, so the turn reports no usage). */
  usage: TurnUsageReport | null;
  /** The reply's message item, which `@@say` streams into before the reply completes it. */
  readonly messageItemId: string;
  /** What `@@say` streamed so far. */
  said: string;
}

/** Runs a command with sh in a folder: its combined output and exit code (127 when sh itself could not run). */
function runShell(
  command: string,
  cwd: string,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv,
): Promise<{ output: string; exitCode: number }> {
  return new Promise((resolve) => {
    execFile(
      "sh",
      ["-c", `exec 2>&1\n${command}`],
      { cwd, signal, env, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout) => {
        const code =
          error === null
            ? 0
            : typeof (error as { code?: unknown }).code === "number"
              ? (error as { code: number }).code
              : 127;
        resolve({ output: String(stdout), exitCode: code });
      },
    );
  });
}

/** Releases a gate so a turn waiting on `@@gate name` goes on. Works across processes. */
export function releaseGate(gateDir: string, name: string): void {
  mkdirSync(gateDir, { recursive: true });
  writeFileSync(join(gateDir, name), "released");
}

/**
 * Whether a turn has reached `@@gate name` (its conversation saved, so a crash now leaves it
 * mid-turn and resumable). A test that kills the host waits for this, not for the run's status:
 * the host records a run as running before the harness has saved anything.
 */
export function gateReached(gateDir: string, name: string): boolean {
  return existsSync(join(gateDir, `${name}.reached`));
}

async function waitForGate(gateDir: string, name: string, signal: AbortSignal): Promise<void> {
  mkdirSync(gateDir, { recursive: true });
  const file = join(gateDir, name);
  // Its next I/O goes through the event loop, as a harness's own I/O does (a real harness is
  // another process, or writes with the event loop's help): what the host does with the events
  // emitted before it (their commit takes a few microtask hops) is done by then.
  await new Promise<void>((resolve) => setImmediate(resolve));
  writeFileSync(join(gateDir, `${name}.reached`), "reached");
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("aborted"));
    if (existsSync(file)) return resolve();
    const watcher = watch(gateDir, () => {
      if (existsSync(file)) done();
    });
    // fs.watch can miss a rename on some filesystems; a slow re-check covers it.
    const timer = setInterval(() => {
      if (existsSync(file)) done();
    }, 200);
    const onAbort = () => {
      cleanup();
      reject(new Error("aborted"));
    };
    const cleanup = () => {
      watcher.close();
      clearInterval(timer);
      signal.removeEventListener("abort", onAbort);
    };
    const done = () => {
      cleanup();
      resolve();
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("aborted"));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The blocks a host puts before the message itself: folded instructions (for a provider without
 * an instruction channel), then the header naming the thread a peer's message came from.
 */
const HOST_BLOCK_TAGS = ["switchyard_instructions", "switchyard_message_source"] as const;

/**
 * The user's own message in a turn's text. A model reads folded instructions (a history
 * handoff, portable context) and a sender header as context, not as requests, so the scripted
 * one obeys directives only in the message itself: a handoff quoting an earlier `@@gate`, or a
 * sender whose title is its first prompt, must not hold the new turn.
 */
function ownMessage(text: string): string {
  let rest = text;
  for (const tag of HOST_BLOCK_TAGS) {
    if (!rest.startsWith(`<${tag}>\n`)) continue;
    const close = `\n</${tag}>\n\n`;
    const end = rest.indexOf(close);
    if (end >= 0) rest = rest.slice(end + close.length);
  }
  return rest;
}

/**
 * A JSON Schema validator built on first use. The SDK's client builds an Ajv instance (with its
 * formats, ~0.5 ms) in its constructor for output schemas it only meets after `listTools`, which
 * the scripted harness never calls; a per-client validator made lazily keeps that cost off every
 * session without sharing one Ajv cache (keyed by schema object) across clients.
 */
function lazySchemaValidator(): jsonSchemaValidator {
  let validator: AjvJsonSchemaValidator | null = null;
  return { getValidator: (schema) => (validator ??= new AjvJsonSchemaValidator()).getValidator(schema) };
}

/** Connects an MCP client to the session's Switchyard endpoint with its credential. */
async function connectSwitchyard(grant: McpEndpointGrant): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(grant.url), {
    requestInit: { headers: { Authorization: `Bearer ${grant.token}` } },
  });
  const client = new Client(
    { name: "switchyard-scripted-provider", version: "1.0.0" },
    { jsonSchemaValidator: lazySchemaValidator() },
  );
  await client.connect(transport);
  return client;
}

async function callSwitchyardTool(
  client: Client,
  grant: McpEndpointGrant,
  name: string,
  args: Record<string, unknown>,
  turnSignal: AbortSignal,
): Promise<string> {
  // The SDK adds an abort listener to the signal of every request and never removes it. Handed
  // the turn's signal, a turn kept one listener per tool call it ever made (a delegating parent
  // collects hundreds), and an interrupt then "cancelled" every call already answered. So each
  // call gets its own signal, tied to the turn's only while the call is in flight.
  const call = new AbortController();
  const forward = () => call.abort(turnSignal.reason);
  if (turnSignal.aborted) call.abort(turnSignal.reason);
  else turnSignal.addEventListener("abort", forward, { once: true });
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      signal: call.signal,
      timeout: grant.toolTimeoutMs,
      resetTimeoutOnProgress: true,
    });
    if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
    const content = (result.content as { type: string; text?: string }[] | undefined) ?? [];
    return content.map((part) => part.text ?? "").join("");
  } finally {
    turnSignal.removeEventListener("abort", forward);
  }
}

/**
 * One scripted conversation. Behaviour follows the prompt language in scripted-script.ts. The
 * host sees it through {@link declaredSurface}, which offers an optional method only when the
 * instance declares its capability; the methods here check only what a declared capability
 * does not cover (an approval answer where only questions are declared, a fork from a turn).
 */
class ScriptedSession {
  private history: Exchange[] = [];
  private active: ActiveTurn | null = null;
  private closed = false;
  private nextRequest = 1;
  /** One MCP client per session (per grant), like a harness's own MCP connection. */
  private mcpClient: { readonly grant: McpEndpointGrant; readonly client: Promise<Client> } | null = null;
  /** Clients of replaced grants: a call may still be using one; closed with the session. */
  private readonly retiredClients: Promise<Client>[] = [];
  /** The session's MCP grant; `updateMcpGrant` replaces it. */
  private grant: McpEndpointGrant | null;
  resumeCursor: string;

  constructor(
    private readonly input: OpenSessionInput,
    private readonly options: ScriptedProviderOptions,
    private readonly capabilities: ProviderCapabilities,
    private readonly instanceId: string,
  ) {
    this.grant = input.mcp;
    if (input.resumeCursor !== null) {
      if (!capabilities.sessions.resume) throw new UnsupportedCapabilityError("sessions.resume", instanceId);
      this.resumeCursor = input.resumeCursor;
      this.history = this.load(input.resumeCursor);
    } else {
      this.resumeCursor = `scripted-thread-${randomUUID()}`;
    }
    queueMicrotask(() => this.emit({ type: "session.resume_cursor", cursor: this.resumeCursor }));
  }

  private emit(event: AdapterEvent): void {
    if (!this.closed) this.input.emit(event);
  }

  /**
   * Enforces the session's tool rules like a harness would: a denied call is reported as a
   * failed tool call and never runs. Ask rules are not declared (`tools.rules.ask` is false).
   */
  private deniedByRules(
    turnId: string,
    kind: "command" | "file_change" | "mcp",
    name: string,
    title: string,
    argument: string | null,
    exempt = false,
  ): boolean {
    if (toolRuleVerdict(this.input.toolRules, name, argument, { exempt }) !== "deny") return false;
    const itemId = `denied-${randomUUID()}`;
    this.emit({ type: "tool_call.started", turnId, itemId, kind, name, title, input: { argument } });
    this.emit({
      type: "tool_call.completed",
      turnId,
      itemId,
      status: "failed",
      output: `${name} is denied by this session's tool rules`,
    });
    return true;
  }

  /** A shell step's environment: the host's, the profile's, and the profile's home as SCRIPTED_HOME. */
  private shellEnv(): NodeJS.ProcessEnv {
    return sessionEnvironment(
      Object.fromEntries(
        Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
      this.input,
      "SCRIPTED_HOME",
    );
  }

  private stateFile(cursor: string): string | null {
    return this.options.stateDir === undefined ? null : join(this.options.stateDir, `${cursor}.json`);
  }

  private load(cursor: string): Exchange[] {
    const file = this.stateFile(cursor);
    if (file === null || !existsSync(file)) return [];
    return JSON.parse(readFileSync(file, "utf8")) as Exchange[];
  }

  private save(): void {
    const file = this.stateFile(this.resumeCursor);
    if (file === null) return;
    mkdirSync(this.options.stateDir!, { recursive: true });
    writeFileSync(file, JSON.stringify(this.history));
  }

  async startTurn(input: TurnInput): Promise<{ providerTurnId?: string }> {
    if (this.closed) throw new Error("session is closed");
    if (this.active !== null) throw new Error("a turn is already running");
    const refusesSteers = parseProviderScript(input.text).steps.some((step) => step.kind === "refuse-steers");
    const turn: ActiveTurn = {
      input,
      abort: new AbortController(),
      steers: [],
      pending: new Map(),
      interruptStatus: null,
      refusesSteers,
      usage: null,
      messageItemId: `msg-${randomUUID()}`,
      said: "",
    };
    this.active = turn;
    const providerTurnId = `scripted-turn-${randomUUID()}`;
    setImmediate(() => void this.run(turn, providerTurnId));
    return { providerTurnId };
  }

  private async run(turn: ActiveTurn, providerTurnId: string): Promise<void> {
    const { turnId } = turn.input;
    this.emit({ type: "turn.started", turnId, providerTurnId });
    const userText = turn.input.instructions ? `${turn.input.instructions}\n\n${turn.input.text}` : turn.input.text;
    // Like a real agent asked to continue after its process died mid-turn: the unfinished
    // request is still in the conversation, so it is carried out now.
    const unfinished = this.history.at(-1);
    const continuing = turn.input.restartOfTurnId !== null && unfinished !== undefined && unfinished.assistant === null;
    const scriptText = continuing ? (unfinished.script ?? unfinished.user) : ownMessage(turn.input.text);
    if (continuing) this.history.pop();
    this.history.push({ user: userText, assistant: null, script: scriptText });
    this.save();
    let reply: string | null = null;
    let lastResult: string | null = null;
    try {
      const script = parseProviderScript(scriptText);
      if (this.options.replyDelayMs) await sleep(this.options.replyDelayMs, turn.abort.signal);
      for (const step of script.steps) {
        const outcome = await this.runStep(turn, step);
        if (outcome.kind === "fail") {
          this.finish(turn, userText, null, {
            status: "failed",
            error: { code: "scripted_failure", message: outcome.message },
          });
          return;
        }
        if (outcome.kind === "reply") {
          reply = outcome.text;
          break;
        }
        if (outcome.result !== null) lastResult = outcome.result;
      }
      // What `@@say` streamed opens the message; the reply (if any) follows it.
      const said = turn.said;
      reply ??=
        said !== ""
          ? ""
          : lastResult !== null
            ? `${script.freeText ? `${script.freeText}: ` : ""}${lastResult}`
            : `scripted reply to: ${script.freeText || turn.input.text}`;
      let rest = said !== "" && reply !== "" ? ` ${reply}` : reply;
      if (turn.steers.length > 0) rest += ` [steered: ${turn.steers.join(" | ")}]`;
      reply = said + rest;
      const itemId = turn.messageItemId;
      const middle = Math.ceil(rest.length / 2);
      if (rest.slice(0, middle) !== "")
        this.emit({ type: "message.delta", turnId, itemId, text: rest.slice(0, middle) });
      if (rest.slice(middle) !== "") this.emit({ type: "message.delta", turnId, itemId, text: rest.slice(middle) });
      this.emit({ type: "message.completed", turnId, itemId, text: reply });
      this.finish(turn, userText, reply, { status: "completed" });
    } catch (error) {
      if (turn.abort.signal.aborted) {
        this.finish(turn, userText, reply, { status: turn.interruptStatus ?? "interrupted" });
        return;
      }
      this.finish(turn, userText, null, {
        status: "failed",
        error: { code: "scripted_error", message: (error as Error).message },
      });
    }
  }

  private finish(
    turn: ActiveTurn,
    userText: string,
    assistant: string | null,
    terminal: {
      status: "completed" | "failed" | "interrupted" | "cancelled";
      error?: { code: string; message: string };
    },
  ): void {
    if (this.active !== turn) return;
    this.active = null;
    for (const resolve of turn.pending.values()) resolve(null);
    const entry = this.history.at(-1);
    if (entry !== undefined && entry.assistant === null) entry.assistant = assistant ?? `(${terminal.status})`;
    else this.history.push({ user: userText, assistant: assistant ?? `(${terminal.status})` });
    this.save();
    this.emit({
      type: "turn.terminal",
      turnId: turn.input.turnId,
      status: terminal.status,
      ...(terminal.error ? { error: terminal.error } : {}),
      ...(turn.usage !== null ? { usage: turn.usage } : {}),
    });
  }

  private async runStep(
    turn: ActiveTurn,
    step: ProviderScriptStep,
  ): Promise<
    { kind: "reply"; text: string } | { kind: "fail"; message: string } | { kind: "continue"; result: string | null }
  > {
    const { turnId } = turn.input;
    const signal = turn.abort.signal;
    switch (step.kind) {
      case "reply":
        return { kind: "reply", text: step.text };
      case "fail":
        return { kind: "fail", message: step.message };
      case "wait":
        await sleep(step.ms, signal);
        return { kind: "continue", result: null };
      case "limit":
        this.emit({
          type: "warning",
          turnId,
          message: step.message,
          limit: { kind: step.limit, code: step.code },
        });
        // Retries the request "forever": the turn ends only when it is interrupted.
        await sleep(2_147_483_647, signal);
        return { kind: "continue", result: null };
      case "gate":
        if (this.options.gateDir === undefined) throw new Error("@@gate needs the gateDir option");
        await waitForGate(this.options.gateDir, step.name, signal);
        return { kind: "continue", result: null };
      case "history": {
        const done = this.history.filter((h) => h.assistant !== null);
        return {
          kind: "reply",
          text:
            done.length === 0
              ? "history: (empty)"
              : `history: ${done.map((h) => `[user: ${h.user}] [assistant: ${h.assistant}]`).join(" ")}`,
        };
      }
      case "effort":
        return { kind: "reply", text: `effort: ${turn.input.effort ?? "default"}` };
      case "subagent": {
        const nativeId = `native-${randomUUID()}`;
        const native = step.native ?? {};
        // What the harness knows of it from the start, repeated in every later event (a snapshot).
        const parentItemId = native.toolCall === true ? `task-${randomUUID()}` : undefined;
        const known = {
          turnId,
          nativeId,
          title: step.title,
          ...(parentItemId !== undefined ? { parentItemId } : {}),
          ...(native.task !== undefined ? { task: native.task } : {}),
          ...(native.agentType !== undefined ? { agentType: native.agentType } : {}),
          ...(native.model !== undefined ? { model: native.model } : {}),
        };
        if (parentItemId !== undefined)
          this.emit({
            type: "tool_call.started",
            turnId,
            itemId: parentItemId,
            kind: "subagent",
            name: "task",
            title: step.title,
          });
        this.emit({ type: "subagent.observed", ...known, status: "running" });
        (native.messages ?? []).forEach((message, index) =>
          this.emit({
            type: "subagent.message",
            turnId,
            nativeId,
            itemId: `${nativeId}-message-${index}`,
            role: message.role,
            text: message.text,
          }),
        );
        if (native.approve !== undefined) {
          if (!this.capabilities.runtimeRequests.approvals) throw new Error("approve needs runtimeRequests.approvals");
          await this.askCommandApproval(turn, native.approve, signal, nativeId);
        }
        const status = native.status ?? "completed";
        if (status === "running") return { kind: "continue", result: `sub-agent ${step.title} started` };
        this.emit({
          type: "subagent.observed",
          ...known,
          status,
          summary: `${step.title} ${status === "completed" ? "done" : "failed"}`,
          ...(native.usage !== undefined ? { usage: native.usage } : {}),
        });
        if (parentItemId !== undefined)
          this.emit({
            type: "tool_call.completed",
            turnId,
            itemId: parentItemId,
            status,
            output: `${step.title} ${status}`,
          });
        return { kind: "continue", result: `sub-agent ${step.title} done` };
      }
      case "plan":
        this.emit({ type: "plan.proposed", turnId, itemId: `plan-${randomUUID()}`, text: step.text });
        return { kind: "continue", result: "plan proposed" };
      case "refuse-steers":
        return { kind: "continue", result: "" };
      case "usage":
        turn.usage = addUsage(turn.usage ?? {}, step.usage);
        return { kind: "continue", result: null };
      case "say": {
        const piece = turn.said === "" ? step.text : ` ${step.text}`;
        turn.said += piece;
        this.emit({ type: "message.delta", turnId, itemId: turn.messageItemId, text: piece });
        return { kind: "continue", result: null };
      }
      case "shell": {
        if (this.deniedByRules(turnId, "command", "shell", step.command, step.command))
          return { kind: "continue", result: `shell ${step.command} denied by the session's tool rules` };
        const itemId = `shell-${randomUUID()}`;
        this.emit({
          type: "tool_call.started",
          turnId,
          itemId,
          kind: "command",
          name: "shell",
          title: step.command,
          input: { command: step.command, cwd: this.input.cwd },
        });
        const { output, exitCode } = await runShell(step.command, this.input.cwd, signal, this.shellEnv());
        if (signal.aborted) throw new Error("aborted");
        this.emit({
          type: "tool_call.completed",
          turnId,
          itemId,
          status: exitCode === 0 ? "completed" : "failed",
          output,
          exitCode,
        });
        return { kind: "continue", result: `shell ${step.command} exited ${exitCode}` };
      }
      case "diff": {
        if (this.deniedByRules(turnId, "file_change", "apply_patch", step.path, step.path))
          return { kind: "continue", result: `edit of ${step.path} denied by the session's tool rules` };
        const itemId = `diff-${randomUUID()}`;
        this.emit({
          type: "tool_call.started",
          turnId,
          itemId,
          kind: "file_change",
          name: "apply_patch",
          title: step.path,
          input: { changes: [{ path: step.path, kind: "update" }] },
        });
        this.emit({
          type: "tool_call.completed",
          turnId,
          itemId,
          status: "completed",
          output: `--- ${step.path}\n${step.diff}`,
        });
        return { kind: "continue", result: `edited ${step.path}` };
      }
      case "tool": {
        if (this.grant === null)
          throw new Error(`@@tool ${step.name}: no Switchyard MCP endpoint was injected into this session`);
        const { serverName } = this.grant;
        // The host's own tools stay available under allowOnly (orchestration needs them); a deny rule still holds.
        if (
          this.deniedByRules(
            turnId,
            "mcp",
            `mcp__${serverName}__${step.name}`,
            `${serverName}/${step.name}`,
            null,
            true,
          )
        )
          return { kind: "continue", result: `tool ${step.name} denied by the session's tool rules` };
        const itemId = `tool-${randomUUID()}`;
        this.emit({
          type: "tool_call.started",
          turnId,
          itemId,
          kind: "mcp",
          name: `mcp__${serverName}__${step.name}`,
          title: `${serverName}/${step.name}`,
          server: serverName,
          input: step.args,
        });
        try {
          // The grant may have been replaced meanwhile (a rotation): call with the current one.
          const grant = this.grant;
          if (this.mcpClient?.grant !== grant) {
            if (this.mcpClient !== null) this.retiredClients.push(this.mcpClient.client);
            this.mcpClient = { grant, client: connectSwitchyard(grant) };
          }
          const output = await callSwitchyardTool(await this.mcpClient.client, grant, step.name, step.args, signal);
          this.emit({ type: "tool_call.completed", turnId, itemId, status: "completed", output });
          return { kind: "continue", result: `tool ${step.name} -> ${output}` };
        } catch (error) {
          this.emit({
            type: "tool_call.completed",
            turnId,
            itemId,
            status: "failed",
            output: (error as Error).message,
          });
          if (signal.aborted) throw error;
          return { kind: "continue", result: `tool ${step.name} failed: ${(error as Error).message}` };
        }
      }
      case "ask": {
        if (!this.capabilities.runtimeRequests.userInputQuestions)
          throw new Error("@@ask needs runtimeRequests.userInputQuestions");
        const requestId = `ask-${this.nextRequest++}`;
        const answered = this.openRequest(turn, requestId);
        this.emit({
          type: "runtime_request.opened",
          turnId,
          requestId,
          request: { kind: "user_input", blocking: step.blocking, questions: [{ id: "q1", question: step.question }] },
        });
        if (!step.blocking) {
          void answered.then((response) => {
            if (response === null)
              this.emit({ type: "runtime_request.resolved", turnId, requestId, resolution: "cancelled" });
          });
          return { kind: "continue", result: "asked asynchronously" };
        }
        const response = await abortable(answered, signal);
        if (response === null || response.kind !== "user_input") return { kind: "continue", result: "no answer" };
        return { kind: "continue", result: `answer: ${Object.values(response.answers).flat().join(", ")}` };
      }
      case "approve": {
        if (!this.capabilities.runtimeRequests.approvals) throw new Error("@@approve needs runtimeRequests.approvals");
        const response = await this.askCommandApproval(turn, step.command, signal);
        const decision = response !== null && response.kind === "approval" ? response.decision : "cancel";
        return {
          kind: "continue",
          result:
            decision === "accept" || decision === "accept_for_session"
              ? `approved: ${step.command}`
              : `declined: ${step.command}`,
        };
      }
    }
  }

  /** Asks the user to approve `command` (for a native sub-agent when `subagentNativeId` is given) and waits for the answer. */
  private async askCommandApproval(
    turn: ActiveTurn,
    command: string,
    signal: AbortSignal,
    subagentNativeId?: string,
  ): Promise<RuntimeRequestResponse | null> {
    const requestId = `approval-${this.nextRequest++}`;
    const answered = this.openRequest(turn, requestId);
    this.emit({
      type: "runtime_request.opened",
      turnId: turn.input.turnId,
      requestId,
      request: {
        kind: "approval",
        approvalKind: "command",
        title: command,
        options: [
          { id: "allow", label: "Allow", decision: "accept" },
          { id: "deny", label: "Deny", decision: "decline" },
        ],
      },
      ...(subagentNativeId !== undefined ? { subagentNativeId } : {}),
    });
    return abortable(answered, signal);
  }

  private openRequest(turn: ActiveTurn, requestId: string): Promise<RuntimeRequestResponse | null> {
    return new Promise((resolve) => turn.pending.set(requestId, resolve));
  }

  async steerTurn(input: SteerInput): Promise<void> {
    if (this.active === null || this.active.input.turnId !== input.turnId)
      throw new Error(`turn ${input.turnId} is not running`);
    if (this.active.refusesSteers) throw new Error(`turn ${input.turnId} is between steps and takes no steer`);
    this.active.steers.push(input.text);
  }

  async interruptTurn(input: InterruptInput): Promise<void> {
    if (this.active === null || this.active.input.turnId !== input.turnId) return;
    this.active.interruptStatus = "interrupted";
    this.active.abort.abort();
  }

  async forkThread(input: ForkInput): Promise<{ resumeCursor: string }> {
    if (input.afterTurnId !== undefined && !this.capabilities.threads.forkFromTurn)
      throw new UnsupportedCapabilityError("threads.forkFromTurn", this.instanceId);
    const cursor = `scripted-thread-${randomUUID()}`;
    const file = this.stateFile(cursor);
    if (file !== null) {
      mkdirSync(this.options.stateDir!, { recursive: true });
      writeFileSync(file, JSON.stringify(this.history));
    }
    return { resumeCursor: cursor };
  }

  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    const caps = this.capabilities.runtimeRequests;
    const needed =
      response.kind === "approval"
        ? caps.approvals
        : response.kind === "user_input"
          ? caps.userInputQuestions
          : caps.approvals || caps.userInputQuestions;
    if (!needed)
      throw new UnsupportedCapabilityError(
        response.kind === "approval" ? "runtimeRequests.approvals" : "runtimeRequests.userInputQuestions",
        this.instanceId,
      );
    const resolve = this.active?.pending.get(requestId);
    if (resolve === undefined) throw new Error(`runtime request ${requestId} is not pending`);
    this.active!.pending.delete(requestId);
    resolve(response);
    this.emit({
      type: "runtime_request.resolved",
      turnId: this.active!.input.turnId,
      requestId,
      resolution: response.kind === "dismiss" ? "cancelled" : "answered",
    });
  }

  async readSnapshot(): Promise<ThreadSnapshot> {
    return {
      turns: this.history
        .filter((h) => h.assistant !== null)
        .map((h) => ({ userText: h.user, assistantText: h.assistant! })),
    };
  }

  /** Takes a rotated credential: the next tool call connects with it (calls under way finish). */
  async updateMcpGrant(grant: McpEndpointGrant): Promise<void> {
    if (this.closed) throw new Error("session is closed");
    this.grant = grant;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const turn = this.active;
    if (turn !== null) {
      turn.interruptStatus = "interrupted";
      turn.abort.abort();
    }
    this.closed = true;
    const clients = [...this.retiredClients.splice(0), ...(this.mcpClient !== null ? [this.mcpClient.client] : [])];
    this.mcpClient = null;
    await Promise.all(clients.map((client) => client.then((c) => c.close()).catch(() => undefined)));
  }
}

/**
 * The session as the host sees it: an optional method exists only when the instance declares
 * its capability, the way the spec asks every adapter to be (no stub that only throws).
 */
function declaredSurface(session: ScriptedSession, capabilities: ProviderCapabilities): ProviderSession {
  const { turns, threads, runtimeRequests, tools } = capabilities;
  return {
    get resumeCursor() {
      return session.resumeCursor;
    },
    startTurn: (input: TurnInput) => session.startTurn(input),
    close: () => session.close(),
    ...(turns.activeSteering ? { steerTurn: (input: SteerInput) => session.steerTurn(input) } : {}),
    ...(turns.interrupt ? { interruptTurn: (input: InterruptInput) => session.interruptTurn(input) } : {}),
    ...(threads.fork ? { forkThread: (input: ForkInput) => session.forkThread(input) } : {}),
    ...(threads.readSnapshot ? { readSnapshot: () => session.readSnapshot() } : {}),
    ...(runtimeRequests.approvals || runtimeRequests.userInputQuestions
      ? {
          respondToRuntimeRequest: (requestId: string, response: RuntimeRequestResponse) =>
            session.respondToRuntimeRequest(requestId, response),
        }
      : {}),
    ...(tools.mcpGrantUpdate ? { updateMcpGrant: (grant: McpEndpointGrant) => session.updateMcpGrant(grant) } : {}),
  };
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("aborted"));
    const onAbort = () => reject(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** The scripted adapter of one instance. */
export class ScriptedAdapter implements OrchestrationAdapter {
  readonly specificationVersion = SPECIFICATION_VERSION;
  readonly driverKind = "scripted";

  constructor(
    readonly instanceId: string,
    private readonly options: ScriptedProviderOptions,
    private readonly declared: ProviderCapabilities,
  ) {}

  capabilities(): ProviderCapabilities {
    return this.declared;
  }

  async probe(options: ProbeOptions = {}): Promise<ProviderStatus> {
    if (this.options.probeLog !== undefined) appendFileSync(this.options.probeLog, `${options.depth ?? "full"}\n`);
    if (this.options.probeGate !== undefined) {
      if (this.options.gateDir === undefined) throw new Error("probeGate needs the gateDir option");
      await waitForGate(this.options.gateDir, this.options.probeGate, new AbortController().signal);
    }
    const status = { ...this.options.status, ...this.statusFromFile() };
    const installed = status.installed ?? true;
    const executable = status.executable ?? installed;
    const authenticated = status.authenticated ?? true;
    return {
      installed,
      executable,
      authenticated,
      version: "scripted-1.0.0",
      models: (this.options.models ?? ["scripted-large", "scripted-small"]).map((id, index) => {
        const efforts = this.options.modelEfforts?.[id];
        const source = this.options.modelSources?.[id];
        const isDefault = this.options.defaultModel !== undefined ? id === this.options.defaultModel : index === 0;
        return {
          id,
          ...(isDefault ? { isDefault: true } : {}),
          ...(source !== undefined ? { source } : {}),
          ...(efforts !== undefined ? { efforts, defaultEffort: efforts[0]! } : {}),
        };
      }),
      ...(installed && executable && authenticated !== false
        ? {}
        : {
            message: `The scripted provider "${this.instanceId}" reports installed=${installed} executable=${executable} authenticated=${String(authenticated)}.`,
          }),
    };
  }

  async openSession(input: OpenSessionInput): Promise<ProviderSession> {
    // Like a harness uninstalled since its last probe: the status file says it cannot run.
    const status = this.statusFromFile();
    if (status.installed === false || status.executable === false) {
      throw new SwitchyardError(
        "provider_unavailable",
        `The scripted provider "${this.instanceId}" cannot start: its status file says installed=${String(status.installed ?? true)} executable=${String(status.executable ?? true)}.`,
      );
    }
    return declaredSurface(new ScriptedSession(input, this.options, this.declared, this.instanceId), this.declared);
  }

  private statusFromFile(): ScriptedStatus {
    const file = this.options.statusFile;
    return file !== undefined && existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ScriptedStatus) : {};
  }
}
