import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { promisify } from "node:util";
import { brotliDecompress, gunzip, inflate } from "node:zlib";
import type { ParsedModelRequest, TurnView } from "./conversation.js";
import { resolveTurn } from "./conversation.js";
import type { DefaultReplies, ModelAction, ModelDecision, ReplyContext } from "./decision.js";
import { actionForStep, defaultAction, isSideCall, sideCallText } from "./decision.js";
import type { RecordedRequest, RecordedRequestKind } from "./recorded-request.js";
import { describeRecordedRequest, redactHeaders } from "./recorded-request.js";
import type { ScriptStep } from "./script.js";
import { parseScript, toSteps } from "./script.js";
import type { WireWriter } from "./wire-common.js";
import { estimatedUsage } from "./estimated-usage.js";
import { completeUsage, type ScriptedUsage, type ScriptedUsageInput } from "./model-usage.js";
import { sendJson } from "./wire-common.js";
import { parseResponsesRequest, responsesErrorBody, writeResponsesResponse } from "./responses-api.js";
import { parseChatCompletionsRequest, writeChatCompletionsResponse } from "./chat-completions-api.js";
import {
  anthropicCountTokens,
  parseAnthropicMessagesRequest,
  writeAnthropicMessagesResponse,
} from "./anthropic-messages-api.js";
import { parseGeminiPath, parseGeminiRequest, writeGeminiResponse } from "./gemini-api.js";
import { presentedApiKey, unauthorizedBody } from "./api-keys.js";

/** Options for {@link ScriptedModelServer.start}. */
export interface ScriptedModelServerOptions {
  /** Interface to listen on (default `127.0.0.1`). */
  host?: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** Reply to a user message without directives (default `PONG`). */
  defaultReply?: string | ((context: ReplyContext) => string);
  /** Reply after a tool result when no script step is left (default `DONE after <tool>: <snippet>`). */
  afterToolReply?: (context: ReplyContext) => string;
  /** Model ids listed by `GET /v1/models` (default `["fake-model"]`). */
  models?: string[];
  /** Characters per streamed text delta (default 24). */
  chunkSize?: number;
  /** More tags whose elements count as injected context in user messages (see `INJECTED_CONTEXT_TAGS`). */
  injectedContextTags?: string[];
  /** Receives one line per request (e.g. `console.error`) for debugging. */
  log?: (line: string) => void;
  /**
   * The token counts every answer reports, unless its script step says otherwise (`@@usage`):
   * fixed figures, or a function of the request and the decision (return undefined for the
   * estimate). Default: an estimate from the request and answer sizes (4 characters a token).
   */
  usage?: ScriptedUsageInput | ((context: UsageContext) => ScriptedUsageInput | undefined);
  /**
   * The API keys this server accepts, by label, as a gateway would: when set, a model request
   * (and `GET /models`) presenting none of them is answered 401 in its wire's error shape and
   * recorded with `refused: true`. Either way every request records which key it presented
   * (`apiKey`: the header and the matching label), never the key itself.
   */
  apiKeys?: Readonly<Record<string, string>>;
}

/** What a usage function sees. */
export interface UsageContext {
  readonly request: ParsedModelRequest;
  readonly decision: ModelDecision;
}

/** What a rule matcher sees. */
export interface MatchContext {
  /** The parsed request. */
  request: ParsedModelRequest;
  /** Where the turn stands (user text, step index, trailing tool results). */
  turn: TurnView;
  /** The request headers (redacted). */
  headers: Record<string, string>;
  /** The request path. */
  path: string;
}

/** Selects requests for a rule: a substring of the user text, a RegExp on it, or a predicate. */
export type RequestMatcher = string | RegExp | ((context: MatchContext) => boolean);

/** Script input accepted by {@link ScriptedModelServer.script}: a directive string, one step or steps. */
export type ScriptInput = string | ScriptStep | readonly ScriptStep[];

/** A registered rule. */
export interface ScriptRule {
  /** How many requests the rule answered. */
  readonly hits: number;
  /** Unregisters the rule. */
  remove(): void;
}

interface RuleEntry {
  matcher: RequestMatcher;
  steps: ScriptStep[];
  hits: number;
}

