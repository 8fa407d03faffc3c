// Delegation at scale: 200 parent threads delegate at once (delegate_task, mode "wait", each to
// a zero-latency scripted child), so 200 delegated tasks are in flight all the time, against a
// store that already holds 1,000 threads, and again against one holding 10,000. The threads
// already there were made the same way (parents that delegated, children that answered), so
// their runs, items, tasks and events are real too.
//
// Each size runs in its own child process (this file with --scale-worker <threads>), so its RSS
// is its own; the two sizes alternate (1k, 10k, 1k, 10k) so machine load falls on both alike.
// Figures per size: delegations per second, CPU per delegation (the process's user + system
// time over the measured phase), the peak RSS sampled while it ran, and, load-independent, the
// commits (transactions that wrote events) and events per delegation. After it, a page of
// t3_thread_list over the project (all of the store's threads) through a real MCP client: a
// call's cost should be its page's, not the project's.
//
// Goals (issue 22): >= 300 delegations/s at 1,000 threads on 2 cores, RSS <= 250 MB, and CPU
// per delegation at 10,000 threads <= 1.2 x that at 1,000.
// SCALE_ROUNDS (default 2) sets how many times each size runs; SCALE_SIZES ("1000,10000").
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PARENTS = 200;
/** Delegations each parent makes in one turn during the measured phase (one at a time: 200 in flight). */
const MEASURED_PER_PARENT = 3;
/** Delegations per parent while filling the store (11 threads per parent). */
const FILL_PER_PARENT = 10;
const SIZES = (process.env.SCALE_SIZES ?? "1000,10000").split(",").map(Number);
const ROUNDS = Number(process.env.SCALE_ROUNDS ?? 2);

function delegatingPrompt(count, tag) {
  const call = (i) =>
    `@@tool delegate_task ${JSON.stringify({ task: `@@reply ${tag}-${i}`, target: { providerInstanceId: "child" }, mode: "wait" })}`;
  return [...Array.from({ length: count }, (_, i) => call(i)), `@@reply ${tag} done`].join("\n");
}

// ---- one size (the child process) -----------------------------------------------------------

