import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { redactHeaders } from "../model-server/recorded-request.js";
import { endOfStream, envelope, readEnvelopes } from "./connect-framing.js";
import { loadCursorWireSchemas, type CursorWireSchemas } from "./cursor-sdk-schemas.js";
import { clientMessageKind, type AgentClientMessageJson, type SteerAnswer } from "./cursor-wire-json.js";
import {
  FakeCursorRun,
  type FakeCursorRunRecord,
  type FakeRunError,
  type FakeRunHost,
  type FakeRunStream,
} from "./fake-cursor-run.js";

/** Options of {@link FakeCursorBackend.start}. */
export interface FakeCursorBackendOptions {
  /** Interface to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** Port (default 0: any free port). */
  readonly port?: number;
  /** Model ids the catalog (`GET /v1/models`) lists (default `["fake-model"]`). */
  readonly models?: readonly string[];
  /** The only API key accepted; any other gets 401. Default: any key. */
  readonly apiKey?: string;
  /** How steers are answered (default `delivered`); change it later with {@link FakeCursorBackend.answerSteersWith}. */
  readonly steerAnswer?: SteerAnswer;
  /** Send a conversation checkpoint at each turn's end (default true), which is all a resumed conversation remembers. */
  readonly checkpoints?: boolean;
  /** Characters per streamed text delta (default 24). */
  readonly chunkSize?: number;
  /** How often an open run stream gets a heartbeat (default 5 s), as the real backend keeps it alive. */
  readonly heartbeatMs?: number;
  /** Where `@cursor/sdk` is installed (its package folder); default: resolved from the testkit. */
  readonly sdkPackageDir?: string;
  /** Receives one line per request and per client message, for debugging. */
  readonly log?: (line: string) => void;
}

/** One HTTP request the fake received (Authorization redacted). */
export interface FakeCursorRequest {
  readonly method: string;
  readonly path: string;
  readonly contentType: string;
  readonly headers: Record<string, string>;
}

interface Gate {
  released: boolean;
  readonly listeners: Set<() => void>;
}

/** One Bidi request id: its stream (once opened), its run (once the run request came) and its inbox. */
interface Conversation {
  stream: FakeRunStream | null;
  run: FakeCursorRun | null;
  /** Client messages not delivered yet, by sequence number. */
  readonly inbox: Map<number, AgentClientMessageJson>;
  /** The next sequence number to deliver. */
  nextSeq: number;
}

interface Waiter {
  readonly check: () => boolean;
  readonly resolve: () => void;
}

/** The services the SDK calls besides the agent stream, answered with their default (empty) message. */
const EMPTY_UNARY_PREFIXES = ["/aiserver.v1.", "/agent.v1."];

/**
 * A fake of Cursor's *backend*, on 127.0.0.1, for the real `@cursor/sdk` pointed at it with
 * `CURSOR_BACKEND_URL`. Cursor's agent loop and model live on its backend (the SDK only runs
 * tools), so the scripted model server cannot stand in; this fake speaks the backend's Connect
 * RPC + protobuf protocol over HTTP/1.1 instead: the API-key exchange, the model catalog, the
 * `agent.v1.AgentService/RunSSE` server stream and `aiserver.v1.BidiService/BidiAppend` for the
 * client's half, with client messages that arrive before their stream opens buffered and put in
 * order. Each run plays a script from the user's text, in the scripted model server's language
 * (see {@link FakeCursorRun}). The message schemas are loaded from the installed SDK
 * ({@link loadCursorWireSchemas}), which must be the release the fake is known to match.
 *
 * @example
 * const backend = await FakeCursorBackend.start();
 * // an SDK process with CURSOR_BACKEND_URL=backend.url gets "PONG" for "hi", and for
 * // "go @@shell echo hi @@then @@reply said {{output}}" runs `echo hi` itself, then says "said hi".
 */
