import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { CLI, underUmask } from "./cli.js";

/** What `serve --json` prints once it listens. */
export interface ServeEndpoint {
  readonly mcpUrl: string;
  readonly url: string;
  readonly port: number;
  readonly home: string;
}

/** A real `switchyard serve` process (the built CLI) on a home. */
export class ServeProcess {
  readonly ready: Promise<ServeEndpoint>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderrText = "";

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (this.stderrText.length < 200_000) this.stderrText += chunk;
    });
    this.ready = new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line.startsWith("{")) resolve(JSON.parse(line) as ServeEndpoint);
      });
      void this.exited.then(({ code, signal }) =>
        reject(
          new Error(`serve exited (code ${code}, signal ${signal}) before listening: ${this.stderrText.slice(-2_000)}`),
        ),
      );
    });
    // A failed start is read through `exited`; keep the rejection from going unhandled.
    this.ready.catch(() => undefined);
  }

  /** Starts `serve --json --home <home>` plus `args` (default `--port 0`), with extra `env`, under `umask` when given. */
  static start(
    home: string,
    args: readonly string[] = ["--port", "0"],
    env: Record<string, string> = {},
    options: { umask?: string } = {},
  ): ServeProcess {
    const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...inherited } = process.env;
    const [file, argv] = underUmask([process.execPath, CLI, "serve", "--json", "--home", home, ...args], options.umask);
    const child = spawn(file, argv, { stdio: ["ignore", "pipe", "pipe"], env: { ...inherited, ...env } });
    return new ServeProcess(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** What the process wrote to stderr so far. */
  get stderr(): string {
    return this.stderrText;
  }

  /** SIGKILL: no shutdown code runs. */
  async kill9(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGTERM: the server shuts down in order; resolves with its exit code. */
  async terminate(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    return (await this.exited).code;
  }
}

/** Writes `config.json` into a (new) home, private as Switchyard keeps it. */
export function writeHomeConfig(home: string, config: unknown): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify(config, null, 2), { mode: 0o600 });
}

/** Polls the home's database (read-only, beside the server) until `sql` returns a row. */
export async function waitForRow<T = Record<string, unknown>>(
  home: string,
  sql: string,
  params: readonly unknown[] = [],
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const row = readRow<T>(home, sql, params);
    if (row !== undefined) return row;
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no row for ${sql} within ${timeoutMs} ms`);
}

/** One row of a read-only query on the home's database, or undefined. */
export function readRow<T = Record<string, unknown>>(
  home: string,
  sql: string,
  params: readonly unknown[] = [],
): T | undefined {
  const db = new Database(join(home, "switchyard.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).get(...params) as T | undefined;
  } finally {
    db.close();
  }
}

/** Every row of a read-only query on the home's database. */
export function readRows<T = Record<string, unknown>>(home: string, sql: string, params: readonly unknown[] = []): T[] {
  const db = new Database(join(home, "switchyard.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}
