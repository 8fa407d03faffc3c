// Tail latency of the MCP endpoint under 200 concurrent MCP clients. Each client is a real MCP
// SDK client over Streamable HTTP that initializes once and then calls a cheap tool back to back.
// The same load runs against Switchyard (a real server with a scripted provider instance, a
// client token, t3_thread_list: SQLite reads, no provider probe) and against the strongest
// honest floor: a stateful MCP SDK echo server that keeps one server and transport per session
// and reuses it for every call (bench/support/stateful-echo-server.js). The clients run in a
// child process (this file with --load-clients), so the server's event loop carries only server
// work; the server process samples its own event-loop delay while the load runs. The two
// targets take turns (Switchyard, echo, Switchyard, echo, ...: MCP_LOAD_ROUNDS each, default 2),
// so load from elsewhere on a shared machine falls on both alike.
//
// Goal (the reliability suite checks it): 0 errors and p99 <= 10 x p50 at 200 clients.
// MCP_LOAD_CLIENTS and MCP_LOAD_CALLS change the load (defaults 200 and 20).
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const CLIENTS = Number(process.env.MCP_LOAD_CLIENTS ?? 200);
const CALLS_PER_CLIENT = Number(process.env.MCP_LOAD_CALLS ?? 20);
const ROUNDS = Number(process.env.MCP_LOAD_ROUNDS ?? 2);
/** The client-side timeout of one call (what a harness would give up after). */
const CALL_TIMEOUT_MS = 30_000;
const TAIL_GOAL = 10;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// ---- load generator (the child process) -----------------------------------------------------

