import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { releaseGate, SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { processStartTime } from "../src/util/process-start-time.js";
import { runCli } from "./support/cli.js";
import { callTool, connectMcp, mustCall } from "./support/mcp-client.js";
import { readRows, ServeProcess, waitForRow, writeHomeConfig } from "./support/serve-process.js";

const IMPORT_MARKER_PLUGIN = fileURLToPath(new URL("./fixtures/plugins/import-marker", import.meta.url));

describe("one Switchyard server per home", () => {
  const dirs: string[] = [];
  const servers: ServeProcess[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.kill9();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function scratch(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  }
  function serve(home: string, args?: readonly string[], env?: Record<string, string>): ServeProcess {
    const server = ServeProcess.start(home, args, env);
    servers.push(server);
    return server;
  }

  it("refuses a second server on the same home with exit 2, leaves the first one's live run alone, and lets read-only commands run beside it", async () => {
    const root = scratch("switchyard-lock-");
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: { gateDir, stateDir: join(root, "state") } }],
    });
    const project = JSON.parse(
      (await runCli(["project", "add", scratch("switchyard-lock-ws-"), "--json", "--home", home])).stdout,
    ) as { id: string };
    const { token } = JSON.parse((await runCli(["token", "issue", "--json", "--home", home])).stdout) as {
      token: string;
    };

    const first = serve(home);
    const { mcpUrl } = await first.ready;
    const client = await connectMcp(mcpUrl, token);
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      projectId: project.id,
      threads: [{ prompt: "@@gate first-server @@reply first-done", target: { providerInstanceId: "alpha" } }],
    });
    const threadId = created.threads[0]!.thread.threadId;
    await waitForRow(home, "SELECT 1 FROM attempts WHERE thread_id = ? AND status = 'running'", [threadId]);

    const second = serve(home);
    const refused = await second.exited;
    expect(refused.code, second.stderr).toBe(2);
    const lock = JSON.parse(readFileSync(join(home, "server.lock"), "utf8")) as { pid: number; since: string };
    expect(lock.pid).toBe(first.pid);
    expect(second.stderr).toContain(`another Switchyard server (pid ${first.pid}, since ${lock.since}) uses this home`);
    // The second server reconciled nothing: the first server's run has one attempt on one open session.
    expect(readRows(home, "SELECT id FROM attempts WHERE thread_id = ?", [threadId])).toHaveLength(1);
    expect(readRows<{ status: string }>(home, "SELECT status FROM provider_sessions")).toEqual([{ status: "open" }]);

    for (const command of [["providers"], ["plugins", "list"], ["project", "list"], ["token", "list"]]) {
      const result = await runCli([...command, "--home", home]);
      expect(result.code, `${command.join(" ")}: ${result.stderr}`).toBe(0);
    }
    expect((await callTool(client, "orchestrator_capabilities", {})).ok).toBe(true);
    releaseGate(gateDir, "first-server");
    await waitForRow(home, "SELECT 1 FROM runs WHERE thread_id = ? AND status = 'completed'", [threadId]);
    await client.close();
    expect(await first.terminate()).toBe(0);
    expect(existsSync(join(home, "server.lock"))).toBe(false);
  }, 90_000);

  it("takes over a stale lock (a killed server's, or one whose pid now names another process) and refuses a live one", async () => {
    const home = join(scratch("switchyard-stale-"), "home");
    writeHomeConfig(home, {});
    const killed = serve(home);
    await killed.ready;
    await killed.kill9();
    expect(JSON.parse(readFileSync(join(home, "server.lock"), "utf8"))).toMatchObject({ pid: killed.pid });

    const next = serve(home);
    await next.ready;
    expect(JSON.parse(readFileSync(join(home, "server.lock"), "utf8"))).toMatchObject({ pid: next.pid });
    expect(await next.terminate()).toBe(0);

    // This test's own (live) pid with another start time: the pid was reused, the holder is gone.
    writeFileSync(
      join(home, "server.lock"),
      JSON.stringify({ pid: process.pid, processStart: "1", since: "2020-01-01T00:00:00.000Z" }),
    );
    const reused = serve(home);
    await reused.ready;
    expect(await reused.terminate()).toBe(0);

    // The same pid with its real start time is a live holder.
    writeFileSync(
      join(home, "server.lock"),
      JSON.stringify({
        pid: process.pid,
        processStart: processStartTime(process.pid),
        since: "2020-01-01T00:00:00.000Z",
      }),
    );
    const blocked = serve(home);
    expect((await blocked.exited).code, blocked.stderr).toBe(2);
    expect(blocked.stderr).toContain(
      `another Switchyard server (pid ${process.pid}, since 2020-01-01T00:00:00.000Z) uses this home`,
    );
  }, 90_000);

  it("fails at once on a taken port, before any plugin loads, and says what to do", async () => {
    const root = scratch("switchyard-port-");
    const home = join(root, "home");
    const marker = join(root, "imported");
    writeHomeConfig(home, { plugins: [IMPORT_MARKER_PLUGIN] });
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const result = await runCli(["serve", "--port", String(port), "--home", home], {
        env: { SWITCHYARD_TEST_IMPORT_MARKER: marker },
      });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(result.stderr).toContain("--port <port>");
      expect(existsSync(marker), "serve loaded plugins before binding the port").toBe(false);
      // The failed start gave the home back.
      expect(existsSync(join(home, "server.lock"))).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    // The marker works: a command that loads plugins leaves it.
    expect((await runCli(["providers", "--home", home], { env: { SWITCHYARD_TEST_IMPORT_MARKER: marker } })).code).toBe(
      0,
    );
    expect(existsSync(marker)).toBe(true);
  }, 60_000);

  it("refuses an empty or malformed --port", async () => {
    const home = join(scratch("switchyard-port-arg-"), "home");
    for (const value of ["", " ", "7e3", "-1", "65536"]) {
      const result = await runCli(["serve", "--port", value, "--home", home]);
      expect(result.code, JSON.stringify(value)).toBe(2);
      expect(result.stderr).toContain(`"${value}" is not a port`);
    }
  }, 60_000);
});
