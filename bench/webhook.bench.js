// Webhook request → run start latency: POST /hooks/<id> on a real Switchyard server (Host check,
// body read, the task's signature checked or not, provider availability from the snapshot, one
// command that records the trigger and creates the run and its fresh thread, answered 202 once
// committed), and until the run's turn reaches the (zero-latency scripted) provider. Baseline,
// side by side: a plain node:http handler that reads the body and does one SQLite transaction
// inserting a row (same pragmas), answering 202. Requests are interleaved, one of each per round,
// so a load spike on this shared machine weighs on all of them; each waits for the previous run
// to finish (a trigger while the task's run still runs would be skipped as an overlap).
import { createHmac } from "node:crypto";
import { createServer, request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createSilentLogger, McpSessionRegistry, startServer, SwitchyardHost } from "../core/dist/index.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../testkit/dist/scripted-provider/index.js";

const ROUNDS = Number(process.env.WEBHOOK_BENCH_ROUNDS ?? 150);
const WARMUP = 10;
const SECRET = "bench secret, long enough to sign with";

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** One POST over a fresh connection, like a webhook sender; resolves with status and JSON body. */
function post(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString() || "null") }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function baselineServer(dir) {
  const db = new Database(join(dir, "baseline.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE deliveries (id INTEGER PRIMARY KEY AUTOINCREMENT, task TEXT, body TEXT, created_at TEXT)");
  const insert = db.prepare("INSERT INTO deliveries (task, body, created_at) VALUES (?, ?, ?)");
  const record = db.transaction((task, body) => insert.run(task, body, new Date().toISOString()).lastInsertRowid);
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const id = record(req.url, Buffer.concat(chunks).toString("utf8"));
    res.writeHead(202, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: "started", id: Number(id) }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks/baseline`,
    close: () => new Promise((resolve) => server.close(() => (db.close(), resolve()))),
  };
}

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-webhook-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  const host = await SwitchyardHost.create({
    home,
    builtinPluginsDir: null,
    logger: createSilentLogger(),
    config: { plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR], providers: [{ id: "scripted", driver: "scripted" }] },
  });
  const server = await startServer(host, { port: 0 });
  const baseline = await baselineServer(home);
  try {
    const project = await host.projects.add(workspace);
    const token = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const client = new Client({ name: "bench", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const schedule = async (signature) => {
      const result = await client.callTool({
        name: "schedule_task",
        arguments: {
          projectId: project.id,
          target: { providerInstanceId: "scripted" },
          prompt: "@@reply ok @@wait 0",
          schedule: { type: "webhook", ...(signature ? { signature } : {}) },
        },
      });
      if (result.isError) throw new Error(`schedule_task failed: ${JSON.stringify(result.content)}`);
      return result.structuredContent.webhookUrl;
    };
    const unsignedUrl = await schedule(null);
    const signedUrl = await schedule({ secret: SECRET });
    await client.close();

    // When each thread's first turn reached the provider.
    const turnLive = new Map();
    const unsubscribe = host.engine.onEvents((events) => {
      const at = performance.now();
      for (const event of events)
        if (event.entity === "attempt" && event.record.status === "running" && !turnLive.has(event.record.threadId))
          turnLive.set(event.record.threadId, at);
    });
    const times = { unsigned: [], signed: [], unsignedTurn: [], baseline: [] };
    const ours = async (url, signed) => {
      const body = JSON.stringify({ action: "deployed", at: Date.now() });
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = signed
        ? {
            "x-switchyard-timestamp": String(timestamp),
            "x-switchyard-signature": `sha256=${createHmac("sha256", SECRET).update(`${timestamp}.${body}`).digest("hex")}`,
          }
        : {};
      const start = performance.now();
      const answer = await post(url, body, headers);
      const elapsed = performance.now() - start;
      if (answer.status !== 202) throw new Error(`webhook answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      const done = await host.threads.waitForRun({
        threadId: answer.body.threadId,
        runId: answer.body.runId,
        timeoutMs: 30_000,
      });
      if (done.run?.status !== "completed") throw new Error(`the webhook run ended ${done.run?.status}`);
      return { elapsed, turn: turnLive.has(answer.body.threadId) ? turnLive.get(answer.body.threadId) - start : null };
    };
    for (let round = 0; round < ROUNDS + WARMUP; round += 1) {
      const unsigned = await ours(unsignedUrl, false);
      const signed = await ours(signedUrl, true);
      const startBaseline = performance.now();
      const answer = await post(baseline.url, JSON.stringify({ action: "deployed", at: Date.now() }));
      const baselineElapsed = performance.now() - startBaseline;
      if (answer.status !== 202) throw new Error(`baseline answered ${answer.status}`);
      if (round < WARMUP) continue;
      times.unsigned.push(unsigned.elapsed);
      times.signed.push(signed.elapsed);
      if (unsigned.turn !== null) times.unsignedTurn.push(unsigned.turn);
      times.baseline.push(baselineElapsed);
    }
    unsubscribe();
    for (const list of Object.values(times)) list.sort((a, b) => a - b);
    const base = percentile(times.baseline, 50);
    return {
      name: "webhook → run start",
      rows: [
        {
          metric: "unsigned webhook → run started (202) p50",
          value: percentile(times.unsigned, 50),
          unit: "ms",
          baseline: base,
          ratio: percentile(times.unsigned, 50) / base,
          note: "baseline: node:http handler + one SQLite insert transaction, 202",
        },
        {
          metric: "signed webhook → run started (202) p50",
          value: percentile(times.signed, 50),
          unit: "ms",
          baseline: base,
          ratio: percentile(times.signed, 50) / base,
          note: "HMAC-SHA256 check and replay lookup included",
        },
        {
          metric: "unsigned webhook → run started (202) p99",
          value: percentile(times.unsigned, 99),
          unit: "ms",
          baseline: percentile(times.baseline, 99),
          ratio: percentile(times.unsigned, 99) / percentile(times.baseline, 99),
        },
        {
          metric: "unsigned webhook → turn at the provider p50",
          value: percentile(times.unsignedTurn, 50),
          unit: "ms",
          note: "a fresh thread per run: includes opening its provider session (scripted, in process)",
        },
      ],
    };
  } finally {
    await baseline.close();
    await server.close();
    await host.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}