async function runClients({ url, token, tool, args, clients, calls }) {
  const latencies = [];
  const connectTimes = [];
  const errors = new Map();
  const noteError = (error) => {
    const cause = error?.cause ? ` (${error.cause.code ?? error.cause.message})` : "";
    const key = `${String(error?.message ?? error).slice(0, 120)}${cause}`;
    errors.set(key, (errors.get(key) ?? 0) + 1);
  };
  const one = async () => {
    const client = new Client({ name: "load", version: "1.0.0" });
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const started = performance.now();
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }), {
        timeout: CALL_TIMEOUT_MS,
      });
    } catch (error) {
      noteError(error);
      return;
    }
    connectTimes.push(performance.now() - started);
    for (let i = 0; i < calls; i += 1) {
      const start = performance.now();
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
        if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content).slice(0, 100)}`);
        latencies.push(performance.now() - start);
      } catch (error) {
        noteError(error);
      }
    }
    await client.close().catch(() => undefined);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, one));
  const elapsedMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  connectTimes.sort((a, b) => a - b);
  return { latencies, connectTimes, errors: Object.fromEntries(errors), elapsedMs };
}

/** Runs the clients in a child process against `target`, sampling this process's event loop meanwhile. */
async function loadFrom(target) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const cpuBefore = process.cpuUsage();
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--load-clients"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  child.stdin.end(JSON.stringify({ ...target, clients: CLIENTS, calls: CALLS_PER_CLIENT }));
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  const code = await new Promise((resolve) => child.on("close", resolve));
  delay.disable();
  const cpu = process.cpuUsage(cpuBefore);
  if (code !== 0) throw new Error(`load generator exited ${code}: ${out.slice(0, 500)}`);
  const result = JSON.parse(out);
  const errorCount = Object.values(result.errors).reduce((sum, n) => sum + n, 0);
  const answered = result.latencies.length + result.connectTimes.length;
  return {
    ...result,
    errorCount,
    loopDelayMaxMs: delay.max / 1e6,
    cpuPerCallMs: (cpu.user + cpu.system) / 1000 / Math.max(1, answered),
  };
}

/** One target's rounds as one result: every latency, errors summed, the worst loop delay. */
function merged(results) {
  const errors = {};
  for (const result of results)
    for (const [key, count] of Object.entries(result.errors)) errors[key] = (errors[key] ?? 0) + count;
  const answered = results.reduce((sum, r) => sum + r.latencies.length + r.connectTimes.length, 0);
  return {
    latencies: results.flatMap((r) => r.latencies).sort((a, b) => a - b),
    connectTimes: results.flatMap((r) => r.connectTimes).sort((a, b) => a - b),
    errors,
    errorCount: results.reduce((sum, r) => sum + r.errorCount, 0),
    elapsedMs: results.reduce((sum, r) => sum + r.elapsedMs, 0),
    loopDelayMaxMs: Math.max(...results.map((r) => r.loopDelayMaxMs)),
    cpuPerCallMs:
      results.reduce((sum, r) => sum + r.cpuPerCallMs * (r.latencies.length + r.connectTimes.length), 0) /
      Math.max(1, answered),
  };
}

// ---- the bench ------------------------------------------------------------------------------

export default async function run() {
  const { createLogger, McpSessionRegistry, startServer, SwitchyardHost } = await import("../core/dist/index.js");
  const { SCRIPTED_PROVIDER_PLUGIN_DIR } = await import("../testkit/dist/scripted-provider/index.js");
  const { startStatefulEchoServer } = await import("./support/stateful-echo-server.js");
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-load-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  // The production logger at its default level, writing to a file: logging cost included.
  const logFile = createWriteStream(join(home, "server.log"));
  const host = await SwitchyardHost.create({
    home,
    builtinPluginsDir: null,
    logger: createLogger({ level: "info", destination: logFile }),
    config: { plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR], providers: [{ id: "scripted", driver: "scripted" }] },
  });
  const server = await startServer(host, { port: 0 });
  // Where startServer does not start the host itself (it does once it wires grants first).
  if (!host.isStarted) await host.start();
  let echo = null;
  try {
    const project = await host.projects.add(workspace);
    for (let i = 0; i < 5; i += 1)
      await host.threads.createThread({
        projectId: project.id,
        providerInstanceId: "scripted",
        title: `thread ${i}`,
        createdBy: "user",
        creationSource: "cli",
      });
    const token = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"], label: "load bench" }).token;
    // The echo replays Switchyard's answer to the same call, and its clients send the same
    // Authorization header (the echo checks none): the clients' work is the same on both sides.
    const probe = new Client({ name: "probe", version: "1.0.0" });
    await probe.connect(
      new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const answer = await probe.callTool({ name: "t3_thread_list", arguments: { projectId: project.id, limit: 5 } });
    await probe.close();
    echo = await startStatefulEchoServer({ answer });
    const oursRounds = [];
    const floorRounds = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      oursRounds.push(
        await loadFrom({
          url: server.mcpUrl,
          token,
          tool: "t3_thread_list",
          args: { projectId: project.id, limit: 5 },
        }),
      );
      floorRounds.push(await loadFrom({ url: echo.url, token, tool: "echo", args: { text: "hi" } }));
    }
    const ours = merged(oursRounds);
    const floor = merged(floorRounds);
    const row = (metric, pick, unit = "ms") => ({
      metric,
      value: pick(ours),
      unit,
      baseline: pick(floor),
      ratio: pick(ours) / pick(floor),
    });
    const tail = (r) => percentile(r.latencies, 99) / percentile(r.latencies, 50);
    const met = ours.errorCount === 0 && tail(ours) <= TAIL_GOAL;
    const calls = CLIENTS * CALLS_PER_CLIENT * ROUNDS;
    return {
      name: `MCP endpoint under ${CLIENTS} concurrent clients`,
      rows: [
        {
          ...row(`tool call p50, ${CLIENTS} clients (t3_thread_list vs stateful SDK echo)`, (r) =>
            percentile(r.latencies, 50),
          ),
          note: `${CLIENTS} MCP SDK clients x ${CALLS_PER_CLIENT} calls, ${ROUNDS} alternating rounds per target; the echo replays Switchyard's answer; goal <= 1.2x`,
        },
        row(`tool call p99, ${CLIENTS} clients`, (r) => percentile(r.latencies, 99)),
        row("tool call max", (r) => r.latencies.at(-1)),
        {
          metric: `p99 / own p50, ${CLIENTS} clients`,
          value: tail(ours),
          baseline: tail(floor),
          ratio: tail(ours) / tail(floor),
          note: `goal: Switchyard's own ratio <= ${TAIL_GOAL}`,
        },
        {
          metric: "errors (30 s client timeouts included)",
          value: ours.errorCount,
          baseline: floor.errorCount,
          note: `of ${calls} calls and ${CLIENTS * ROUNDS} connects; goal 0${ours.errorCount ? `; ${JSON.stringify(ours.errors)}` : ""}${floor.errorCount ? `; baseline ${JSON.stringify(floor.errors)}` : ""}`,
        },
        { metric: `goal (0 errors, p99 <= ${TAIL_GOAL} x p50)`, value: met ? "met" : "NOT MET" },
        row("connect (initialize) p99", (r) => percentile(r.connectTimes, 99)),
        row("calls per second", (r) => r.latencies.length / (r.elapsedMs / 1000), "/s"),
        {
          ...row("server event-loop delay max", (r) => r.loopDelayMaxMs),
          note: "the longest the server's event loop was held",
        },
        {
          ...row("server CPU per call", (r) => r.cpuPerCallMs),
          note: "the server process's CPU time over calls and connects answered",
        },
      ],
    };
  } finally {
    await echo?.close();
    await server.close();
    await host.stop();
    logFile.end();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(process.argv[1]).href &&
  process.argv[2] === "--load-clients"
) {
  let input = "";
  for await (const chunk of process.stdin) input += chunk;
  process.stdout.write(JSON.stringify(await runClients(JSON.parse(input))));
}
