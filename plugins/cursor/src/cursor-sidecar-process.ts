import { fileURLToPath } from "node:url";
import {
  JsonLinesChannel,
  JsonRpcPeer,
  JsonRpcRequestError,
  SwitchyardError,
  withStderrTail,
  type ErrorCode,
  type PluginLogger,
  type ProcessHelpers,
} from "@switchyard/sdk";
import {
  SIDECAR_METHODS,
  SIDECAR_NOTIFICATIONS,
  type InitializeParams,
  type InitializeResult,
  type ModelsResult,
  type OpenAgentParams,
  type OpenAgentResult,
  type RunEndedNotification,
  type RunMessageNotification,
  type SendParams,
  type SendResult,
  type SidecarErrorData,
  type SteerParams,
  type SteerResult,
} from "./cursor-wire.js";

/**
 * The compiled sidecar. Always the file in `dist/`, whether this module runs from `src/`
 * (vitest) or `dist/`: both sit one level below the package root.
 */
export const CURSOR_SIDECAR_SCRIPT = fileURLToPath(new URL("../dist/sidecar/cursor-sidecar.js", import.meta.url));

/** What a sidecar reports while a run goes on. */
export interface SidecarListener {
  onRunMessage(notification: RunMessageNotification): void;
  onRunEnded(notification: RunEndedNotification): void;
}

const CODES: Record<SidecarErrorData["kind"], ErrorCode> = {
  busy: "conflict",
  not_found: "not_found",
  authentication: "provider_unavailable",
  rate_limit: "provider_error",
  configuration: "provider_error",
  network: "provider_unavailable",
  unsupported: "provider_error",
  unknown: "provider_error",
};

/**
 * One sidecar process (Node ≥ 22.13) running the Cursor SDK, started through the host's process
 * helpers (its own process group, its pid recorded for orphan reaping, its stderr tail kept),
 * spoken to over the harness kit's JSON-lines channel and JSON-RPC peer.
 */
export class CursorSidecar {
  readonly channel: JsonLinesChannel;
  readonly #peer: JsonRpcPeer;

  private constructor(channel: JsonLinesChannel, peer: JsonRpcPeer) {
    this.channel = channel;
    this.#peer = peer;
  }

  /** Starts the sidecar with `env` (the Cursor API key travels there, never in argv). */
  static start(input: {
    readonly helpers: ProcessHelpers;
    readonly node: string;
    readonly cwd: string;
    readonly env: Readonly<Record<string, string>>;
    readonly logger: PluginLogger;
    readonly label: string;
    readonly listener: SidecarListener | null;
  }): CursorSidecar {
    const child = input.helpers.spawn(input.node, ["--disable-warning=ExperimentalWarning", CURSOR_SIDECAR_SCRIPT], {
      cwd: input.cwd,
      env: input.env,
      extendEnv: false,
      stdin: "pipe",
      label: input.label,
    });
    // The host keeps the stderr tail; the stream must still be drained.
    child.stderr.resume();
    let peer: JsonRpcPeer | null = null;
    const channel = new JsonLinesChannel(child, {
      label: input.label,
      logger: input.logger,
      onMessage: (message) => peer?.receive(message),
    });
    peer = new JsonRpcPeer(channel, {
      jsonrpcField: true,
      onNotification: ({ method, params }) => {
        if (method === SIDECAR_NOTIFICATIONS.runMessage) input.listener?.onRunMessage(params as RunMessageNotification);
        else if (method === SIDECAR_NOTIFICATIONS.runEnded) input.listener?.onRunEnded(params as RunEndedNotification);
      },
      onRequest: async ({ method }) => {
        throw new JsonRpcRequestError(method, -32601, `The plugin answers no requests (${method}).`);
      },
    });
    return new CursorSidecar(channel, peer);
  }

  /** The sidecar's pid (diagnostics and tests). */
  get pid(): number {
    return this.channel.pid;
  }

  /** `message` with the end of what the sidecar wrote on stderr, secrets scrubbed by the host. */
  describe(message: string): string {
    return withStderrTail(message, this.channel.stderr);
  }

  initialize(params: InitializeParams, timeoutMs: number): Promise<InitializeResult> {
    return this.#call(SIDECAR_METHODS.initialize, params, timeoutMs);
  }

  openAgent(params: OpenAgentParams, timeoutMs: number): Promise<OpenAgentResult> {
    return this.#call(SIDECAR_METHODS.openAgent, params, timeoutMs);
  }

  send(params: SendParams): Promise<SendResult> {
    return this.#call(SIDECAR_METHODS.send, params, 120_000);
  }

  /** Waits for the backend's answer: the SDK gives up after 15 s without one. */
  steer(params: SteerParams): Promise<SteerResult> {
    return this.#call(SIDECAR_METHODS.steer, params, 60_000);
  }

  cancel(turnId: string): Promise<void> {
    return this.#call(SIDECAR_METHODS.cancel, { turnId }, 30_000);
  }

  listModels(timeoutMs: number): Promise<ModelsResult> {
    return this.#call(SIDECAR_METHODS.listModels, {}, timeoutMs);
  }

  /** Ends the sidecar: stdin closes (it closes its agent and exits), then its group is stopped. */
  async stop(): Promise<void> {
    await this.channel.stop(5_000, 3_000);
  }

  async #call<T>(method: string, params: unknown, timeoutMs: number): Promise<T> {
    try {
      return await this.#peer.request<T>(method, params, timeoutMs);
    } catch (error) {
      throw this.#translate(method, error);
    }
  }

  /** A sidecar's JSON-RPC error as a typed Switchyard error, by the kind the sidecar classified. */
  #translate(method: string, error: unknown): Error {
    if (error instanceof JsonRpcRequestError) {
      const data = (error.data ?? {}) as Partial<SidecarErrorData>;
      const kind = data.kind ?? "unknown";
      return new SwitchyardError(CODES[kind] ?? "provider_error", `Cursor ${method} failed: ${error.message}`, {
        method,
        cursorErrorKind: kind,
        ...(data.code !== undefined ? { cursorCode: data.code } : {}),
        ...(data.status !== undefined ? { status: data.status } : {}),
      });
    }
    if (error instanceof SwitchyardError && error.code === "session_closed") return error;
    return error instanceof Error ? error : new Error(String(error));
  }
}
