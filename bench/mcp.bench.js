// MCP tool-call round trip through the Switchyard endpoint (auth, scope, service, SQLite read)
// against a stateful MCP SDK echo server on loopback (one server and transport per session,
// reused for every call: the SDK's cheapest way to serve); delegate_task(wait) between
// two zero-latency scripted providers; and completion-to-wake latency (child run committed as
// terminal → the parent's waiting delegate_task call has its answer).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createSilentLogger, McpSessionRegistry, startServer, SwitchyardHost } from "../core/dist/index.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../testkit/dist/scripted-provider/index.js";
import { startStatefulEchoServer } from "./support/stateful-echo-server.js";

const CALLS = 300;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function roundTrips(client, name, args) {
  for (let i = 0; i < 20; i += 1) await client.callTool({ name, arguments: args });
  const times = [];
  for (let i = 0; i < CALLS; i += 1) {
    const start = performance.now();
    const result = await client.callTool({ name, arguments: args });
    times.push(performance.now() - start);
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  }
  return times.sort((a, b) => a - b);
}

async function connect(url, token) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}));
  return client;
}

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-mcp-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  const host = await SwitchyardHost.create({
    home,
    builtinPluginsDir: null,
    logger: createSilentLogger(),
    config: { plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR], providers: [{ id: "parent", driver: "scripted" }, { id: "child", driver: "scripted" }], budgets: { maxTasksPerRootThread: 10_000 } },
  });
  // startServer starts the host once the MCP endpoint is wired.
  const server = await startServer(host, { port: 0 });
  const echo = await startStatefulEchoServer();
  try {
    const project = host.projects.add(workspace);
    const token = host.container.resolve(McpSessionRegistry).issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const ours = await connect(server.mcpUrl, token);
    const baseline = await connect(echo.url, null);
    const oursTimes = await roundTrips(ours, "t3_thread_list", { projectId: project.id });
    const echoTimes = await roundTrips(baseline, "echo", { text: "hi" });

    // delegate_task(wait): a scripted parent delegates to a scripted child that answers at once.
    const runOnce = async (prompt) => {
      const start = performance.now();
      const { thread } = host.threads.createThread({ projectId: project.id, providerInstanceId: "parent", prompt, runtimeMode: "full-access", createdBy: "user", creationSource: "cli" });
      const result = await host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
      if (result.run?.status !== "completed") throw new Error(`run ended ${result.run?.status}`);
      return performance.now() - start;
    };
    const wakes = [];
    let childTerminalAt = new Map();
    const unsubscribe = host.engine.onEvents((events) => {
      const at = performance.now();
      for (const event of events) {
        if (event.entity === "run" && event.record.delegatedTaskId && event.record.status === "completed") childTerminalAt.set(event.record.threadId, at);
        if (event.entity === "item" && event.record.kind === "tool_call" && event.record.status === "completed" && event.record.data.name?.endsWith("delegate_task")) {
          const output = String(event.record.data.output ?? "");
          const child = /"childThreadId":"([^"]+)"/.exec(output)?.[1];
          if (child && childTerminalAt.has(child)) wakes.push(at - childTerminalAt.get(child));
        }
      }
    });
    const delegated = [];
    const plain = [];
    for (let i = 0; i < 30; i += 1) {
      plain.push(await runOnce(`@@reply plain-${i}`));
      delegated.push(await runOnce(`@@tool delegate_task ${JSON.stringify({ task: `@@reply child-${i}`, target: { providerInstanceId: "child" }, mode: "wait" })}`));
    }
    unsubscribe();
    plain.sort((a, b) => a - b);
    delegated.sort((a, b) => a - b);
    wakes.sort((a, b) => a - b);
    await ours.close();
    await baseline.close();
    return {
      name: "MCP endpoint",
      rows: [
        { metric: "tool call round trip p50 (t3_thread_list)", value: percentile(oursTimes, 50), unit: "ms", baseline: percentile(echoTimes, 50), ratio: percentile(oursTimes, 50) / percentile(echoTimes, 50), note: "baseline: MCP SDK echo server, stateful (session reused), loopback" },
        { metric: "tool call round trip p99", value: percentile(oursTimes, 99), unit: "ms", baseline: percentile(echoTimes, 99), ratio: percentile(oursTimes, 99) / percentile(echoTimes, 99) },
        { metric: "parent run with delegate_task(wait), p50", value: percentile(delegated, 50), unit: "ms", baseline: percentile(plain, 50), ratio: percentile(delegated, 50) / percentile(plain, 50), note: "baseline: the same parent run replying without delegating; zero-latency scripted providers" },
        { metric: "completion-to-wake latency p50", value: percentile(wakes, 50), unit: "ms", note: `child run terminal commit → parent's delegate_task answered; p99 ${percentile(wakes, 99)?.toFixed(2)} ms, n=${wakes.length}` },
      ],
    };
  } finally {
    await echo.close();
    await server.close();
    await host.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}
