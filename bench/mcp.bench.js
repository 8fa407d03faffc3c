// MCP tool-call round trip through the Switchyard endpoint (auth, scope, service, SQLite read)
// against a stateful MCP SDK echo server on loopback (one server and transport per session,
// reused for every call, answering JSON bodies: the SDK's cheapest way to serve; it replays
// Switchyard's own answer to the call, so both clients do the same work); delegate_task(wait)
// between two zero-latency scripted providers against the same parent run without delegating;
// and completion-to-wake latency (child run committed as terminal → the parent's waiting
// delegate_task call answered: its HTTP response handed to the socket; and, for context, until
// the parent's harness has recorded the answer as its tool call's result).
//
// Switchyard and its baseline run in alternating blocks in the same process, so load on a shared
// machine falls on both alike.
import dc from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { createSilentLogger, McpSessionRegistry, startServer, SwitchyardHost } from "../core/dist/index.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../testkit/dist/scripted-provider/index.js";
import { startModernEchoServer } from "./support/modern-echo-server.js";
import { startStatefulEchoServer } from "./support/stateful-echo-server.js";

/**
 * Timed calls per side (`MCP_CALLS` overrides). With 300, the 2025 row swung ±0.3× from run to
 * run on the shared 2-core machine at load 9 to 12; with 1,200, ±0.05×: more rounds of blocks
 * for the load to fall on both sides alike, and most calls past the JIT's warm-up on both.
 */
