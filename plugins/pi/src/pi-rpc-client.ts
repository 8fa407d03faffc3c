import type { ManagedProcess, PluginLogger } from "@switchyard/sdk";
import { SwitchyardError } from "@switchyard/sdk";
import { isResponse, type PiRpcCommand, type PiRpcInbound, type PiRpcOutbound, type PiRpcResponse } from "./pi-wire.js";


/** Splits a byte stream into records on `\n` only (Pi's strict JSONL; not `readline`). */
export class JsonlSplitter {
  private buffer = "";

  push(chunk: string, onLine: (line: string) => void): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf("\n");
    while (newline >= 0) {
      let line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line.trim() !== "") onLine(line);
      newline = this.buffer.indexOf("\n");
    }
  }
}

interface Pending {
  readonly command: string;
  resolve(response: PiRpcResponse): void;
  reject(error: Error): void;
  readonly timer: NodeJS.Timeout | null;
}

/**
 * One `pi --mode rpc` process: writes commands, matches responses by id, and hands every other
 * message (events, extension UI requests) to `onMessage` synchronously and in order, so a
 * response and the events after it are never reordered.
 */
export class PiRpcClient {
  private readonly pending = new Map<string, Pending>();
  private readonly splitter = new JsonlSplitter();
  private nextId = 0;
  private gone: Error | null = null;
  /** Settles when the process has exited. */
  readonly exited: Promise<{ readonly exitCode: number | null; readonly signal: string | null }>;

  constructor(
    readonly managed: ManagedProcess,
    private readonly logger: PluginLogger,
    private readonly onMessage: (message: PiRpcInbound) => void,
  ) {
    managed.stdout.setEncoding("utf8");
    managed.stdout.on("data", (chunk: string) => this.splitter.push(chunk, (line) => this.dispatch(line)));
    managed.stdin?.on("error", (error) => this.logger.debug("pi stdin error", { error: error.message }));
    this.exited = managed.exited.then((exit) => {
      this.gone = new SwitchyardError("session_closed", `The pi process exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`);
      for (const [id, entry] of this.pending) {
        this.pending.delete(id);
        if (entry.timer) clearTimeout(entry.timer);
        entry.reject(this.gone);
      }
      return exit;
    });
  }

  /** The process id. */
  get pid(): number {
    return this.managed.pid;
  }

  /** The last lines Pi wrote on stderr, secrets scrubbed (Pi prints startup errors there; the host keeps the tail). */
  stderr(): string {
    return this.managed.stderrTail();
  }

  /** True once the process has exited. */
  get closed(): boolean {
    return this.gone !== null;
  }

  private dispatch(line: string): void {
    let message: PiRpcInbound;
    try {
      message = JSON.parse(line) as PiRpcInbound;
    } catch {
      this.logger.debug("pi wrote a non-JSON line", { line: line.slice(0, 200) });
      return;
    }
    if (typeof message !== "object" || message === null) return;
    if (isResponse(message) && message.id !== undefined) {
      const entry = this.pending.get(message.id);
      if (entry !== undefined) {
        this.pending.delete(message.id);
        if (entry.timer) clearTimeout(entry.timer);
        entry.resolve(message);
        return;
      }
    }
    this.onMessage(message);
  }

  /** Writes one line. */
  write(message: PiRpcOutbound): void {
    if (this.gone !== null) throw this.gone;
    const stdin = this.managed.stdin;
    if (stdin === null || stdin.destroyed) throw new SwitchyardError("session_closed", "The pi process has no open stdin.");
    stdin.write(`${JSON.stringify(message)}\n`);
  }

  /**
   * Sends a command and resolves with its response (successful or not). `timeoutMs` null waits
   * as long as the process lives (`abort` answers only once the run is over).
   */
  request(command: PiRpcCommand, timeoutMs: number | null): Promise<PiRpcResponse> {
    if (this.gone !== null) return Promise.reject(this.gone);
    const id = `sy-${++this.nextId}`;
    return new Promise<PiRpcResponse>((resolve, reject) => {
      const timer =
        timeoutMs === null
          ? null
          : setTimeout(() => {
              this.pending.delete(id);
              reject(new SwitchyardError("timeout", `pi did not answer "${command.type}" within ${timeoutMs} ms.`, { command: command.type }));
            }, timeoutMs);
      timer?.unref();
      this.pending.set(id, { command: command.type, resolve, reject, timer });
      try {
        this.write({ ...command, id });
      } catch (error) {
        this.pending.delete(id);
        if (timer) clearTimeout(timer);
        reject(error as Error);
      }
    });
  }

  /** Like {@link request}, but a `success: false` response rejects with `provider_error`. */
  async call<T = unknown>(command: PiRpcCommand, timeoutMs: number | null): Promise<T> {
    const response = await this.request(command, timeoutMs);
    if (!response.success) {
      throw new SwitchyardError("provider_error", `pi refused "${command.type}": ${response.error}`, { command: command.type });
    }
    return response.data as T;
  }

  /**
   * Stops the process: closes stdin (Pi exits at once), SIGTERM to the process group if it is
   * still there after `graceMs` (SIGKILL 2 s later), and finally SIGKILL to whatever is left in
   * the group, so a tool's children never outlive the session.
   */
  async stop(graceMs = 2_000): Promise<void> {
    if (this.gone === null) {
      try {
        this.managed.stdin?.end();
      } catch {
        // already closed
      }
      await Promise.race([this.exited, new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref())]);
    }
    if (this.gone === null) await this.managed.kill("SIGTERM", 2_000).catch(() => undefined);
    reapGroup(this.managed.pid);
  }

  /** Kills the process group now. */
  async kill(): Promise<void> {
    if (this.gone === null) await this.managed.kill("SIGKILL", 0).catch(() => undefined);
    reapGroup(this.managed.pid);
  }
}

/** SIGKILL to a process group whose leader may be gone already (stray tool processes). */
function reapGroup(pid: number): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // nothing left
  }
}
