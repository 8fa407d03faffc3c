import { SwitchyardError } from "@switchyard/spec";
import type { JsonLinesChannel } from "./json-lines-channel.js";

/** A JSON-RPC error a harness answered with. @public */
export class JsonRpcRequestError extends Error {
  constructor(
    /** The method that failed. */
    readonly method: string,
    /** The JSON-RPC error code. */
    readonly rpcCode: number,
    message: string,
    /** The error's `data`, when the harness sent one. */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "JsonRpcRequestError";
  }
}

/** A request the harness sent us. @public */
export interface IncomingRequest {
  readonly id: string | number;
  readonly method: string;
  readonly params: unknown;
}

/** A notification the harness sent us. @public */
export interface IncomingNotification {
  readonly method: string;
  readonly params: unknown;
}

/** Options of {@link JsonRpcPeer}. @public */
export interface JsonRpcPeerOptions {
  /**
   * Write `"jsonrpc": "2.0"` on every message. Some harnesses (codex app-server) never send or
   * want it; standard peers do.
   */
  readonly jsonrpcField: boolean;
  /** Every notification, synchronously and in arrival order. */
  readonly onNotification: (notification: IncomingNotification) => void;
  /** Answers a request from the harness: resolve with the result, or throw to answer an error. */
  readonly onRequest: (request: IncomingRequest) => Promise<unknown>;
}

interface Pending {
  readonly method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * JSON-RPC 2.0 over a {@link JsonLinesChannel}: requests with ids and optional timeouts,
 * notifications both ways, and answers to the harness's own requests. When the harness dies,
 * every pending request fails with the channel's `session_closed` error (which carries the
 * harness's stderr tail).
 * @public
 */
export class JsonRpcPeer {
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();

  constructor(
    readonly channel: JsonLinesChannel,
    private readonly options: JsonRpcPeerOptions,
  ) {
    channel.onClosed((error) => {
      for (const entry of [...this.#pending.values()]) entry.reject(error);
      this.#pending.clear();
    });
  }

  /** Routes one message the channel received; call it from the channel's `onMessage`. */
  receive(message: unknown): void {
    if (typeof message !== "object" || message === null) return;
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof method === "string") {
      if (id === undefined || id === null) {
        this.options.onNotification({ method, params });
        return;
      }
      void this.#answer({ id: id as string | number, method, params });
      return;
    }
    if (typeof id !== "number") return;
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    const error = (message as { error?: { code?: unknown; message?: unknown; data?: unknown } | null }).error;
    if (error !== undefined && error !== null) {
      pending.reject(
        new JsonRpcRequestError(
          pending.method,
          typeof error.code === "number" ? error.code : -32603,
          String(error.message ?? "unknown error"),
          error.data,
        ),
      );
    } else {
      pending.resolve((message as { result?: unknown }).result);
    }
  }

  /** Sends a request; resolves with its result, rejects with a {@link JsonRpcRequestError}, a timeout or `session_closed`. */
  request<T = unknown>(method: string, params?: unknown, timeoutMs?: number): Promise<T> {
    const closed = this.channel.closedError;
    if (closed !== null) return Promise.reject(closed);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        if (timer !== undefined) clearTimeout(timer);
        this.#pending.delete(id);
      };
      this.#pending.set(id, {
        method,
        resolve: (result) => {
          settle();
          resolve(result as T);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.#pending.get(id)?.reject(
            new SwitchyardError("timeout", `The harness did not answer ${method} within ${timeoutMs} ms.`, {
              method,
              timeoutMs,
            }),
          );
        }, timeoutMs);
        timer.unref();
      }
      try {
        this.channel.send(this.#frame({ id, method, ...(params !== undefined ? { params } : {}) }));
      } catch (error) {
        this.#pending.get(id)?.reject(error as Error);
      }
    });
  }

  /** Sends a notification; silently dropped once the harness is gone (nothing waits for it). */
  notify(method: string, params?: unknown): void {
    if (this.channel.closed) return;
    try {
      this.channel.send(this.#frame({ method, ...(params !== undefined ? { params } : {}) }));
    } catch {
      // the exit path reports a dead harness
    }
  }

  /** Requests still waiting for an answer. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  async #answer(request: IncomingRequest): Promise<void> {
    let reply: Record<string, unknown>;
    try {
      reply = { id: request.id, result: (await this.options.onRequest(request)) ?? null };
    } catch (error) {
      const rpc = error instanceof JsonRpcRequestError ? error : null;
      reply = {
        id: request.id,
        error: { code: rpc?.rpcCode ?? -32603, message: error instanceof Error ? error.message : String(error) },
      };
    }
    if (this.channel.closed) return;
    try {
      this.channel.send(this.#frame(reply));
    } catch {
      // the harness died while we answered
    }
  }

  #frame(message: Record<string, unknown>): Record<string, unknown> {
    return this.options.jsonrpcField ? { jsonrpc: "2.0", ...message } : message;
  }
}