async function runSize(threads) {
  const { createSilentLogger, McpSessionRegistry, startServer, SwitchyardHost } = await import("../core/dist/index.js");
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const { SCRIPTED_PROVIDER_PLUGIN_DIR } = await import("../testkit/dist/scripted-provider/index.js");
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-scale-"));
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
  const server = await startServer(host, { port: 0 });
  try {
    const project = await host.projects.add(workspace);
    const wave = async (count, perParent, tag) => {
      const ids = [];
      for (let i = 0; i < count; i += 1) {
        const { thread } = await host.threads.createThread({
          projectId: project.id,
          providerInstanceId: "parent",
          prompt: delegatingPrompt(perParent, `${tag}-${i}`),
          runtimeMode: "full-access",
          createdBy: "user",
          creationSource: "cli",
        });
        ids.push(thread.id);
      }
      const results = await Promise.all(
        ids.map((threadId) => host.threads.waitForRun({ threadId, timeoutMs: 600_000 })),
      );
      const failed = results.filter((r) => r.run?.status !== "completed");
      if (failed.length > 0)
        throw new Error(
          `${failed.length} parent runs did not complete (first: ${failed[0].run?.status} ${failed[0].run?.error ?? ""})`,
        );
    };
    const threadCount = () => host.engine.store.count("thread", "1 = 1", []);
    // Fill: waves of parents that delegate FILL_PER_PARENT tasks each, then a last partial wave.
    for (let wave_ = 0; threadCount() + PARENTS * (FILL_PER_PARENT + 1) <= threads; wave_ += 1)
      await wave(PARENTS, FILL_PER_PARENT, `fill${wave_}`);
    const missing = threads - threadCount();
    if (missing > 0) await wave(Math.ceil(missing / (FILL_PER_PARENT + 1)), FILL_PER_PARENT, "fill-last");
    const before = threadCount();

    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 25);
    // Load-independent figures: commits that wrote events, and the events they wrote.
    let commits = 0;
    let events = 0;
    const stopCounting = host.engine.onEvents((batch) => {
      commits += 1;
      events += batch.length;
    });
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    await wave(PARENTS, MEASURED_PER_PARENT, "measured");
    const elapsedMs = performance.now() - start;
    const cpu = process.cpuUsage(cpuBefore);
    stopCounting();
    clearInterval(sampler);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const delegations = PARENTS * MEASURED_PER_PARENT;

    const token = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 600_000, capabilities: ["orchestration:operate"] }).token;
    const client = new Client({ name: "bench", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const listTimes = [];
    for (let i = 0; i < 60; i += 1) {
      const listStart = performance.now();
      const listed = await client.callTool({ name: "t3_thread_list", arguments: { projectId: project.id } });
      if (listed.isError || listed.structuredContent.threads.length !== 20)
        throw new Error(`t3_thread_list: ${JSON.stringify(listed).slice(0, 300)}`);
      if (i >= 10) listTimes.push(performance.now() - listStart);
    }
    await client.close();
    listTimes.sort((a, b) => a - b);
    return {
      listMs: listTimes[Math.floor(listTimes.length / 2)],
      threads: before,
      delegations,
      perSecond: delegations / (elapsedMs / 1000),
      cpuPerDelegationMs: (cpu.user + cpu.system) / 1000 / delegations,
      commitsPerDelegation: commits / delegations,
      eventsPerDelegation: events / delegations,
      peakRssMb: peakRss / 1024 / 1024,
    };
  } finally {
    await server.close();
    await host.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function inChild(threads) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--scale-worker", String(threads)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`scale worker (${threads} threads) exited ${code}: ${out.slice(0, 500)}`);
  return JSON.parse(out);
}

// ---- the bench ------------------------------------------------------------------------------

export default async function run() {
  const bySize = new Map(SIZES.map((size) => [size, []]));
  for (let round = 0; round < ROUNDS; round += 1) for (const size of SIZES) bySize.get(size).push(await inChild(size));
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
  const summary = (size, pick) => median(bySize.get(size).map(pick));
  const [small, large] = SIZES;
  const rows = [];
  for (const size of SIZES) {
    rows.push({
      metric: `delegations per second, ${size} threads`,
      value: summary(size, (r) => r.perSecond),
      unit: "/s",
      note: `${PARENTS} concurrent delegated tasks (delegate_task wait), zero-latency scripted providers; goal >= 300/s; rounds ${bySize
        .get(size)
        .map((r) => r.perSecond.toFixed(0))
        .join(", ")}`,
    });
    rows.push({
      metric: `peak RSS, ${size} threads`,
      value: summary(size, (r) => r.peakRssMb),
      unit: "MB",
      note: "goal <= 250 MB",
    });
  }
  rows.push({
    metric: `commits per delegation, ${small} threads`,
    value: summary(small, (r) => r.commitsPerDelegation),
    unit: "",
    note: `context, load-independent: transactions that wrote events (BEGIN/COMMIT is a large share of a delegation's CPU); events per delegation ${summary(small, (r) => r.eventsPerDelegation).toFixed(1)}`,
  });
  rows.push({
    metric: `t3_thread_list (a page of 20) p50, ${large} vs ${small} threads`,
    value: summary(large, (r) => r.listMs),
    unit: "ms",
    baseline: summary(small, (r) => r.listMs),
    ratio: summary(large, (r) => r.listMs) / summary(small, (r) => r.listMs),
    note: `baseline: the same call over ${small} threads (one project holds them all); a call costs its page; goal ratio <= 1.2; n=50 per round`,
  });
  rows.push({
    metric: `CPU per delegation, ${large} vs ${small} threads`,
    value: summary(large, (r) => r.cpuPerDelegationMs),
    unit: "ms",
    baseline: summary(small, (r) => r.cpuPerDelegationMs),
    ratio: summary(large, (r) => r.cpuPerDelegationMs) / summary(small, (r) => r.cpuPerDelegationMs),
    note: `baseline: the same load over ${small} threads; goal ratio <= 1.2`,
  });
  return { name: `Delegation at scale (${PARENTS} concurrent tasks)`, rows };
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(process.argv[1]).href &&
  process.argv[2] === "--scale-worker"
) {
  process.stdout.write(JSON.stringify(await runSize(Number(process.argv[3]))));
}