export class FakeCursorBackend {
  readonly #server: Server;
  readonly #schemas: CursorWireSchemas;
  readonly #options: FakeCursorBackendOptions;
  readonly #conversations = new Map<string, Conversation>();
  readonly #allRuns: FakeCursorRun[] = [];
  readonly #records: FakeCursorRunRecord[] = [];
  readonly #requests: FakeCursorRequest[] = [];
  readonly #gates = new Map<string, Gate>();
  readonly #waiters = new Set<Waiter>();
  #steerAnswer: SteerAnswer;
  #closed = false;

  /** Base URL, e.g. `http://127.0.0.1:43123` (what `CURSOR_BACKEND_URL` gets). */
  readonly url: string;

  private constructor(server: Server, schemas: CursorWireSchemas, options: FakeCursorBackendOptions) {
    this.#server = server;
    this.#schemas = schemas;
    this.#options = options;
    this.#steerAnswer = options.steerAnswer ?? "delivered";
    const address = server.address() as AddressInfo;
    this.url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  }

  /** Loads the SDK's schemas, starts listening and resolves once it does. */
  static async start(options: FakeCursorBackendOptions = {}): Promise<FakeCursorBackend> {
    const schemas = loadCursorWireSchemas(
      options.sdkPackageDir !== undefined ? { sdkPackageDir: options.sdkPackageDir } : {},
    );
    let instance: FakeCursorBackend | undefined;
    const server = createServer((req, res) => {
      void instance?.handle(req, res).catch((error: unknown) => {
        options.log?.(`fake cursor backend: ${(error as Error).stack ?? String(error)}`);
        if (!res.headersSent)
          res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: String(error) }));
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    instance = new FakeCursorBackend(server, schemas, options);
    return instance;
  }

  /** The SDK release whose schemas the fake loaded. */
  get sdkVersion(): string {
    return this.#schemas.sdkVersion;
  }

  /** Every run so far, oldest first (live records). */
  get runs(): readonly FakeCursorRunRecord[] {
    return this.#records;
  }

  /** Every HTTP request so far, oldest first. */
  get requests(): readonly FakeCursorRequest[] {
    return this.#requests;
  }

  /** How the next steers are answered: `delivered` (the turn takes it), `queuedForNextTurn`, `cancelled`, `rejected`, or `none` (no answer). */
  answerSteersWith(answer: SteerAnswer): void {
    this.#steerAnswer = answer;
  }

  /** Opens a `@@hold` gate: held runs go on, and later holds on it pass straight through. */
  release(gate: string): void {
    const entry = this.#gate(gate);
    entry.released = true;
    for (const listener of entry.listeners) listener();
    entry.listeners.clear();
  }

  /** How many times `needle` occurs in what the "model" received in the newest run that contains it (0 when none does). */
  countInModelInput(needle: string): number {
    const run = [...this.#allRuns].reverse().find((candidate) => candidate.modelInput.includes(needle));
    return run === undefined ? 0 : run.modelInput.split(needle).length - 1;
  }

  /** Resolves with the first run (past or future) that satisfies `predicate`; rejects after `timeoutMs` (default 15 s) listing the runs seen. */
  waitForRun(predicate: (run: FakeCursorRunRecord) => boolean, timeoutMs = 15_000): Promise<FakeCursorRunRecord> {
    return new Promise((resolve, reject) => {
      const find = () => this.#records.find(predicate);
      const found = find();
      if (found !== undefined) return resolve(found);
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        const seen =
          this.#records
            .map((run) => `${run.requestId} ${run.status} ${JSON.stringify(run.userText.slice(0, 80))}`)
            .join("\n  ") || "(none)";
        reject(new Error(`No matching Cursor run within ${timeoutMs} ms. Runs:\n  ${seen}`));
      }, timeoutMs);
      const waiter: Waiter = {
        check: () => find() !== undefined,
        resolve: () => {
          clearTimeout(timer);
          resolve(find()!);
        },
      };
      this.#waiters.add(waiter);
    });
  }

  /** Resolves once a run is held on `gate`. */
  waitForHold(gate: string, timeoutMs = 15_000): Promise<FakeCursorRunRecord> {
    return this.waitForRun((run) => run.heldOn === gate, timeoutMs);
  }

