import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { existsSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  findPostgresBinDir,
  postgresTestsSkipped,
  startPostgresServer,
  type PostgresServer,
} from "../src/postgres/index.js";

// The throw-away PostgreSQL server the store's tests run on: what it promises (loopback only,
// its socket in its own folder, a password, fsync on, one database per call) and that `stop`
// leaves nothing behind.

const run = promisify(execFile);

async function sql(url: string, query: string): Promise<string> {
  const { stdout } = await run(join(findPostgresBinDir(), "psql"), ["-X", "-At", "-d", url, "-c", query], {
    timeout: 30_000,
  });
  return stdout.trim();
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe.skipIf(postgresTestsSkipped())("startPostgresServer", () => {
  let server: PostgresServer | undefined;
  afterAll(() => server?.stop());

  it("serves on loopback only, with its socket in its own folder, a password and fsync on", async () => {
    server = await startPostgresServer();
    expect(server.version).toMatch(/^postgres \(PostgreSQL\) \d+/);
    expect(statSync(server.folder).mode & 0o777).toBe(0o700);
    expect(await sql(server.url(), "SHOW listen_addresses")).toBe("127.0.0.1");
    expect(await sql(server.url(), "SHOW unix_socket_directories")).toBe(server.folder);
    expect(await sql(server.url(), "SHOW fsync")).toBe("on");
    expect(await sql(server.url(), "SHOW synchronous_commit")).toBe("on");
    // A wrong password is refused: loopback is not trusted.
    await expect(sql(server.url().replace(/:[0-9a-f]+@/, ":wrong@"), "SELECT 1")).rejects.toThrow(
      /password authentication failed/,
    );
  });

  it("makes a fresh database per call", async () => {
    server ??= await startPostgresServer();
    const first = await server.createDatabase();
    const second = await server.createDatabase();
    expect(first).not.toBe(second);
    await sql(first, "CREATE TABLE only_here (id integer)");
    expect(await sql(second, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'")).toBe("0");
  });

  it("stops the server and removes its folder", async () => {
    server ??= await startPostgresServer();
    const { folder, port } = server;
    await server.stop();
    await server.stop(); // A second stop is harmless.
    expect(existsSync(folder)).toBe(false);
    expect(await accepts(port)).toBe(false);
  });

  it("is stopped and removed by its watchdog when the process that started it is killed", async () => {
    // The built fixture (npm run build), in a process of its own that a test kills with SIGKILL,
    // as a crashed test worker would be: its afterAll never runs.
    const built = fileURLToPath(new URL("../dist/postgres/index.js", import.meta.url));
    const owner = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { startPostgresServer } = await import(${JSON.stringify(built)});
         const server = await startPostgresServer();
         console.log(JSON.stringify({ folder: server.folder, port: server.port }));
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const [line] = (await once(createInterface({ input: owner.stdout! }), "line")) as [string];
    const { folder, port } = JSON.parse(line) as { folder: string; port: number };
    expect(await accepts(port)).toBe(true);
    owner.kill("SIGKILL");
    // Bounded: the watchdog checks once a second and gives the server 3 s to quit.
    for (let i = 0; i < 300 && (existsSync(folder) || (await accepts(port))); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(folder)).toBe(false);
    expect(await accepts(port)).toBe(false);
  });

  it("says how to install PostgreSQL, or skip on purpose, when its binaries are missing", () => {
    const saved = process.env.SWITCHYARD_POSTGRES_BIN;
    process.env.SWITCHYARD_POSTGRES_BIN = "/nonexistent/postgresql/bin";
    try {
      expect(() => findPostgresBinDir()).toThrow(
        expect.objectContaining({
          code: "postgres_not_installed",
          message: expect.stringMatching(/apt-get install -y postgresql.*SWITCHYARD_SKIP_POSTGRES_TESTS=1/),
        }),
      );
    } finally {
      if (saved === undefined) delete process.env.SWITCHYARD_POSTGRES_BIN;
      else process.env.SWITCHYARD_POSTGRES_BIN = saved;
    }
  });
});
