// Event streams (GET /api/v1/events), against a bare Node http SSE broadcaster of the same
// payloads side by side:
// - delivery latency, commit -> SSE client: a real server on a real home, a real SSE client
//   over loopback, events made by real commands (a message queued on a thread, one `message`
//   event each), one at a time; p50 and p99 (goal p50 <= 5 ms). The broadcaster's "commit" is
//   the moment it is handed the payload.
// - fan-out: 100 SSE clients while commands make 1,000 events/s for a bounded time. The clients
//   run in a child process (this file with --sse-clients), so the server's event loop carries
//   only server work. Loss is counted by sequence against the log (goal 0), and the server
//   process's RSS is sampled before, during and after (bounded growth).
// EVENTS_CLIENTS, EVENTS_RATE and EVENTS_SECONDS change the load (defaults 100, 1000, 5).
import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createParser } from "eventsource-parser";

const CLIENTS = Number(process.env.EVENTS_CLIENTS ?? 100);
const RATE = Number(process.env.EVENTS_RATE ?? 1000);
const SECONDS = Number(process.env.EVENTS_SECONDS ?? 5);
const LATENCY_SAMPLES = 500;
const LATENCY_GOAL_MS = 5;
/** Threads the load spreads its queued messages over (each held at a gate). */
const LOAD_THREADS = 50;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** One SSE connection: calls onEvent(id, data) per dispatched event. */
function openStream(url, token, onEvent) {
  return new Promise((resolve, reject) => {
    const headers = { accept: "text/event-stream" };
    if (token) headers.authorization = `Bearer ${token}`;
    const req = request(url, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream refused: ${res.statusCode}`));
      const parser = createParser({ onEvent: (event) => onEvent(event.id, event.data) });
      res.setEncoding("utf8");
      res.on("data", (chunk) => parser.feed(chunk));
      resolve({ close: () => req.destroy(), ended: new Promise((done) => res.on("close", done)) });
    });
    req.on("error", reject);
    req.end();
  });
}

// ---- the SSE clients (the child process) ----------------------------------------------------

async function runClients({ url, token, clients }, lines) {
  const received = Array.from({ length: clients }, () => []);
  let cutOff = 0;
  const streams = await Promise.all(
    received.map((list) =>
      openStream(url, token, (id) => list.push(Number(id))).then((stream) => {
        void stream.ended.then(() => (cutOff += 1));
        return stream;
      }),
    ),
  );
  process.stdout.write("ready\n");
  // The parent says which sequences it expects once its load is done.
  const expected = JSON.parse((await lines.next()).value);
  const want = new Set(expected);
  const last = Math.max(...expected);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && received.some((list) => (list.at(-1) ?? 0) < last) && cutOff === 0)
    await new Promise((resolve) => setTimeout(resolve, 50));
  for (const stream of streams) stream.close();
  let lost = 0;
  let duplicated = 0;
  let unexpected = 0;
  for (const list of received) {
    const seen = new Set(list);
    duplicated += list.length - seen.size;
    for (const sequence of want) if (!seen.has(sequence)) lost += 1;
    for (const sequence of seen) if (!want.has(sequence)) unexpected += 1;
  }
  process.stdout.write(
    `${JSON.stringify({ lost, duplicated, unexpected, cutOff, perClient: received.map((list) => list.length) })}\n`,
  );
  process.exit(0);
}

/** Starts the clients in a child process; resolves once all are connected. */
async function startClients(target) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--sse-clients"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  child.stdin.write(`${JSON.stringify(target)}\n`);
  const lines = createInterface({ input: child.stdout });
  const next = () => new Promise((resolve) => lines.once("line", resolve));
  const ready = await next();
  if (ready !== "ready") throw new Error(`sse clients: ${ready}`);
  return {
    finish: async (expected) => {
      child.stdin.end(`${JSON.stringify(expected)}\n`);
      return JSON.parse(await next());
    },
  };
}

// ---- the baseline: a bare SSE broadcaster ---------------------------------------------------

function startBroadcaster() {
  const clients = new Set();
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(": hello\n\n");
    clients.add(res);
    res.on("close", () => clients.delete(res));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/`,
        clients,
        broadcast: (sequence, type, json) => {
          const frame = `id: ${sequence}\nevent: ${type}\ndata: ${json}\n\n`;
          for (const res of clients) res.write(frame);
        },
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(done));
        },
      }),
    ),
  );
}

// ---- measurements ---------------------------------------------------------------------------

/** Commit -> client latency, one event at a time: `produce()` commits and returns the sequence. */
async function latency(openClient, produce) {
  const arrivals = new Map();
  let waiting = null;
  const stream = await openClient((id) => {
    const at = performance.now();
    arrivals.set(Number(id), at);
    if (waiting !== null && waiting.sequence === Number(id)) waiting.resolve(at);
  });
  const samples = [];
  for (let i = 0; i < LATENCY_SAMPLES + 20; i += 1) {
    const sequence = await produce(i);
    // The command has committed when it returns.
    const committed = performance.now();
    const arrived = arrivals.get(sequence) ?? (await new Promise((resolve) => (waiting = { sequence, resolve })));
    waiting = null;
    if (i >= 20) samples.push(arrived - committed);
    await nextTurn();
  }
  stream.close();
  return samples.sort((a, b) => a - b);
}