  /** Stops listening and ends every open run. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const run of this.#allRuns) run.onClientGone();
    for (const gate of this.#gates.values()) for (const listener of gate.listeners) listener();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const contentType = String(req.headers["content-type"] ?? "");
    this.#requests.push({ method: req.method ?? "GET", path, contentType, headers: redactHeaders(req.headers) });
    this.#options.log?.(`fake cursor backend: ${req.method} ${path} ${contentType}`);
    const body = await readBody(req);
    if (this.#options.apiKey !== undefined && !this.#authorized(path, req.headers.authorization)) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "invalid api key" }));
      return;
    }
    if (path === "/auth/exchange_user_api_key") {
      // Later calls carry this token instead of the key.
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ accessToken: "fake-cursor-access-token", refreshToken: "fake-cursor-refresh-token" }));
      return;
    }
    if (req.method === "GET" && path === "/v1/models") {
      const items = (this.#options.models ?? ["fake-model"]).map((id) => ({ id, displayName: id }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items }));
      return;
    }
    if (path === "/agent.v1.AgentService/RunSSE") return this.#openRun(req, res, body);
    if (path === "/aiserver.v1.BidiService/BidiAppend") {
      this.#append(body);
      res.writeHead(200, { "content-type": "application/proto" }).end();
      return;
    }
    if (contentType.startsWith("application/json")) {
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    }
    if (EMPTY_UNARY_PREFIXES.some((prefix) => path.startsWith(prefix))) {
      // A Connect unary call: an empty body is the default message.
      res.writeHead(200, { "content-type": contentType || "application/proto" }).end();
      return;
    }
    res
      .writeHead(404, { "content-type": "application/json" })
      .end(JSON.stringify({ error: `not found: ${req.method} ${path}` }));
  }

  /** The key exchange and the catalog carry the raw key; every other call the exchanged token. */
  #authorized(path: string, authorization: string | undefined): boolean {
    if (path === "/auth/exchange_user_api_key" || path === "/v1/models")
      return authorization === `Bearer ${this.#options.apiKey}`;
    return authorization === "Bearer fake-cursor-access-token" || authorization === `Bearer ${this.#options.apiKey}`;
  }

  #conversation(requestId: string): Conversation {
    let conversation = this.#conversations.get(requestId);
    if (conversation === undefined) {
      conversation = { stream: null, run: null, inbox: new Map(), nextSeq: 0 };
      this.#conversations.set(requestId, conversation);
    }
    return conversation;
  }

  /** A `RunSSE` call: the server half of one run, kept open until the turn ends. */
  #openRun(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const [first] = readEnvelopes(body);
    const requestId =
      first === undefined
        ? ""
        : String((this.#schemas.bidiRequestId.fromBinary(first).toJson() as { requestId?: string }).requestId ?? "");
    res.writeHead(200, { "content-type": "application/connect+proto" });
    res.flushHeaders();
    const conversation = this.#conversation(requestId);
    conversation.stream = {
      send: (message: Record<string, unknown>) => {
        if (!res.writableEnded) res.write(envelope(this.#schemas.serverMessage.fromJson(message).toBinary()));
      },
      end: (error?: FakeRunError) => {
        if (res.writableEnded) return;
        res.end(
          endOfStream(
            error === undefined
              ? undefined
              : { code: error.code, message: error.message, details: [this.#errorDetail(error)] },
          ),
        );
      },
    };
    // The client cancels a run by closing this request.
    res.on("close", () => {
      if (!res.writableFinished) conversation.run?.onClientGone();
    });
    this.#drain(requestId);
  }

  /** One `BidiAppend`: a client message for a request id. */
  #append(body: Buffer): void {
    const append = this.#schemas.bidiAppendRequest.fromBinary(body).toJson() as {
      data?: string;
      requestId?: { requestId?: string };
      appendSeqno?: string | number;
    };
    const requestId = append.requestId?.requestId ?? "";
    const seq = Number(append.appendSeqno ?? 0);
    const message = this.#schemas.clientMessage
      .fromBinary(Buffer.from(append.data ?? "", "hex"))
      .toJson() as AgentClientMessageJson;
    this.#options.log?.(`fake cursor backend: <- ${requestId} #${seq} ${clientMessageKind(message)}`);
    const conversation = this.#conversation(requestId);
    if (seq >= conversation.nextSeq) conversation.inbox.set(seq, message);
    this.#drain(requestId);
  }

  /**
   * Delivers a request's client messages in sequence order once its stream is open: the first
   * (the run request) can arrive before `RunSSE` opens, and appends are separate HTTP calls
   * that may overtake each other.
   */
  #drain(requestId: string): void {
    const conversation = this.#conversation(requestId);
    const stream = conversation.stream;
    if (stream === null) return;
    let created: FakeCursorRun | null = null;
    while (conversation.inbox.has(conversation.nextSeq)) {
      const message = conversation.inbox.get(conversation.nextSeq)!;
      conversation.inbox.delete(conversation.nextSeq);
      conversation.nextSeq++;
      if (conversation.run !== null) {
        conversation.run.onClientMessage(message);
        continue;
      }
      if (message.runRequest === undefined) {
        stream.end({
          code: "invalid_argument",
          message: `fake cursor backend: the first message of request ${requestId} is ${clientMessageKind(message)}, not a run request`,
        });
        return;
      }
      created = new FakeCursorRun(requestId, message.runRequest, stream, this.#runHost());
      conversation.run = created;
      this.#allRuns.push(created);
      this.#records.push(created.record);
    }
    if (created !== null) {
      this.#notify();
      void created.play();
    }
  }

  /**
   * The detail Cursor's backend attaches to a failed call (`aiserver.v1.ErrorDetails`): the SDK
   * reads its kind and `is_retryable` to decide whether to retry the run. Client errors (4xx)
   * are final, server errors are retried.
   */
  #errorDetail(error: FakeRunError): { type: string; value: Uint8Array } {
    const status = error.status ?? 500;
    const kind =
      status === 400
        ? "ERROR_BAD_REQUEST"
        : status === 401
          ? "ERROR_UNAUTHORIZED"
          : status === 404
            ? "ERROR_NOT_FOUND"
            : status === 429
              ? "ERROR_RATE_LIMITED"
              : "ERROR_INTERNAL";
    const value = this.#schemas.errorDetails
      .fromJson({
        error: kind,
        details: { title: "Fake Cursor backend", detail: error.message, isRetryable: status >= 500 },
      })
      .toBinary();
    return { type: this.#schemas.errorDetails.typeName, value };
  }

  #runHost(): FakeRunHost {
    return {
      hold: (gate, ended) => this.#hold(gate, ended),
      steerAnswer: () => this.#steerAnswer,
      checkpoints: this.#options.checkpoints ?? true,
      chunkSize: this.#options.chunkSize ?? 24,
      heartbeatMs: this.#options.heartbeatMs ?? 5_000,
      changed: () => this.#notify(),
      log: (line) => this.#options.log?.(line),
    };
  }

  async #hold(gate: string, ended: Promise<void>): Promise<boolean> {
    const entry = this.#gate(gate);
    if (entry.released) return true;
    let listener!: () => void;
    const released = new Promise<boolean>((resolve) => {
      listener = () => resolve(true);
      entry.listeners.add(listener);
    });
    const result = await Promise.race([released, ended.then(() => false)]);
    entry.listeners.delete(listener);
    return result;
  }

  #gate(name: string): Gate {
    let gate = this.#gates.get(name);
    if (gate === undefined) {
      gate = { released: false, listeners: new Set() };
      this.#gates.set(name, gate);
    }
    return gate;
  }

  #notify(): void {
    for (const waiter of [...this.#waiters]) {
      if (!waiter.check()) continue;
      this.#waiters.delete(waiter);
      waiter.resolve();
    }
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return String(req.headers["content-encoding"] ?? "").toLowerCase() === "gzip" ? gunzipSync(body) : body;
}
