import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/**
 * A throw-away PostgreSQL server for a test run: a fresh data folder, 127.0.0.1 on a free port,
 * its Unix socket inside that folder, a generated password, fsync on. `stop` ends it and removes
 * the folder; so does a watchdog if the process that started it dies first.
 * @public
 */
export interface PostgresServer {
  /** The superuser's connection string for `database` (default: `postgres`). */
  url(database?: string): string;
  readonly host: "127.0.0.1";
  readonly port: number;
  /** The server's version line (`SHOW server_version`'s source: `postgres --version`). */
  readonly version: string;
  /** The data folder's parent (socket, password file, log); removed by `stop`. */
  readonly folder: string;
  /** Creates an empty database (a fresh name unless given) and answers its connection string. */
  createDatabase(name?: string): Promise<string>;
  /** Fast shutdown (bounded), then the folder goes. Safe to call twice. */
  stop(): Promise<void>;
}

/** @public */
export interface StartPostgresServerOptions {
  /** The folder with `initdb`, `postgres` and `psql`; found on its own when left out. */
  readonly binDir?: string;
  /** How long the server may take to accept connections (default 60 s). */
  readonly startTimeoutMs?: number;
}

/**
 * No PostgreSQL server binaries were found. The message says how to install them, or how to
 * skip the tests that need them on purpose.
 * @public
 */
export class PostgresNotInstalledError extends Error {
  readonly code = "postgres_not_installed";
  constructor(readonly looked: readonly string[]) {
    super(
      `PostgreSQL's server binaries (initdb, postgres) were not found (looked in ${looked.join(", ")}). ` +
        "Install them (Debian: apt-get install -y postgresql), point SWITCHYARD_POSTGRES_BIN at their folder, " +
        "or set SWITCHYARD_SKIP_POSTGRES_TESTS=1 to skip the tests that need a server.",
    );
    this.name = "PostgresNotInstalledError";
  }
}

/** The user name the servers' superuser gets (a role inside the throw-away cluster only). */
const SUPERUSER = "switchyard";
const READY = "database system is ready to accept connections";

/** `SWITCHYARD_POSTGRES_BIN`, else Debian's newest `/usr/lib/postgresql/<v>/bin`, else `initdb` on PATH. */
export function findPostgresBinDir(): string {
  const looked: string[] = [];
  const candidates: string[] = [];
  const configured = process.env.SWITCHYARD_POSTGRES_BIN;
  if (configured) candidates.push(configured);
  else {
    const debian = "/usr/lib/postgresql";
    if (existsSync(debian))
      candidates.push(
        ...readdirSync(debian)
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => join(debian, v, "bin")),
      );
    else looked.push(debian);
    candidates.push(...(process.env.PATH ?? "").split(delimiter).filter(Boolean));
  }
  for (const dir of candidates) {
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"))) return dir;
    looked.push(dir);
  }
  throw new PostgresNotInstalledError(looked);
}

/** Whether the tests that need a server were told to skip (`SWITCHYARD_SKIP_POSTGRES_TESTS=1`). */
export function postgresTestsSkipped(): boolean {
  return process.env.SWITCHYARD_SKIP_POSTGRES_TESTS === "1";
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
  readonly name: string;
}

/**
 * PostgreSQL refuses to run as root. As root, the server runs as Debian's `postgres` user (the
 * package creates it), else as `nobody`; as anyone else, as that user, with no switch.
 */
function serverUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of ["postgres", "nobody"]) {
    try {
      const [, , uid, gid] = execFileSync("getent", ["passwd", name], { encoding: "utf8", timeout: 10_000 })
        .trim()
        .split(":");
      if (uid !== undefined && gid !== undefined) return { name, uid: Number(uid), gid: Number(gid) };
    } catch {
      // Not on this machine: try the next.
    }
  }
  throw new Error("running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as");
}

