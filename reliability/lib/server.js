// A real `switchyard serve` process on a home of its own, with its stdout and stderr written to
// log files (which the secrets figure reads afterwards), killed with SIGKILL or stopped with
// SIGTERM, and started again on the same home.
import { spawn } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { CLI } from "./paths.js";

let serverCounter = 0;

/** Writes `config.json` into a home, readable only by the user (it may name secrets). */
export function writeConfig(home, config) {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify(config, null, 2), { mode: 0o600 });
  chmodSync(join(home, "config.json"), 0o600);
}

export class SwitchyardServer {
  /**
   * Starts `switchyard serve --home <home> --port 0 --json` and resolves once it printed its
   * endpoint. `run` is the suite's run context: it keeps the log files and the process list.
   */
  static async start(run, home, { logLevel = "debug", readyTimeoutMs = 60_000 } = {}) {
    const name = `serve-${++serverCounter}`;
    const stdoutFile = join(run.logDir, `${name}.stdout.log`);
    const stderrFile = join(run.logDir, `${name}.stderr.log`);
    run.logFiles.push(stdoutFile, stderrFile);
    const stderr = openSync(stderrFile, "a");
    const child = spawn(process.execPath, [CLI, "serve", "--home", home, "--port", "0", "--json"], {
      stdio: ["ignore", "pipe", stderr],
      env: { ...process.env, SWITCHYARD_LOG_LEVEL: logLevel, NO_COLOR: "1" },
    });
    closeSync(stderr);
    run.track(child.pid, `switchyard serve ${name}`);
    const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    const stdoutFd = openSync(stdoutFile, "a");
    const endpoint = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} printed no endpoint within ${readyTimeoutMs} ms (see ${stderrFile})`)),
        readyTimeoutMs,
      );
      const lines = createInterface({ input: child.stdout });
      lines.on("line", (line) => {
        writeFileSync(stdoutFd, `${line}\n`);
        try {
          const parsed = JSON.parse(line);
          if (typeof parsed.mcpUrl === "string") {
            clearTimeout(timer);
            resolve(parsed);
          }
        } catch {
          // not the endpoint line
        }
      });
      lines.on("close", () => closeSync(stdoutFd));
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code ?? signal}) before printing its endpoint (see ${stderrFile})`));
      });
    });
    return new SwitchyardServer(run, name, home, child, exited, endpoint, stderrFile);
  }

  constructor(run, name, home, child, exited, endpoint, stderrFile) {
    this.run = run;
    this.name = name;
    this.home = home;
    this.child = child;
    this.exited = exited;
    this.pid = child.pid;
    this.port = endpoint.port;
    this.mcpUrl = endpoint.mcpUrl;
    this.url = endpoint.url;
    this.stderrFile = stderrFile;
  }

  /** SIGKILL: no shutdown code runs, exactly like a crash or the OOM killer. */
  async kill9() {
    this.child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGTERM and wait (the server closes its sessions); SIGKILL after `graceMs`. Returns whether it stopped in time. */
  async stop(graceMs = 20_000) {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return true;
    this.child.kill("SIGTERM");
    const inTime = await Promise.race([
      this.exited.then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), graceMs)),
    ]);
    if (!inTime) {
      this.child.kill("SIGKILL");
      await this.exited;
    }
    return inTime;
  }

  /** Whether the process still runs. */
  get alive() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }
}