/** RSS of this process while `during` runs: before, the peak, after, and the peak of each quarter of the run. */
async function sampleRss(during) {
  const before = process.memoryUsage().rss;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const samples = [];
  const timer = setInterval(() => samples.push(process.memoryUsage().rss), 100);
  try {
    const result = await during();
    samples.push(process.memoryUsage().rss);
    const quarter = Math.max(1, Math.ceil(samples.length / 4));
    const quarters = Array.from({ length: 4 }, (_, i) =>
      Math.max(before, ...samples.slice(i * quarter, (i + 1) * quarter)),
    );
    return {
      result,
      before,
      peak: Math.max(before, ...samples),
      after: process.memoryUsage().rss,
      quarters,
      loopDelayMaxMs: delay.max / 1e6,
      loopDelayP99Ms: delay.percentile(99) / 1e6,
    };
  } finally {
    delay.disable();
    clearInterval(timer);
  }
}

/** Calls `produce(i)` RATE / perCall times a second for SECONDS, in 10 ms steps. */
async function paced(produce, perCall = 1) {
  const rate = RATE / perCall;
  const total = rate * SECONDS;
  const started = performance.now();
  let made = 0;
  while (made < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    for (; made < due; made += 1) produce(made);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return (performance.now() - started) / 1000;
}

const MB = 1024 * 1024;

export default async function run() {
  const { createLogger, McpSessionRegistry, startServer, SwitchyardHost } = await import("../core/dist/index.js");
  const { SCRIPTED_PROVIDER_PLUGIN_DIR } = await import("../testkit/dist/scripted-provider/index.js");
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-events-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  const gateDir = join(home, "gates");
  const logFile = createWriteStream(join(home, "server.log"));
  const host = await SwitchyardHost.create({
    home,
    builtinPluginsDir: null,
    logger: createLogger({ level: "info", destination: logFile }),
    config: {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "scripted", driver: "scripted", options: { gateDir } }],
      server: { maxEventStreams: CLIENTS + 10 },
    },
  });
  const server = await startServer(host, { port: 0 });
  if (!host.isStarted) await host.start();
  const broadcaster = await startBroadcaster();
  try {
    const project = await host.projects.add(workspace);
    const token = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"], label: "events bench" }).token;
    // Threads whose first turn is held at a gate, so every further message queues: one
    // `message` event per command, and no provider turn in the measurement.
    const threads = [];
    for (let i = 0; i < LOAD_THREADS; i += 1) {
      threads.push(
        (
          await host.threads.createThread({
            projectId: project.id,
            providerInstanceId: "scripted",
            prompt: `@@gate bench-${i} @@reply done`,
            createdBy: "user",
            creationSource: "api",
          })
        ).thread.id,
      );
    }
    await host.waiter.waitFor(() => (host.store.count("attempt", "status = 'running'") >= LOAD_THREADS ? true : null), {
      timeoutMs: 30_000,
    });
    const url = `${server.url}/api/v1/events?projectId=${encodeURIComponent(project.id)}&types=message`;
    const loadUrl = `${server.url}/api/v1/events?projectId=${encodeURIComponent(project.id)}&types=thread.created`;
    // The load's commands: create_threads with 10 idle threads (10 `thread.created` events in one
    // transaction). A queued message costs about 1 ms of engine time on a busy 2-core machine,
    // so 1,000 single-event commands a second would measure the engine, not the streams.
    const router = {
      kind: "client",
      threadId: null,
      projectId: null,
      providerInstanceId: null,
      providerSessionId: null,
      requestScope: "bench:events",
      capabilities: new Set(["orchestration:read", "orchestration:operate"]),
    };
    const PER_COMMAND = 10;
    const createTen = (i) =>
      host.threads.createThreads(router, {
        projectId: project.id,
        clientRequestId: `load-${i}`,
        threads: Array.from({ length: PER_COMMAND }, (_, k) => ({
          title: `load ${i}.${k}`,
          target: { providerInstanceId: "scripted" },
        })),
      });
    /** The same command; returns the log sequence of the message item it wrote. */
    const sendSequence = async (i) => {
      const before = host.store.lastSequence();
      await host.threads.send({
        threadId: threads[i % threads.length],
        text: `event ${i}`,
        mode: "queue",
        createdBy: "user",
        creationSource: "api",
      });
      const row = host.store
        .statement("SELECT sequence FROM events WHERE sequence > ? AND entity = 'item' ORDER BY sequence LIMIT 1")
        .get(before);
      return row.sequence;
    };
    // A payload of the size the stream sends, for the baseline.
    let sample = null;
    const probe = await openStream(url, token, (_id, data) => (sample ??= data));
    await sendSequence(0);
    while (sample === null) await nextTurn();
    probe.close();
    let loadSample = null;
    const loadProbe = await openStream(loadUrl, token, (_id, data) => (loadSample ??= data));
    await createTen(-1);
    while (loadSample === null) await nextTurn();
    loadProbe.close();

    // 1. Latency.
    const ours = await latency((onEvent) => openStream(url, token, onEvent), sendSequence);
    let baseSequence = 0;
    const floor = await latency(
      (onEvent) => openStream(broadcaster.url, null, onEvent),
      () => {
        baseSequence += 1;
        broadcaster.broadcast(baseSequence, "message", sample.replace(/"sequence":\d+/, `"sequence":${baseSequence}`));
        return baseSequence;
      },
    );

    // 2. Fan-out under load.
    const start = host.store.lastSequence();
    const clients = await startClients({ url: loadUrl, token, clients: CLIENTS });
    const load = await sampleRss(async () => {
      const pending = [];
      const seconds = await paced((i) => pending.push(createTen(i)), PER_COMMAND);
      await Promise.all(pending);
      const expected = host.store
        .statement("SELECT sequence FROM events WHERE sequence > ? AND entity = 'thread'")
        .all(start)
        .map((row) => row.sequence);
      return { seconds, expected, clients: await clients.finish(expected) };
    });
    const baseClients = await startClients({ url: broadcaster.url, token: null, clients: CLIENTS });
    const baseLoad = await sampleRss(async () => {
      const expected = [];
      const seconds = await paced(() => {
        for (let k = 0; k < PER_COMMAND; k += 1) {
          baseSequence += 1;
          expected.push(baseSequence);
          broadcaster.broadcast(
            baseSequence,
            "thread.created",
            loadSample.replace(/"sequence":\d+/, `"sequence":${baseSequence}`),
          );
        }
      }, PER_COMMAND);
      return { seconds, expected, clients: await baseClients.finish(expected) };
    });

    const events = load.result.expected.length;
    const met =
      percentile(ours, 50) <= LATENCY_GOAL_MS && load.result.clients.lost === 0 && load.result.clients.duplicated === 0;
    return {
      name: "event streams (GET /api/v1/events)",
      rows: [
        {
          metric: "delivery latency p50 (commit -> SSE client)",
          value: percentile(ours, 50),
          unit: "ms",
          baseline: percentile(floor, 50),
          ratio: percentile(ours, 50) / percentile(floor, 50),
          note: `${LATENCY_SAMPLES} queued messages, one at a time; goal <= ${LATENCY_GOAL_MS} ms; baseline: a bare http SSE broadcaster`,
        },
        {
          metric: "delivery latency p99",
          value: percentile(ours, 99),
          unit: "ms",
          baseline: percentile(floor, 99),
          ratio: percentile(ours, 99) / percentile(floor, 99),
        },
        {
          metric: `${CLIENTS} clients x ${RATE} events/s: events lost`,
          value: load.result.clients.lost,
          baseline: baseLoad.result.clients.lost,
          note: `${events} events in ${load.result.seconds.toFixed(1)} s to each client, counted by sequence against the log; duplicated ${load.result.clients.duplicated}, unexpected ${load.result.clients.unexpected}, cut off ${load.result.clients.cutOff}; goal 0`,
        },
        {
          metric: "server RSS growth under load (peak - before)",
          value: (load.peak - load.before) / MB,
          unit: "MB",
          baseline: (baseLoad.peak - baseLoad.before) / MB,
          note: `before ${(load.before / MB).toFixed(0)} MB, after ${(load.after / MB).toFixed(0)} MB; peak per quarter of the run ${load.quarters.map((rss) => (rss / MB).toFixed(0)).join(", ")} MB; each stream's backlog is bounded by server.eventStreamMaxBufferedBytes`,
        },
        {
          metric: "server event-loop delay p99 under load",
          value: load.loopDelayP99Ms,
          unit: "ms",
          baseline: baseLoad.loopDelayP99Ms,
          note: `max ${load.loopDelayMaxMs.toFixed(1)} ms (baseline ${baseLoad.loopDelayMaxMs.toFixed(1)} ms): commands and streams share the server's event loop`,
        },
        {
          metric: "events delivered per second (all clients)",
          value: (events * CLIENTS) / load.result.seconds,
          unit: "/s",
          baseline: (baseLoad.result.expected.length * CLIENTS) / baseLoad.result.seconds,
        },
        { metric: `goal (p50 <= ${LATENCY_GOAL_MS} ms, 0 lost)`, value: met ? "met" : "NOT MET" },
      ],
    };
  } finally {
    await broadcaster.close();
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
  process.argv[2] === "--sse-clients"
) {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  await runClients(JSON.parse((await lines.next()).value), lines);
}
