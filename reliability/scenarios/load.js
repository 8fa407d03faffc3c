// 200 concurrent MCP clients for 30 s against a real server: every client its own Streamable
// HTTP connection (the MCP SDK client), calling read tools (t3_thread_list, t3_thread_read,
// orchestrator_capabilities) back to back over a project with finished threads. Two load
// processes of 100 clients each, started together. Figures: errors (a failed call, a typed
// failure, a client that could not connect), the tail (p99 no more than 10 times p50), and an
// absolute bound, p99 at most P99_BOUND_MS: a ratio alone passes a server that is uniformly slow.
//
// How the bound was chosen: the clients run a closed loop (each sends its next call when the
// last one answers), so a call's latency is about clients / throughput, and the machine's load
// moves it as much as the server's speed does. On the 2-core dev machine, shared with other
// builds, the server answered 410 to 650 calls/s with p99 1 to 1.6 s at load average 4 to 5,
// and 100 calls/s with p99 3.7 s at load average 18. 5 s passes that. A server 10x slower
// misses it by 2x: paused 95% of the time (SIGSTOP/SIGCONT, 34 calls/s) at load average 5 it
// had p50 6.3 s and p99 9.6 s, while its p99 / p50 (1.5) passed the ratio figure.

import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { addProject, issueToken } from "../lib/cli.js";
import { scalar } from "../lib/db.js";
import { connect, mustCall } from "../lib/mcp.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../lib/paths.js";
import { SwitchyardServer, writeConfig } from "../lib/server.js";
import { until } from "../lib/wait.js";

const WORKER = fileURLToPath(new URL("../lib/load-worker.js", import.meta.url));
const CLIENTS = 200;
const WORKERS = 2;
const DURATION_MS = 30_000;
const P99_BOUND_MS = 5_000;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Starts a worker process and resolves once its clients are connected. */
function startWorker(run, args) {
  const child = spawn(process.execPath, [WORKER, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  run.track(child.pid, "load worker");
  const lines = createInterface({ input: child.stdout });
  const ready = new Promise((resolve, reject) => {
    lines.once("line", (line) => (line === "ready" ? resolve() : reject(new Error(`load worker said ${line}`))));
    child.once("exit", (code) => reject(new Error(`load worker exited ${code} before it was ready`)));
  });
  const result = new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      if (!line.startsWith("{")) return;
      try {
        resolve(JSON.parse(line));
      } catch (error) {
        // A scenario failure, not a crash of the whole run.
        reject(new Error(`load worker's results are not JSON (${line.length} characters): ${error.message}`));
      }
    });
    child.once("exit", (code) => reject(new Error(`load worker exited ${code} without results`)));
  });
  return { ready, result, go: () => child.stdin.end("go\n") };
}

export default {
  name: "load",
  title: `${CLIENTS} concurrent clients for ${DURATION_MS / 1000} s`,
  timeoutMs: 150_000,
  async run(run, report) {
    const home = run.newHome("load");
    writeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: {} }],
    });
    const projectId = await addProject(home, run.dir("load-workspace"));
    const { token } = await issueToken(run, home);
    const server = await SwitchyardServer.start(run, home, { logLevel: "info" });
    // Something to read: 20 threads with a finished run each.
    const setup = await connect(server.mcpUrl, token);
    const created = await mustCall(setup, "create_threads", {
      projectId,
      threads: Array.from({ length: 20 }, (_, i) => ({
        prompt: `@@reply answer ${i} ${"lorem ipsum ".repeat(20)}`,
        target: { providerInstanceId: "alpha" },
      })),
    });
    await setup.close();
    const threadIds = created.threads.map((entry) => entry.thread.threadId);
    await until(() => scalar(home, "SELECT COUNT(*) FROM runs WHERE status = 'completed'") >= threadIds.length, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });

    const workers = Array.from({ length: WORKERS }, () =>
      startWorker(run, [
        server.mcpUrl,
        token,
        String(CLIENTS / WORKERS),
        String(DURATION_MS),
        projectId,
        JSON.stringify(threadIds),
      ]),
    );
    await Promise.all(workers.map((worker) => worker.ready));
    report.note(
      `machine load average before the window: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(" ")} (the box has 2 cores)`,
    );
    for (const worker of workers) worker.go();
    const results = await Promise.all(workers.map((worker) => worker.result));
    const alive = server.alive;
    await server.stop();

    const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const errors = results.reduce((sum, r) => sum + r.errorCount, 0);
    for (const sample of [...new Set(results.flatMap((r) => r.errorSamples))].slice(0, 5))
      report.note(`error: ${sample}`);
    const p50 = percentile(latencies, 50) ?? Number.NaN;
    const p99 = percentile(latencies, 99) ?? Number.NaN;
    report.note(
      `${latencies.length} calls in ${DURATION_MS / 1000} s (${Math.round(latencies.length / (DURATION_MS / 1000))}/s); p50 ${p50.toFixed(1)} ms, p90 ${percentile(latencies, 90)?.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms; server ${alive ? "alive" : "DEAD"} at the end`,
    );
    report.figure(
      `${CLIENTS} clients for ${DURATION_MS / 1000} s: errors`,
      `${errors} of ${latencies.length} calls`,
      "goal 0",
      errors === 0 && latencies.length > 0 && alive,
    );
    report.figure(
      `${CLIENTS} clients for ${DURATION_MS / 1000} s: p99 / p50`,
      `${(p99 / p50).toFixed(2)} (p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms)`,
      "goal at most 10",
      p99 <= 10 * p50,
    );
    report.figure(
      `${CLIENTS} clients for ${DURATION_MS / 1000} s: p99 latency`,
      `${p99.toFixed(1)} ms (${Math.round(latencies.length / (DURATION_MS / 1000))} calls/s)`,
      `goal at most ${P99_BOUND_MS} ms`,
      p99 <= P99_BOUND_MS,
    );
  },
};
