import { JsonLinesChannel, SwitchyardError, type ManagedProcess, type PluginLogger } from "@switchyard/sdk";
import { isResponse, type PiRpcCommand, type PiRpcInbound, type PiRpcOutbound, type PiRpcResponse } from "./pi-wire.js";

interface Pending {
  resolve(response: PiRpcResponse): void;
  reject(error: Error): void;
}

/**
 * Pi's command protocol over the kit's JSON-lines channel. Pi does not speak JSON-RPC: a command
 * is `{type, id}` and its answer `{type: "response", id, success}`, so this matches answers to
 * commands by id and hands every other line (events, extension UI requests) to `onMessage`,
 * synchronously and in order, so a response and the events after it are never reordered.
 */
export class PiRpcClient {
  readonly channel: JsonLinesChannel;
  readonly #pending = new Map<string, Pending>();
  #nextId = 0;

  constructor(
    process: ManagedProcess,
    logger: PluginLogger,
    private readonly onMessage: (message: PiRpcInbound) => void,
  ) {
    this.channel = new JsonLinesChannel(process, {
      label: "pi",
      logger,
      onMessage: (message) => this.#receive(message),
    });
    // A dead Pi fails what waits for it, with the channel's error (which carries Pi's stderr).
    this.channel.onClosed((error) => {
      for (const entry of [...this.#pending.values()]) entry.reject(error);
      this.#pending.clear();
    });
  }

  /** The process id. */
  get pid(): number {
    return this.channel.pid;
  }

  /** Writes one line (a dialog answer); throws `session_closed` once Pi is gone. */
  send(message: PiRpcOutbound): void {
    this.channel.send(message);
  }

  /**
   * Sends a command and resolves with its response (successful or not). `timeoutMs` null waits
   * as long as the process lives (`abort` answers only once the run is over).
   */
  request(command: PiRpcCommand, timeoutMs: number | null): Promise<PiRpcResponse> {
    const closed = this.channel.closedError;
    if (closed !== null) return Promise.reject(closed);
    const id = `sy-${++this.#nextId}`;
    return new Promise<PiRpcResponse>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        clearTimeout(timer);
        this.#pending.delete(id);
      };
      this.#pending.set(id, {
        resolve: (response) => (settle(), resolve(response)),
        reject: (error) => (settle(), reject(error)),
      });
      if (timeoutMs !== null) {
        timer = setTimeout(
          () =>
            this.#pending.get(id)?.reject(
              new SwitchyardError("timeout", `pi did not answer "${command.type}" within ${timeoutMs} ms.`, {
                command: command.type,
              }),
            ),
          timeoutMs,
        );
        timer.unref();
      }
      try {
        this.channel.send({ ...command, id });
      } catch (error) {
        this.#pending.get(id)?.reject(error as Error);
      }
    });
  }

  /** Like {@link request}, but a `success: false` response rejects with `provider_error`. */
  async call<T = unknown>(command: PiRpcCommand, timeoutMs: number | null): Promise<T> {
    const response = await this.request(command, timeoutMs);
    if (!response.success) {
      throw new SwitchyardError("provider_error", `pi refused "${command.type}": ${response.error}`, {
        command: command.type,
      });
    }
    return response.data as T;
  }

  /**
   * Stops Pi: the channel closes stdin (Pi exits at once) and signals the group after `graceMs`;
   * then whatever is left in the group (an extension's child) is killed too, which the host's
   * kill skips once the leader has exited.
   */
  async stop(graceMs = 2_000): Promise<void> {
    await this.channel.stop(graceMs, 2_000);
    reapGroup(this.pid);
  }

  /** Kills the process group now. */
  async kill(): Promise<void> {
    await this.channel.process.kill("SIGKILL", 0).catch(() => undefined);
    reapGroup(this.pid);
  }

  #receive(message: unknown): void {
    if (typeof message !== "object" || message === null) return;
    const inbound = message as PiRpcInbound;
    if (isResponse(inbound) && inbound.id !== undefined) {
      const pending = this.#pending.get(inbound.id);
      if (pending !== undefined) {
        pending.resolve(inbound);
        return;
      }
    }
    this.onMessage(inbound);
  }
}

/** SIGKILL to a process group whose leader may be gone already. */
function reapGroup(pid: number): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // nothing left
  }
}
