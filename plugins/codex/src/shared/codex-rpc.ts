import {
  JsonLinesChannel,
  JsonRpcPeer,
  type ManagedProcess,
  type PluginLogger,
  type ProcessExit,
} from "@switchyard/sdk";
import type {
  ClientMethod,
  ClientParams,
  ClientRequestResults,
  ServerNotification,
  ServerRequest,
} from "../codex-wire.js";

/** Options of {@link CodexRpc}. */
export interface CodexRpcOptions {
  /** Names the process in errors and logs (`codex app-server`). */
  readonly label: string;
  readonly logger: PluginLogger;
  /** Every server notification, synchronously and in the order Codex wrote them. */
  readonly onNotification: (notification: ServerNotification) => void;
  /** Answers a server → client request: resolve with the result, or throw to answer an error. */
  readonly onRequest: (request: ServerRequest) => Promise<unknown>;
}

/**
 * The client side of one `codex app-server` process: the kit's JSON-lines channel and JSON-RPC
 * peer (without the `"jsonrpc"` field, which Codex never sends), typed by the generated wire.
 * Lines are dispatched synchronously in arrival order, so a handler sees `turn/started`, items
 * and `turn/completed` in the order Codex wrote them; when the process dies every pending
 * request fails with `session_closed` and the end of its stderr.
 */
export class CodexRpc {
  readonly channel: JsonLinesChannel;
  readonly #peer: JsonRpcPeer;

  constructor(process: ManagedProcess, options: CodexRpcOptions) {
    let peer: JsonRpcPeer | null = null;
    this.channel = new JsonLinesChannel(process, {
      label: options.label,
      logger: options.logger,
      onMessage: (message) => peer?.receive(message),
    });
    peer = new JsonRpcPeer(this.channel, {
      jsonrpcField: false,
      onNotification: (notification) => options.onNotification(notification as ServerNotification),
      onRequest: (request) => options.onRequest(request as ServerRequest),
    });
    this.#peer = peer;
  }

  /** True once the process exited or the channel was closed. */
  get closed(): boolean {
    return this.channel.closed;
  }

  /** Settles with the exit once the process has exited. */
  get exited(): Promise<ProcessExit> {
    return this.channel.exited;
  }

  /** Sends a request and resolves with its typed result. */
  request<M extends ClientMethod>(
    method: M,
    params: ClientParams<M>,
    timeoutMs?: number,
  ): Promise<ClientRequestResults[M]> {
    return this.#peer.request<ClientRequestResults[M]>(method, params, timeoutMs);
  }

  /** The handshake: `initialize`, then the `initialized` notification. */
  async initialize(hostVersion: string, timeoutMs: number): Promise<void> {
    await this.request(
      "initialize",
      { clientInfo: { name: "switchyard", title: "Switchyard", version: hostVersion }, capabilities: null },
      timeoutMs,
    );
    this.#peer.notify("initialized");
  }

  /**
   * Stops reading (pending requests fail at once) and ends the process: stdin closed (the
   * app-server exits on its own), then its process group killed, which reaps what it started.
   */
  async stop(graceMs = 500): Promise<void> {
    this.channel.close();
    await this.channel.stop(graceMs, 2_000);
  }
}