/** A port free on 127.0.0.1 a moment ago; the server's start is retried if another takes it. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no TCP port from the loopback listener");
  return address.port;
}

function run(
  binary: string,
  args: readonly string[],
  options: { user: RunAs | null; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LC_ALL: "C", ...options.env },
      ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
    });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${binary} ${args.join(" ")} failed (${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}

/** Waits (bounded) for the server's "ready" line; rejects with its output if it exits or hangs. */
function waitUntilReady(server: ChildProcess, timeoutMs: number, log: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`PostgreSQL did not accept connections within ${timeoutMs} ms:\n${log()}`));
    }, timeoutMs);
    const onData = () => {
      if (log().includes(READY)) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      reject(new Error(`PostgreSQL exited while starting (${signal ?? `exit ${code}`}):\n${log()}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      server.stderr!.off("data", onData);
      server.off("exit", onExit);
    };
    server.stderr!.on("data", onData);
    server.once("exit", onExit);
  });
}

/** Waits (bounded) for a child to exit; true if it did. */
async function exited(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * A watchdog in its own process: once the process that started the server is gone (a killed
 * test worker never runs its `afterAll`), it stops the server and removes its folder.
 */
function startWatchdog(serverPid: number, folder: string): ChildProcess {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -QUIT ${serverPid} 2>/dev/null; sleep 3; kill -KILL ${serverPid} 2>/dev/null; rm -rf '${folder}'`;
  const watchdog = spawn("sh", ["-c", script], { stdio: "ignore", detached: true });
  watchdog.unref();
  return watchdog;
}

/**
 * Starts a throw-away PostgreSQL server (see {@link PostgresServer}). Throws
 * {@link PostgresNotInstalledError} when the binaries are missing.
 * @public
 */
export async function startPostgresServer(options: StartPostgresServerOptions = {}): Promise<PostgresServer> {
  const binDir = options.binDir ?? findPostgresBinDir();
  const user = serverUser();
  const folder = mkdtempSync(join(tmpdir(), "switchyard-postgres-"));
  try {
    if (user) chownSync(folder, user.uid, user.gid);
    chmodSync(folder, 0o700);
    const password = randomBytes(18).toString("hex");
    const passwordFile = join(folder, "password");
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    if (user) chownSync(passwordFile, user.uid, user.gid);
    const data = join(folder, "data");
    // --no-sync skips initdb's final flush of the fresh cluster's files only: a machine crash
    // takes a throw-away folder with it anyway. The server itself keeps fsync on.
    await run(
      join(binDir, "initdb"),
      [
        "-D",
        data,
        "-U",
        SUPERUSER,
        "--pwfile",
        passwordFile,
        "--auth=scram-sha-256",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
      ],
      { user, timeoutMs: 120_000 },
    );
    rmSync(passwordFile);
    const version = (await run(join(binDir, "postgres"), ["--version"], { user, timeoutMs: 10_000 })).trim();

    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const server = spawn(
        join(binDir, "postgres"),
        [
          "-D",
          data,
          "-p",
          String(port),
          "-c",
          "listen_addresses=127.0.0.1",
          "-c",
          `unix_socket_directories=${folder}`,
          "-c",
          "fsync=on",
          "-c",
          "synchronous_commit=on",
          "-c",
          "max_connections=200",
        ],
        {
          stdio: ["ignore", "ignore", "pipe"],
          env: { ...process.env, LC_ALL: "C" },
          ...(user ? { uid: user.uid, gid: user.gid } : {}),
        },
      );
      let log = "";
      server.stderr!.on("data", (chunk: Buffer) => {
        // Kept short: only what explains a failed start is ever shown.
        log = (log + chunk.toString()).slice(-20_000);
      });
      try {
        await waitUntilReady(server, options.startTimeoutMs ?? 60_000, () => log);
      } catch (error) {
        server.kill("SIGKILL");
        await exited(server, 10_000);
        // Another process took the port between the probe and the bind: try another.
        if (attempt < 3 && /could not (bind|create listen socket)/i.test(log)) continue;
        throw error;
      }
      const watchdog = startWatchdog(server.pid!, folder);
      const url = (database = "postgres") =>
        `postgresql://${SUPERUSER}:${password}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
      let stopping: Promise<void> | null = null;
      let databases = 0;
      return {
        url,
        host: "127.0.0.1",
        port,
        version,
        folder,
        createDatabase: async (name) => {
          const database = name ?? `test_${process.pid}_${++databases}_${randomBytes(3).toString("hex")}`;
          if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database))
            throw new Error(`not a database name the fixture makes: ${JSON.stringify(database)}`);
          await run(
            join(binDir, "psql"),
            ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url(), "-c", `CREATE DATABASE ${database}`],
            { user: null, timeoutMs: 30_000 },
          );
          return url(database);
        },
        stop: () =>
          (stopping ??= (async () => {
            // SIGINT: fast shutdown (open transactions roll back, a checkpoint is written).
            server.kill("SIGINT");
            if (!(await exited(server, 15_000))) {
              server.kill("SIGKILL");
              await exited(server, 5_000);
            }
            watchdog.kill("SIGKILL");
            rmSync(folder, { recursive: true, force: true });
          })()),
      };
    }
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}