interface Waiter {
  predicate: (request: RecordedRequest) => boolean;
  resolve: (request: RecordedRequest) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface Gate {
  released: boolean;
  listeners: Set<() => void>;
}

/** Where {@link ScriptedModelServer.routeUrl}'s URLs put their route: `/route/<route>/…`. */
const ROUTE_PREFIX = "/route/";

const inflaters: Record<string, (buffer: Buffer) => Promise<Buffer>> = {
  gzip: promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/**
 * A scripted language model on 127.0.0.1 that real coding-agent harnesses are pointed at. It
 * speaks OpenAI Responses and Chat Completions, Anthropic Messages and the Gemini API, decides
 * each answer statelessly from the request (directives in the last real user message, or rules
 * and queued responses a test registers) and records every request.
 *
 * @example
 * const server = await ScriptedModelServer.start();
 * // a harness configured with server.url gets "PONG" for "hi", and for
 * // 'go @@tool echo {"text":"x"}' calls its `echo` tool, then says "DONE after echo: …".
 * await server.close();
 */
export class ScriptedModelServer {
  readonly #server: Server;
  readonly #options: ScriptedModelServerOptions;
  readonly #requests: RecordedRequest[] = [];
  readonly #rules: RuleEntry[] = [];
  readonly #queue: ScriptStep[] = [];
  readonly #gates = new Map<string, Gate>();
  readonly #waiters = new Set<Waiter>();
  readonly #defaults: DefaultReplies;
  #closed = false;

  /** Base URL, e.g. `http://127.0.0.1:43123` (no trailing slash). */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;

  private constructor(server: Server, options: ScriptedModelServerOptions) {
    this.#server = server;
    this.#options = options;
    const address = server.address() as AddressInfo;
    this.port = address.port;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}`;
    const { defaultReply, afterToolReply } = options;
    this.#defaults = {
      ...(defaultReply !== undefined
        ? { reply: typeof defaultReply === "string" ? () => defaultReply : defaultReply }
        : {}),
      ...(afterToolReply !== undefined ? { afterTool: afterToolReply } : {}),
    };
  }

  /** Starts a server (default `127.0.0.1`, a free port) and resolves once it listens. */
  static async start(options: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
    let instance: ScriptedModelServer | undefined;
    const server = createServer((req, res) => {
      void instance?.handle(req, res).catch((error: unknown) => {
        options.log?.(`scripted model server: ${(error as Error).stack ?? String(error)}`);
        if (!res.headersSent) sendJson(res, 500, responsesErrorBody(`scripted model server error: ${String(error)}`));
        else res.destroy();
      });
    });
    server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
      // Codex's built-in OpenAI provider tries Responses over WebSocket first; 426 makes it fall
      // back to HTTP SSE at once (a 404 costs ~6 s of retries).
      instance?.record(req, "websocket-upgrade", undefined);
      socket.end("HTTP/1.1 426 Upgrade Required\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    instance = new ScriptedModelServer(server, options);
    return instance;
  }

  /**
   * A base URL whose requests are recorded with `route` (`RecordedRequest.route`): give each
   * harness (a provider instance, a run) its own, and every request tells whose it was, e.g.
   * `createCodexHome({ modelServerUrl: server.routeUrl("codex-child") })`. Answers are the same
   * as on {@link url}. `route` is letters, digits, `-` and `_`.
   */
  routeUrl(route: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(route))
      throw new Error(`A route is letters, digits, - and _; got ${JSON.stringify(route)}.`);
    return `${this.url}${ROUTE_PREFIX}${route}`;
  }

  /** Base URL for OpenAI-style clients (`<url>/v1`): Codex `base_url`, Pi and OpenCode `baseURL`. */
  get openAiBaseUrl(): string {
    return `${this.url}/v1`;
  }

  /** Every request received so far, oldest first (live array; do not mutate). */
  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }

  /**
   * Registers a rule: requests whose user text matches get these steps (step N on the N-th
   * model call of the turn). Rules are tried in registration order, after queued responses and
   * before directives. Side calls (router, title) never reach rules.
   */
  script(matcher: RequestMatcher, steps: ScriptInput): ScriptRule {
    const entry: RuleEntry = { matcher, steps: toSteps(steps), hits: 0 };
    this.#rules.push(entry);
    const rules = this.#rules;
    return {
      get hits() {
        return entry.hits;
      },
      remove() {
        const index = rules.indexOf(entry);
        if (index !== -1) rules.splice(index, 1);
      },
    };
  }

  /**
   * Queues canned responses: each is used once, by the next model request (not side calls),
   * in order, before rules and directives. A string is parsed as directives (its first step).
   */
  enqueue(...responses: Array<string | ScriptStep>): void {
    for (const response of responses) {
      const steps = toSteps(response);
      if (steps[0]) this.#queue.push(steps[0]);
    }
  }

  /** Number of queued responses not yet used. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Opens a `@@hold` gate: held responses continue, and later holds on it pass straight through. */
  release(gate: string): void {
    const entry = this.#gate(gate);
    entry.released = true;
    for (const listener of entry.listeners) listener();
    entry.listeners.clear();
  }

  /**
   * Resolves with the first recorded request (past or future) that satisfies `predicate`;
   * rejects after `timeoutMs` (default 15 s) with a list of what did arrive.
   */
  waitForRequest(predicate: (request: RecordedRequest) => boolean, timeoutMs = 15_000): Promise<RecordedRequest> {
    const found = this.#requests.find(predicate);
    if (found) return Promise.resolve(found);
    if (this.#closed) return Promise.reject(new Error("scripted model server is closed"));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          const seen = this.#requests.map(describeRecordedRequest).join("\n  ") || "(none)";
          reject(new Error(`No matching model request within ${timeoutMs} ms. Received:\n  ${seen}`));
        }, timeoutMs),
      };
      this.#waiters.add(waiter);
    });
  }

  /** Resolves once a request is being held on `gate` (its response stream is open and stalled). */
  waitForHold(gate: string, timeoutMs = 15_000): Promise<RecordedRequest> {
    return this.waitForRequest((r) => r.heldOn === gate, timeoutMs);
  }

  /** Forgets recorded requests, rules, queued responses and gates (the server keeps running). */
  reset(): void {
    this.#requests.length = 0;
    this.#rules.length = 0;
    this.#queue.length = 0;
    for (const gate of this.#gates.values()) for (const listener of gate.listeners) listener();
    this.#gates.clear();
  }

  /** Stops listening, cuts open streams (held ones included) and rejects pending waits. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error("scripted model server closed"));
    }
    this.#waiters.clear();
    for (const gate of this.#gates.values()) for (const listener of gate.listeners) listener();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  /** @internal Routes one HTTP request. */
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    const method = req.method ?? "GET";
    if (this.#options.apiKeys !== undefined && (method === "POST" || path.endsWith("/models"))) {
      const presented = presentedApiKey(req, this.#options.apiKeys);
      if (presented === undefined || presented.label === null) {
        const record = this.record(req, "other", undefined);
        record.refused = true;
        // Read the body to its end, so the client sees the answer rather than a reset.
        await readJsonBody(req).catch(() => undefined);
        sendJson(res, 401, unauthorizedBody(path, presented));
        this.notify();
        return;
      }
    }
    if (method === "GET" && path.endsWith("/models")) {
      this.record(req, "models", undefined);
      const ids = this.#options.models ?? ["fake-model"];
      if (path.includes("/v1beta/")) {
        sendJson(res, 200, { models: ids.map((id) => ({ name: `models/${id}`, displayName: id })) });
      } else {
        sendJson(res, 200, {
          object: "list",
          data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "switchyard-testkit" })),
        });
      }
      return;
    }
    if (method === "GET" && path.endsWith("/responses")) {
      this.record(req, "websocket-upgrade", undefined);
      sendJson(res, 426, responsesErrorBody("Upgrade Required: this server speaks HTTP SSE only"));
      return;
    }
    if (method !== "POST") {
      this.record(req, "other", undefined);
      sendJson(res, 404, { error: { message: `not found: ${method} ${path}` } });
      return;
    }
    let body: unknown;
    try {
      body = await readJsonBody(req);
    } catch (error) {
      this.record(req, "other", undefined);
      sendJson(
        res,
        400,
        responsesErrorBody(`scripted model server could not read the body: ${(error as Error).message}`),
      );
      return;
    }
    if (path.endsWith("/responses")) {
      return this.answer(req, res, body, parseResponsesRequest(body), writeResponsesResponse);
    }
    if (path.endsWith("/chat/completions")) {
      return this.answer(req, res, body, parseChatCompletionsRequest(body), writeChatCompletionsResponse);
    }
    if (path.endsWith("/messages/count_tokens")) {
      const parsed = parseAnthropicMessagesRequest(body);
      this.record(req, "anthropic-count-tokens", body, parsed);
      sendJson(res, 200, anthropicCountTokens(parsed));
      return;
    }
    if (path.endsWith("/messages")) {
      return this.answer(req, res, body, parseAnthropicMessagesRequest(body), writeAnthropicMessagesResponse);
    }
    const gemini = parseGeminiPath(path);
    if (gemini && (gemini.method === "generateContent" || gemini.method === "streamGenerateContent")) {
      const parsed = parseGeminiRequest(body, gemini.model, gemini.method === "streamGenerateContent");
      return this.answer(req, res, body, parsed, writeGeminiResponse);
    }
    if (gemini && gemini.method === "countTokens") {
      this.record(req, "other", body);
      sendJson(res, 200, { totalTokens: 1 });
      return;
    }
    this.record(req, "other", body);
    sendJson(res, 404, { error: { message: `not found: ${method} ${path}` } });
  }

  /** @internal Decides, records and writes a model answer. */
  private async answer(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    parsed: ParsedModelRequest,
    write: WireWriter,
  ): Promise<void> {
    const record = this.record(req, parsed.api, body, parsed);
    const turn = resolveTurn(parsed.items, this.#options.injectedContextTags);
    const headers = record.headers;
    const decision = this.decide(parsed, turn, { request: parsed, turn, headers, path: record.path });
    record.decision = decision;
    const usage = this.usageFor(parsed, decision);
    record.usage = usage;
    this.#options.log?.(describeRecordedRequest(record));
    this.notify();

    let clientGone = false;
    const onClose = (): void => {
      if (!res.writableFinished) {
        clientGone = true;
        record.clientAborted = true;
        this.notify();
      }
    };
    res.once("close", onClose);
    const pause = async (): Promise<boolean> => {
      if (decision.waitMs !== undefined && decision.waitMs > 0) {
        await this.until(res, (done) => {
          const timer = setTimeout(done, decision.waitMs);
          return () => clearTimeout(timer);
        });
      }
      if (decision.hold !== undefined && !clientGone) {
        const gate = this.#gate(decision.hold);
        record.heldOn = decision.hold;
        this.notify();
        if (!gate.released) {
          await this.until(res, (done) => {
            gate.listeners.add(done);
            return () => gate.listeners.delete(done);
          });
        }
      }
      return !clientGone && !this.#closed;
    };
    await write(res, decision, { request: parsed, pause, chunkSize: this.#options.chunkSize ?? 24, usage });
    // Node 22+ sets writableFinished on 'finish', after end() has flushed (Node 20 set it at once).
    if (!clientGone && res.writableEnded && !res.writableFinished) {
      await new Promise<void>((resolve) => {
        res.once("finish", resolve);
        res.once("close", resolve);
      });
    }
    record.completed = !clientGone && res.writableFinished;
    this.notify();
  }

  /** @internal The usage an answer reports: its step's, else the server's, else the estimate. */
  private usageFor(request: ParsedModelRequest, decision: ModelDecision): ScriptedUsage {
    if (decision.usage !== undefined) return completeUsage(decision.usage);
    const configured =
      typeof this.#options.usage === "function" ? this.#options.usage({ request, decision }) : this.#options.usage;
    return configured !== undefined ? completeUsage(configured) : estimatedUsage(request, decision);
  }

  /** @internal Waits for `arm`'s callback, the client closing, or the server closing. */
  private until(res: ServerResponse, arm: (done: () => void) => () => void): Promise<void> {
    return new Promise((resolve) => {
      let disarm: () => void = () => undefined;
      const done = (): void => {
        disarm();
        res.off("close", done);
        resolve();
      };
      res.once("close", done);
      disarm = arm(done);
      if (this.#closed) done();
    });
  }

  /** @internal The answer for a request: side call, queue, rule, directive, default, in that order. */
  private decide(parsed: ParsedModelRequest, turn: TurnView, match: MatchContext): ModelDecision {
    const toolResult = turn.trailingToolResults.at(-1);
    const context: ReplyContext = { request: parsed, turn, ...(toolResult ? { toolResult } : {}) };
    if (isSideCall(parsed)) return { kind: "text", text: sideCallText(parsed), source: "side-call" };
    const echoText =
      (turn.userText !== undefined ? parseScript(turn.userText)?.prose : undefined) ?? turn.userText ?? "";
    const queued = this.#queue.shift();
    if (queued) return this.play([queued], 0, context, "queue", echoText);
    for (const rule of this.#rules) {
      if (!matches(rule.matcher, match)) continue;
      rule.hits += 1;
      return this.play(rule.steps, turn.stepIndex, context, "rule", echoText);
    }
    const script = turn.userText !== undefined ? parseScript(turn.userText) : undefined;
    if (script) {
      if (script.errors.length > 0 && turn.stepIndex === 0) {
        return { kind: "text", text: `SCRIPT ERROR: ${script.errors.join("; ")}`, source: "directive" };
      }
      return this.play(script.steps, turn.stepIndex, context, "directive", echoText);
    }
    return { ...defaultAction(context, this.#defaults), source: "default" };
  }

  private play(
    steps: readonly ScriptStep[],
    index: number,
    context: ReplyContext,
    source: "queue" | "rule" | "directive",
    echoText: string,
  ): ModelDecision {
    const step = steps[index];
    if (!step) return { ...defaultAction(context, this.#defaults), source: "default" };
    const action: ModelAction = actionForStep(step, context, echoText, this.#defaults);
    return {
      ...action,
      ...(step.waitMs !== undefined ? { waitMs: step.waitMs } : {}),
      ...(step.hold !== undefined ? { hold: step.hold } : {}),
      ...(step.usage !== undefined ? { usage: step.usage } : {}),
      source,
      step: index,
    };
  }

  /** @internal Appends a recorded request. */
  private record(
    req: IncomingMessage,
    api: RecordedRequestKind,
    body: unknown,
    parsed?: ParsedModelRequest,
  ): RecordedRequest {
    const turn = parsed ? resolveTurn(parsed.items, this.#options.injectedContextTags) : undefined;
    const apiKey = presentedApiKey(req, this.#options.apiKeys);
    const path = req.url ?? "/";
    const route = path.startsWith(ROUTE_PREFIX) ? path.slice(ROUTE_PREFIX.length).split("/")[0] : undefined;
    const record: RecordedRequest = {
      seq: this.#requests.length + 1,
      api,
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers: redactHeaders(req.headers),
      body,
      stream: parsed?.stream ?? false,
      stepIndex: turn?.stepIndex ?? 0,
      tools: parsed?.tools ?? [],
      toolNames: (parsed?.tools ?? []).map((t) => t.qualifiedName),
      toolResults: turn?.trailingToolResults ?? [],
      sideCall: parsed ? isSideCall(parsed) : false,
      completed: false,
      clientAborted: false,
      receivedAt: Date.now(),
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(route ? { route } : {}),
      ...(parsed?.model !== undefined ? { model: parsed.model } : {}),
      ...(turn?.userText !== undefined ? { userText: turn.userText } : {}),
      ...(turn?.trailingToolResults.length ? { toolResult: turn.trailingToolResults.at(-1) } : {}),
      ...(parsed ? { parsed } : {}),
    };
    this.#requests.push(record);
    if (!parsed) this.#options.log?.(describeRecordedRequest(record));
    this.notify();
    return record;
  }

  private notify(): void {
    for (const waiter of [...this.#waiters]) {
      const found = this.#requests.find(waiter.predicate);
      if (!found) continue;
      clearTimeout(waiter.timer);
      this.#waiters.delete(waiter);
      waiter.resolve(found);
    }
  }

  #gate(name: string): Gate {
    let gate = this.#gates.get(name);
    if (!gate) {
      gate = { released: false, listeners: new Set() };
      this.#gates.set(name, gate);
    }
    return gate;
  }
}

function matches(matcher: RequestMatcher, context: MatchContext): boolean {
  if (typeof matcher === "function") return matcher(context);
  const text = context.turn.userText;
  if (text === undefined) return false;
  return typeof matcher === "string" ? text.includes(matcher) : matcher.test(text);
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let buffer: Buffer = Buffer.concat(chunks);
  const encoding = String(req.headers["content-encoding"] ?? "").toLowerCase();
  if (encoding && encoding !== "identity") {
    const inflate = inflaters[encoding];
    if (!inflate) throw new Error(`unsupported content-encoding ${encoding}`);
    buffer = await inflate(buffer);
  }
  if (buffer.length === 0) return undefined;
  return JSON.parse(buffer.toString("utf8"));
}
