/**
 * The harness kit's LocalServerProcess against real child processes: an HTTP harness on a
 * free loopback port, ready at its listening line, stopped with SIGTERM then SIGKILL.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSilentLogger } from "../../core/src/logging/logger.js";
import { ProcessRunner } from "../../core/src/plugin-host/process-runner.js";
import { LocalServerProcess } from "../src/index.js";

const logger = createSilentLogger();
const runner = new ProcessRunner(logger, null);
describe("LocalServerProcess: a harness that serves HTTP on a loopback port", () => {
  const scratch = mkdtempSync(join(tmpdir(), "kit-server-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  // A real HTTP server in a child process: it listens on the port in argv and says so, like
  // `opencode serve`. KIT_MODE makes it misbehave in the ways real servers do.
  const script = `
    const http = require("node:http"), fs = require("node:fs");
    const port = Number(process.argv[1]), mode = process.env.KIT_MODE;
    if (mode === "crash") { process.stderr.write("config is broken: no providers (token " + process.env.KIT_API_TOKEN + ")\\n"); process.exit(4); }
    if (mode === "taken-once" && !fs.existsSync(process.env.KIT_MARK)) {
      fs.writeFileSync(process.env.KIT_MARK, "x");
      process.stderr.write("Error: listen EADDRINUSE: address already in use 127.0.0.1:" + port + "\\n");
      process.exit(1);
    }
    if (mode === "silent") setInterval(() => {}, 1000);
    if (mode === "stubborn") process.on("SIGTERM", () => process.stderr.write("ignoring SIGTERM\\n"));
    if (mode !== "silent") http.createServer((req, res) => res.end("pong " + port)).listen(port, "127.0.0.1", () => console.log("kit server listening on http://127.0.0.1:" + port));`;
  const spawned: number[] = [];
  const processes = {
    spawn: (command: string, args: readonly string[], options: Parameters<typeof runner.spawn>[2]) => {
      const child = runner.spawn(command, args, options);
      spawned.push(child.pid);
      return child;
    },
    run: runner.run.bind(runner),
    which: runner.which.bind(runner),
  };
  const start = (mode: string, extra: { startupTimeoutMs?: number; killGraceMs?: number } = {}) =>
    LocalServerProcess.start({
      label: "kit server",
      logger,
      processes,
      command: process.execPath,
      args: (port) => ["-e", script, String(port)],
      spawn: {
        cwd: scratch,
        env: { KIT_MODE: mode, KIT_MARK: join(scratch, "mark"), KIT_API_TOKEN: "sy_kit-secret-value" },
      },
      listening: /listening on (http:\/\/\S+)/,
      startupTimeoutMs: extra.startupTimeoutMs ?? 20_000,
      ...(extra.killGraceMs !== undefined ? { killGraceMs: extra.killGraceMs } : {}),
    });
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it("starts on a free port, answers there, and stops on SIGTERM", async () => {
    const server = await start("ok");
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(await (await fetch(server.url)).text()).toBe(`pong ${server.port}`);
    const exits: unknown[] = [];
    server.onExit((exit) => exits.push(exit));
    const exit = await server.stop();
    expect(exit.signal).toBe("SIGTERM");
    expect(server.running).toBe(false);
    expect(exits).toEqual([exit]);
  });

  it("kills a server that survives SIGTERM with SIGKILL after the grace period", async () => {
    const server = await start("stubborn", { killGraceMs: 300 });
    const exit = await server.stop();
    expect(exit.signal).toBe("SIGKILL");
    expect(alive(server.pid)).toBe(false);
    expect(server.output.text).toContain("ignoring SIGTERM");
  });

  it("reports a server that exits before listening with its output (secrets scrubbed), and one that stays silent, and leaves neither running", async () => {
    const crashed = await start("crash").catch((error: unknown) => error);
    expect(crashed).toMatchObject({ code: "provider_unavailable" });
    expect(alive(spawned.at(-1)!)).toBe(false);
    expect((crashed as Error).message).toContain("kit server exited before it listened (code 4");
    expect((crashed as Error).message).toContain("config is broken: no providers (token [redacted])");
    expect((crashed as Error).message).not.toContain("sy_kit-secret-value");
    const before = spawned.length;
    const silent = await start("silent", { startupTimeoutMs: 500, killGraceMs: 300 }).catch((error: unknown) => error);
    expect(silent).toMatchObject({
      code: "provider_unavailable",
      message: expect.stringContaining("did not start listening within 500 ms"),
    });
    expect(spawned.length).toBe(before + 1);
    expect(alive(spawned.at(-1)!)).toBe(false);
  });

  it("tries another port when the one it picked was taken meanwhile", async () => {
    const before = spawned.length;
    const server = await start("taken-once");
    expect(existsSync(join(scratch, "mark"))).toBe(true);
    expect(spawned.length).toBe(before + 2);
    expect(await (await fetch(server.url)).text()).toBe(`pong ${server.port}`);
    await server.stop();
  });
});