const CALLS = Number(process.env.MCP_CALLS ?? 1200);
/** Delegating and plain parent runs per kind (four runs each), after DELEGATION_WARMUP untimed rounds. */
const DELEGATION_RUNS = Number(process.env.MCP_DELEGATION_RUNS ?? 100);
const DELEGATION_WARMUP = 5;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Measures `CALLS` calls on each client, in alternating blocks of `BLOCK`, after a warm-up: each
 * call's round trip, and its server's share of it (from the request's arrival to its response
 * handed to the socket, matched to a side by the server's port), which leaves out the client and
 * the loopback both sides share alike.
 */
async function roundTrips(sides) {
  const BLOCK = 25;
  const call = async (side) => {
    const result = await side.client.callTool({ name: side.name, arguments: side.args });
    if (result.isError) throw new Error(`${side.name} failed: ${JSON.stringify(result.content)}`);
  };
  for (const side of sides) for (let i = 0; i < 30; i += 1) await call(side);
  const times = sides.map(() => []);
  const serverTimes = sides.map(() => []);
  const arrivals = new WeakMap();
  const onArrival = ({ request }) => arrivals.set(request, performance.now());
  const onAnswered = ({ request }) => {
    const modern = request.headers["mcp-protocol-version"] === "2026-07-28";
    const index = sides.findIndex(
      (side) => side.port === request.socket.localPort && (side.modern ?? false) === modern,
    );
    if (index >= 0 && arrivals.has(request)) serverTimes[index].push(performance.now() - arrivals.get(request));
  };
  dc.subscribe("http.server.request.start", onArrival);
  dc.subscribe("http.server.response.finish", onAnswered);
  try {
    for (let done = 0; done < CALLS; done += BLOCK) {
      for (const [index, side] of sides.entries()) {
        for (let i = 0; i < BLOCK; i += 1) {
          const start = performance.now();
          await call(side);
          times[index].push(performance.now() - start);
        }
      }
    }
  } finally {
    dc.unsubscribe("http.server.request.start", onArrival);
    dc.unsubscribe("http.server.response.finish", onAnswered);
  }
  return {
    times: times.map((list) => list.sort((a, b) => a - b)),
    serverTimes: serverTimes.map((list) => list.sort((a, b) => a - b)),
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

/** The SDK's v2 client pinned to 2026-07-28: one server/discover at connect, then each call stateless. */
async function connectModern(url, token) {
  const client = new ModernClient(
    { name: "bench", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new ModernTransport(new URL(url), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  );
  return client;
}

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-mcp-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  const host = await SwitchyardHost.create({
    home,
    builtinPluginsDir: null,
    logger: createSilentLogger(),
    config: {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "parent", driver: "scripted" },
        { id: "child", driver: "scripted" },
      ],
      budgets: { maxTasksPerRootThread: 10_000 },
    },
  });
  // startServer starts the host once the MCP endpoint is wired.
  const server = await startServer(host, { port: 0 });
  let echo = null;
  let modernEcho = null;
  try {
    const project = await host.projects.add(workspace);
    const token = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const ours = await connect(server.mcpUrl, token);
    const oursModern = await connectModern(server.mcpUrl, token);
    // Each echo answers what Switchyard answers the same call on its revision, and its client
    // sends the same Authorization header (the echo checks none): the clients' work is the same
    // on both sides, so the ratio is the servers'.
    const args = { projectId: project.id };
    echo = await startStatefulEchoServer({ answer: await ours.callTool({ name: "t3_thread_list", arguments: args }) });
    modernEcho = await startModernEchoServer({
      answer: await oursModern.callTool({ name: "t3_thread_list", arguments: args }),
    });
    const baseline = await connect(echo.url, token);
    const baselineModern = await connectModern(modernEcho.url, token);
    // Each revision's pair alternates on its own: in one rotation of all four, Switchyard's 2025
    // block followed the v2 echo's, whose server built per request leaves the most garbage, so it
    // paid a collection the 2025 echo (after Switchyard's block) did not. Switchyard's two sides
    // share its port: a request's revision header tells them apart.
    const {
      times: [oursTimes, echoTimes],
      serverTimes: [oursServer, echoServer],
    } = await roundTrips([
      { client: ours, port: server.port, name: "t3_thread_list", args: { projectId: project.id } },
      { client: baseline, port: Number(new URL(echo.url).port), name: "echo", args: { text: "hi" } },
    ]);
    const {
      times: [oursModernTimes, echoModernTimes],
      serverTimes: [oursModernServer, echoModernServer],
    } = await roundTrips([
      { client: oursModern, port: server.port, modern: true, name: "t3_thread_list", args: { projectId: project.id } },
      {
        client: baselineModern,
        port: Number(new URL(modernEcho.url).port),
        modern: true,
        name: "echo",
        args: { text: "hi" },
      },
    ]);

    // delegate_task(wait): a scripted parent delegates to a scripted child that answers at once.
    const runOnce = async (prompt) => {
      const start = performance.now();
      const { thread } = await host.threads.createThread({
        projectId: project.id,
        providerInstanceId: "parent",
        prompt,
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      });
      const result = await host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
      if (result.run?.status !== "completed") throw new Error(`run ended ${result.run?.status}`);
      return performance.now() - start;
    };
    // Waits run one at a time here, so the first MCP response after a child's terminal commit
    // is its parent's delegate_task answer (the child itself calls no tool).
    const wakes = [];
    const answered = [];
    let childTerminalAt = null;
    // Only the runs of the first pair are wake samples (the connected pair below is not).
    let measuringWake = false;
    const onResponse = ({ request }) => {
      if (
        measuringWake &&
        childTerminalAt !== null &&
        request.url.startsWith("/mcp") &&
        answered.length === wakes.length
      )
        answered.push(performance.now() - childTerminalAt);
    };
    dc.subscribe("http.server.response.finish", onResponse);
    const unsubscribe = host.engine.onEvents((events) => {
      const at = performance.now();
      if (!measuringWake) return;
      for (const event of events) {
        if (event.entity === "run" && event.record.delegatedTaskId && event.record.status === "completed")
          childTerminalAt = at;
        if (
          childTerminalAt !== null &&
          event.entity === "item" &&
          event.record.kind === "tool_call" &&
          event.record.status === "completed" &&
          event.record.data.name?.endsWith("delegate_task")
        ) {
          wakes.push(at - childTerminalAt);
          if (answered.length < wakes.length) answered.push(NaN);
          childTerminalAt = null;
        }
      }
    });
    const delegated = [];
    const plain = [];
    // The same pair with the parent's harness already connected to MCP: both runs first make the
    // same cheap tool call, so the harness's connect (initialize, initialized, the GET stream: the
    // SDK's own cost, the same against the stateful echo server) is on both sides, as it is for a
    // harness that connects its MCP servers at session start.
    const connectedDelegated = [];
    const connectedPlain = [];
    const connectCall = `@@tool t3_thread_list ${JSON.stringify({ projectId: project.id, limit: 1 })}`;
    // Untimed first: the first delegations of a process run cold code (the round trips above
    // are warmed the same way), and with n samples the p99 is nearly the slowest one.
    for (let i = 0; i < DELEGATION_WARMUP; i += 1) {
      await runOnce(`@@reply warm-plain-${i}`);
      await runOnce(
        `@@tool delegate_task ${JSON.stringify({ task: `@@reply warm-child-${i}`, target: { providerInstanceId: "child" }, mode: "wait" })}`,
      );
      await runOnce(
        `${connectCall}\n@@tool delegate_task ${JSON.stringify({ task: `@@reply warm-connected-${i}`, target: { providerInstanceId: "child" }, mode: "wait" })}`,
      );
    }
    for (let i = 0; i < DELEGATION_RUNS; i += 1) {
      plain.push(await runOnce(`@@reply plain-${i}`));
      measuringWake = true;
      delegated.push(
        await runOnce(
          `@@tool delegate_task ${JSON.stringify({ task: `@@reply child-${i}`, target: { providerInstanceId: "child" }, mode: "wait" })}`,
        ),
      );
      measuringWake = false;
      connectedPlain.push(await runOnce(`${connectCall}\n@@reply connected-plain-${i}`));
      connectedDelegated.push(
        await runOnce(
          `${connectCall}\n@@tool delegate_task ${JSON.stringify({ task: `@@reply connected-child-${i}`, target: { providerInstanceId: "child" }, mode: "wait" })}`,
        ),
      );
    }
    unsubscribe();
    dc.unsubscribe("http.server.response.finish", onResponse);
    if (answered.some(Number.isNaN)) throw new Error("a delegate_task answer was not seen on the HTTP server");
    answered.sort((a, b) => a - b);
    plain.sort((a, b) => a - b);
    delegated.sort((a, b) => a - b);
    connectedPlain.sort((a, b) => a - b);
    connectedDelegated.sort((a, b) => a - b);
    wakes.sort((a, b) => a - b);
    await ours.close();
    await baseline.close();
    await oursModern.close();
    await baselineModern.close();
    return {
      name: "MCP endpoint",
      rows: [
        {
          metric: "tool call round trip p50 (t3_thread_list vs stateful SDK echo)",
          value: percentile(oursTimes, 50),
          unit: "ms",
          baseline: percentile(echoTimes, 50),
          ratio: percentile(oursTimes, 50) / percentile(echoTimes, 50),
          note: `baseline: MCP SDK echo server, stateful (session reused, JSON answers, Switchyard's answer replayed, the same headers), loopback; goal <= 1.0x; n=${oursTimes.length} each`,
        },
        {
          metric: "tool call round trip p99 (t3_thread_list vs stateful SDK echo)",
          value: percentile(oursTimes, 99),
          unit: "ms",
          baseline: percentile(echoTimes, 99),
          ratio: percentile(oursTimes, 99) / percentile(echoTimes, 99),
          note: "goal <= 1.2x",
        },
        {
          metric: "2026-07-28 tool call round trip p50 (t3_thread_list vs the v2 SDK's own server)",
          value: percentile(oursModernTimes, 50),
          unit: "ms",
          baseline: percentile(echoModernTimes, 50),
          ratio: percentile(oursModernTimes, 50) / percentile(echoModernTimes, 50),
          note: `baseline: MCP SDK v2 echo on createMcpHandler (stateless, per request, as the revision is), v2 clients pinned to 2026-07-28, Switchyard's answer replayed, the same headers; goal <= 1.0x; n=${oursModernTimes.length} each`,
        },
        {
          metric: "2026-07-28 tool call round trip p99 (t3_thread_list vs the v2 SDK's own server)",
          value: percentile(oursModernTimes, 99),
          unit: "ms",
          baseline: percentile(echoModernTimes, 99),
          ratio: percentile(oursModernTimes, 99) / percentile(echoModernTimes, 99),
          note: "goal <= 1.2x",
        },
        {
          metric: "server's share of a tool call p50 (request arrived -> response handed to the socket)",
          value: percentile(oursServer, 50),
          unit: "ms",
          baseline: percentile(echoServer, 50),
          ratio: percentile(oursServer, 50) / percentile(echoServer, 50),
          note: `context: the round trip without the SDK client and loopback both sides share; p99 ${percentile(oursServer, 99)?.toFixed(3)} vs ${percentile(echoServer, 99)?.toFixed(3)} ms; n=${oursServer.length}/${echoServer.length}`,
        },
        {
          metric: "2026-07-28 server's share of a tool call p50",
          value: percentile(oursModernServer, 50),
          unit: "ms",
          baseline: percentile(echoModernServer, 50),
          ratio: percentile(oursModernServer, 50) / percentile(echoModernServer, 50),
          note: `context: as above, against the v2 SDK's own server; p99 ${percentile(oursModernServer, 99)?.toFixed(3)} vs ${percentile(echoModernServer, 99)?.toFixed(3)} ms; n=${oursModernServer.length}/${echoModernServer.length}`,
        },
        {
          metric: "parent run with delegate_task(wait) vs without, p50",
          value: percentile(delegated, 50),
          unit: "ms",
          baseline: percentile(plain, 50),
          ratio: percentile(delegated, 50) / percentile(plain, 50),
          note: "baseline: the same parent run replying without delegating; zero-latency scripted providers; goal <= 3x",
        },
        {
          metric: "parent run with delegate_task(wait) vs without, harness MCP already connected, p50",
          value: percentile(connectedDelegated, 50),
          unit: "ms",
          baseline: percentile(connectedPlain, 50),
          ratio: percentile(connectedDelegated, 50) / percentile(connectedPlain, 50),
          note: "context: both runs first make the same t3_thread_list call, so the harness's MCP connect is on both sides (as for a harness connecting at session start)",
        },
        {
          metric: "child terminal commit -> parent answered, p50",
          value: percentile(answered, 50),
          unit: "ms",
          note: `the delegate_task HTTP response handed to the socket; goal <= 1 ms; n=${answered.length}`,
        },
        {
          metric: "child terminal commit -> parent answered, p99",
          value: percentile(answered, 99),
          unit: "ms",
          note: "goal <= 3 ms",
        },
        {
          metric: "child terminal commit -> parent's tool result recorded, p50",
          value: percentile(wakes, 50),
          unit: "ms",
          note: `context: also the harness side (its MCP client reads the answer, the host ingests the tool result); p99 ${percentile(wakes, 99)?.toFixed(2)} ms`,
        },
      ],
    };
  } finally {
    await echo?.close();
    await modernEcho?.close();
    await server.close();
    await host.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}
