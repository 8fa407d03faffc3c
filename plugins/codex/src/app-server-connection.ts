import { SwitchyardError, type ManagedProcess, type PluginLogger } from "@switchyard/sdk";
import type {
  ClientMethod,
  ClientParams,
  ClientRequestResults,
  ServerNotification,
  ServerRequest,
} from "./codex-wire.js";

/** A JSON-RPC error the app-server answered with. */
export class AppServerRequestError extends Error {
  constructor(
    /** The JSON-RPC method that failed. */
    readonly method: string,
    /** The JSON-RPC error code (`-32600` for most Codex refusals). */
    readonly rpcCode: number,
    message: string,
  ) {
    super(message);
    this.name = "AppServerRequestError";
  }
}

/** Handles server → client requests; resolves with the result, or throws to answer an error. */
export type ServerRequestHandler = (request: ServerRequest) => Promise<unknown>;

/** Hears every server notification, in arrival order, synchronously. */
export type NotificationHandler = (notification: ServerNotification) => void;

interface PendingRequest {
  readonly method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * The client side of `codex app-server` over stdio: one JSON object per line, no `"jsonrpc"`
 * field (the server never sends one). Lines are dispatched synchronously in arrival order, so a
 * notification handler sees `turn/started`, items and `turn/completed` in the order Codex wrote
 * them. Responses settle their promises; when the process dies every pending request fails with
 * `session_closed`.
 */
export class AppServerConnection {
  private nextId = 1;
  private readonly pending = new Map<number, PendingRequest>();
  private buffer = "";
  private closedError: SwitchyardError | null = null;
  private readonly closedListeners = new Set<(error: SwitchyardError) => void>();

  constructor(
    private readonly child: ManagedProcess,
    private readonly logger: PluginLogger,
    private readonly onNotification: NotificationHandler,
    private readonly onServerRequest: ServerRequestHandler,
  ) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.receive(chunk));
    // A dead app-server makes writes fail with EPIPE; the exit path reports it.
    child.stdin?.on("error", () => undefined);
    void child.exited.then((exit) => {
      this.close(
        new SwitchyardError("session_closed", `codex app-server exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`, {
          exitCode: exit.exitCode,
          signal: exit.signal,
        }),
      );
    });
  }

  /** The app-server's process id. */
  get pid(): number {
    return this.child.pid;
  }

  /** The last lines of the app-server's stderr, secrets scrubbed (the host keeps the tail). */
  get stderr(): string {
    return this.child.stderrTail();
  }

  /** True once the process has exited or the connection was closed. */
  get closed(): boolean {
    return this.closedError !== null;
  }

  /** Calls `listener` once when the connection closes (immediately when it already has). */
  onClosed(listener: (error: SwitchyardError) => void): void {
    if (this.closedError !== null) listener(this.closedError);
    else this.closedListeners.add(listener);
  }

  /** Sends a request and resolves with its typed result. */
  request<M extends ClientMethod>(method: M, params: ClientParams<M>, timeoutMs?: number): Promise<ClientRequestResults[M]> {
    if (this.closedError !== null) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<ClientRequestResults[M]>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        if (timer !== undefined) clearTimeout(timer);
        this.pending.delete(id);
      };
      this.pending.set(id, {
        method,
        resolve: (result) => {
          settle();
          resolve(result as ClientRequestResults[M]);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.pending.get(id)?.reject(new SwitchyardError("timeout", `codex app-server did not answer ${method} within ${timeoutMs} ms.`, { method, timeoutMs }));
        }, timeoutMs);
        timer.unref();
      }
      this.write({ id, method, params });
    });
  }

  /** Sends a notification (the only one clients send is `initialized`). */
  notify(method: "initialized"): void {
    this.write({ method });
  }

  /** Stops reading and fails what is pending; does not kill the process. */
  close(error: SwitchyardError = new SwitchyardError("session_closed", "The app-server connection was closed.")): void {
    if (this.closedError !== null) return;
    this.closedError = error;
    for (const entry of [...this.pending.values()]) entry.reject(error);
    this.pending.clear();
    for (const listener of [...this.closedListeners]) listener(error);
    this.closedListeners.clear();
  }

  private write(message: Record<string, unknown>): void {
    if (this.closedError !== null || this.child.stdin === null) return;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    for (let newline = this.buffer.indexOf("\n"); newline >= 0; newline = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line.length > 0) this.dispatch(line);
    }
  }

  private dispatch(line: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.logger.debug("codex app-server wrote a non-JSON line", { line: line.slice(0, 200) });
      return;
    }
    const { id, method } = message;
    if (typeof method === "string") {
      if (id === undefined || id === null) {
        try {
          this.onNotification(message as unknown as ServerNotification);
        } catch (error) {
          this.logger.error("Handling a codex notification failed", { method, error: error instanceof Error ? error.message : String(error) });
        }
        return;
      }
      void this.answer(id as string | number, message as unknown as ServerRequest);
      return;
    }
    if (typeof id !== "number") return;
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    const error = message.error as { code?: unknown; message?: unknown } | undefined;
    if (error !== undefined && error !== null) {
      pending.reject(new AppServerRequestError(pending.method, typeof error.code === "number" ? error.code : -32603, String(error.message ?? "unknown error")));
    } else {
      pending.resolve(message.result);
    }
  }

  private async answer(id: string | number, request: ServerRequest): Promise<void> {
    try {
      const result = await this.onServerRequest(request);
      this.write({ id, result });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.write({ id, error: { code: -32603, message } });
    }
  }
}
