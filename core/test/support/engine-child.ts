import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";

const FIXTURE = fileURLToPath(new URL("../fixtures/engine-child.mjs", import.meta.url));

/** A Switchyard host running in a child process, driven over stdin/stdout. */
export class EngineChild {
  private next = 1;
  private readonly pending = new Map<number, (value: { ok: boolean; value?: unknown; error?: string }) => void>();
  readonly ready: Promise<{ mcpUrl: string; report: { continuedRuns: string[]; interruptedRuns: string[] } }>;
  readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    let resolveReady!: (value: never) => void;
    this.ready = new Promise((resolve) => (resolveReady = resolve as never));
    this.exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const message = JSON.parse(line) as { ready?: boolean; id?: number; ok: boolean };
      if (message.ready) resolveReady(message as never);
      else if (message.id !== undefined) this.pending.get(message.id)?.(message);
    });
  }

  /** Starts a host process on `home` with the given config (providers, plugins…). */
  static start(home: string, config: unknown): EngineChild {
    const child = spawn(process.execPath, [FIXTURE, home, JSON.stringify(config)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    return new EngineChild(child);
  }

  /** Starts a host with three scripted instances: alpha and beta resume sessions, gamma cannot. */
  static startScripted(home: string, gateDir: string, stateDir: string): EngineChild {
    const scripted = (id: string) => ({ id, driver: "scripted", options: { gateDir, stateDir } });
    return EngineChild.start(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        scripted("alpha"),
        scripted("beta"),
        // Cannot resume a session: its live runs end interrupted after a crash.
        {
          id: "gamma",
          driver: "scripted",
          options: { gateDir, capabilities: { turns: { interrupt: true, terminalStatusQuality: "strong" } } },
        },
      ],
    });
  }

  async call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    const answer = new Promise<{ ok: boolean; value?: unknown; error?: string }>((resolve) =>
      this.pending.set(id, resolve),
    );
    this.child.stdin!.write(`${JSON.stringify({ id, op, args })}\n`);
    const result = await answer;
    if (!result.ok) throw new Error(`${op} failed in the child: ${result.error}`);
    return result.value as T;
  }

  /** SIGKILL: no shutdown code runs. */
  async kill9(): Promise<void> {
    this.child.kill("SIGKILL");
    await this.exited;
  }

  async stop(): Promise<void> {
    this.child.stdin!.end();
    this.child.kill("SIGTERM");
    await this.exited;
  }
}
