import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { CLI, runCli } from "../support/cli.js";

/** A terminal-like or pipe-like destination that keeps what was written. */
function sink(isTTY: boolean) {
  const lines: string[] = [];
  return { isTTY, lines, write: (line: string) => lines.push(line) };
}

const SECRET_TOKEN = "sy_abcdefghijklmnopqrstuvwxyz012345";
const SECRET_BEARER = "Bearer abcdefghijklmnop.qrstuv";

describe("the host logger", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-logger-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes one pretty line per event on a terminal and JSON lines elsewhere", () => {
    const tty = sink(true);
    createLogger({ destination: tty, level: "info" })
      .child({ component: "mcp" })
      .info("server listening", { url: "http://127.0.0.1:7410", count: 2 });
    expect(tty.lines).toHaveLength(1);
    expect(tty.lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO  \[mcp\] server listening url=http:\/\/127\.0\.0\.1:7410 count=2\n$/,
    );

    const pipe = sink(false);
    createLogger({ destination: pipe, level: "info" }).info("server listening", { url: "http://127.0.0.1:7410" });
    expect(JSON.parse(pipe.lines[0]!)).toMatchObject({
      level: 30,
      msg: "server listening",
      url: "http://127.0.0.1:7410",
      service: "switchyard",
    });

    const forced = sink(true);
    createLogger({ destination: forced, level: "info", format: "json" }).warn("careful");
    expect(JSON.parse(forced.lines[0]!)).toMatchObject({ level: 40, msg: "careful" });
  });

  it("keeps events below the level out, and refuses a level it does not know", () => {
    const out = sink(false);
    const logger = createLogger({ destination: out, level: "warn" });
    logger.info("not shown");
    logger.error("shown");
    expect(out.lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(["shown"]);
    expect(() => createLogger({ destination: out, level: "loud" })).toThrow(/"loud" is not a log level/);
  });

  it("appends JSON lines to the log file, with secrets scrubbed there and on the terminal", () => {
    const file = join(dir, "logs", "switchyard.log");
    const tty = sink(true);
    const logger = createLogger({ destination: tty, level: "info", file });
    logger.info("issued", { token: SECRET_TOKEN, header: SECRET_BEARER, note: `free text with ${SECRET_TOKEN}` });
    logger.info("second");
    const written = readFileSync(file, "utf8").trim().split("\n");
    expect(written).toHaveLength(2);
    expect(JSON.parse(written[0]!)).toMatchObject({
      msg: "issued",
      token: "[redacted]",
      header: "Bearer [redacted]",
      note: "free text with sy_[redacted]",
    });
    for (const text of [...written, ...tty.lines]) {
      expect(text).not.toContain(SECRET_TOKEN);
      expect(text).not.toContain("abcdefghijklmnop.qrstuv");
    }
    // A second logger (the next `serve`) appends.
    createLogger({ destination: sink(false), level: "info", file }).info("third");
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(3);
  });
});

/** Starts `serve`, waits for its banner, stops it with SIGTERM; returns what it wrote. */
async function serveOnce(args: string[]): Promise<{ stdout: string[]; stderr: string[]; code: number | null }> {
  const server = spawn(process.execPath, [CLI, "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: server.stderr! }).on("line", (line) => stderr.push(line));
  const exited = new Promise<number | null>((resolve) => server.on("exit", resolve));
  const mcpUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout! }).on("line", (line) => {
      stdout.push(line);
      const match = /^MCP endpoint: (\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr.join("\n")}`)));
  });
  // serve installs its signal handlers in the same synchronous step that prints the banner; an
  // answered request proves that step is over, so SIGTERM meets the handler.
  expect((await fetch(new URL("/health", mcpUrl))).ok).toBe(true);
  server.kill("SIGTERM");
  return { stdout, stderr, code: await exited };
}

describe("switchyard serve logging", () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "switchyard-serve-logs-"));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("prints the banner on stdout, JSON log lines on a non-terminal stderr, and the same events in the home's log file", async () => {
    const run = await serveOnce(["--home", home]);
    expect(run.code, run.stderr.join("\n")).toBe(0);
    expect(run.stdout[0]).toMatch(/^Switchyard \d+\.\d+\.\d+/);
    expect(run.stdout.some((line) => line.startsWith("{"))).toBe(false);
    const events = run.stderr.map((line) => JSON.parse(line) as { msg: string });
    expect(events.map((event) => event.msg)).toEqual(expect.arrayContaining(["server listening", "shutting down"]));
    const file = join(home, "logs", "switchyard.log");
    const logged = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(logged).toEqual(expect.arrayContaining(["server listening", "shutting down"]));
  });

  it("takes --log-format pretty and --log-level", async () => {
    const pretty = await serveOnce(["--home", home, "--log-format", "pretty"]);
    expect(pretty.code).toBe(0);
    expect(pretty.stderr.find((line) => line.includes("server listening"))).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO  server listening url=http:\/\/127\.0\.0\.1:\d+ /,
    );
    const quiet = await serveOnce(["--home", home, "--log-level", "warn"]);
    expect(quiet.stderr.filter((line) => line.includes("server listening"))).toEqual([]);
    const bad = await runCli(["serve", "--home", home, "--log-level", "loud"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are trace, debug, info, warn, error, fatal, silent");
  });

  it("writes no log file for one-shot commands", async () => {
    const other = mkdtempSync(join(tmpdir(), "switchyard-oneshot-"));
    try {
      expect((await runCli(["project", "list", "--home", other])).code).toBe(0);
      expect(existsSync(join(other, "logs"))).toBe(false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
