// orchestrator_capabilities with 10 provider instances, served from the provider snapshot:
// 4 real Codex instances (codex and codex-exec, each on its own CODEX_HOME), 3 real Pi
// instances (own agent dirs), 3 scripted ones. The snapshot is refreshed in the background, so
// a call reads it and probes nothing. Baselines, side by side on the same machine: a bare MCP
// SDK echo tool call on loopback, and t3_thread_list on the same Switchyard endpoint. For
// context, the time one probe round of the same 10 instances takes (what every call used to
// wait for) is printed too.
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { createSilentLogger, McpSessionRegistry, startServer, SwitchyardHost } from "../core/dist/index.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../testkit/dist/scripted-provider/index.js";
import { createCodexHome, createPiHome } from "../testkit/dist/index.js";

const CALLS = 300;
// The model server is never called: probes start no model turn.
const NO_MODEL_SERVER = "http://127.0.0.1:9/v1";

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Round trips of several calls, interleaved (one of each per round), so a load spike on this
 * shared machine weighs on all of them alike. Returns each call's sorted times.
 */
async function interleavedRoundTrips(calls) {
  const times = calls.map(() => []);
  for (let round = 0; round < CALLS + 20; round += 1) {
    for (const [index, { client, name, args }] of calls.entries()) {
      const start = performance.now();
      const result = await client.callTool({ name, arguments: args });
      const elapsed = performance.now() - start;
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
      if (round >= 20) times[index].push(elapsed);
    }
  }
  return times.map((list) => list.sort((a, b) => a - b));
}

async function bareEchoServer() {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const mcp = new McpServer({ name: "echo", version: "1.0.0" });
    mcp.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: "text", text }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function connect(url, token) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
    ),
  );
  return client;
}

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-caps-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  const codexHomes = await Promise.all([1, 2, 3, 4].map(() => createCodexHome({ modelServerUrl: NO_MODEL_SERVER })));
  const piHomes = await Promise.all([1, 2, 3].map(() => createPiHome({ modelServerUrl: NO_MODEL_SERVER })));
  const providers = [
    ...codexHomes.map((h, i) => ({
      id: `codex-${i + 1}`,
      driver: i % 2 === 0 ? "codex" : "codex-exec",
      homePath: h.home,
      environment: h.env,
    })),
    ...piHomes.map((h, i) => ({
      id: `pi-${i + 1}`,
      driver: "pi",
      homePath: h.home,
      environment: h.env,
      options: { offline: true },
    })),
    ...[1, 2, 3].map((i) => ({ id: `scripted-${i}`, driver: "scripted" })),
  ];
  const host = await SwitchyardHost.create({
    home,
    logger: createSilentLogger(),
    config: { plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR], providers },
  });
  // startServer starts the host once the MCP endpoint is wired (sessions reopened at boot need it).
  const server = await startServer(host, { port: 0 });
  const bare = await bareEchoServer();
  try {
    // The background refresh started with the host; wait until every instance has a full answer.
    const settled = await host.providers.availabilityAll();
    const available = settled.filter((a) => a.available).length;
    const probeStart = performance.now();
    await host.providers.availabilityAll({ refresh: true });
    const probeRoundMs = performance.now() - probeStart;

    const project = await host.projects.add(workspace);
    const token = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const ours = await connect(server.mcpUrl, token);
    const baseline = await connect(bare.url, null);
    const [caps, list, echo] = await interleavedRoundTrips([
      { client: ours, name: "orchestrator_capabilities", args: {} },
      { client: ours, name: "t3_thread_list", args: { projectId: project.id } },
      { client: baseline, name: "echo", args: { text: "hi" } },
    ]);
    await ours.close();
    await baseline.close();
    const p50 = percentile(caps, 50);
    return {
      name: "orchestrator_capabilities (10 provider instances)",
      rows: [
        {
          metric: "orchestrator_capabilities p50",
          value: p50,
          unit: "ms",
          baseline: percentile(echo, 50),
          ratio: p50 / percentile(echo, 50),
          note: `target ≤ 20 ms; baseline: bare MCP SDK echo tool, loopback; ${available}/10 instances available`,
        },
        {
          metric: "orchestrator_capabilities p99",
          value: percentile(caps, 99),
          unit: "ms",
          baseline: percentile(echo, 99),
          ratio: percentile(caps, 99) / percentile(echo, 99),
        },
        {
          metric: "orchestrator_capabilities p50 vs t3_thread_list",
          value: p50,
          unit: "ms",
          baseline: percentile(list, 50),
          ratio: p50 / percentile(list, 50),
          note: "baseline: t3_thread_list on the same endpoint",
        },
        {
          metric: "one probe round of the 10 instances",
          value: probeRoundMs,
          unit: "ms",
          note: "what each call waited for before the snapshot; now done in the background",
        },
      ],
    };
  } finally {
    await bare.close();
    await server.close();
    await host.stop();
    for (const h of [...codexHomes, ...piHomes]) await h.cleanup();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}
