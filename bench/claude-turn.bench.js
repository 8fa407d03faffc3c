// The overhead of a Claude turn through Switchyard (host → plugin adapter → Agent SDK → claude →
// scripted model server) against the SDK's own query() driven directly with the same scripted
// model and the same MCP server entry (the Switchyard endpoint, always loaded, over initialize),
// side by side:
// - cold: createThread → run completed (a new thread opens a session: claude starts and connects
//   to the MCP endpoint) vs a new streaming-input query() → its first result;
// - warm: a follow-up in that thread, whose session is open, vs one more message pushed into the
//   query just opened → its result.
// Iterations alternate between the two sides so machine drift hits both. Needs the built dists:
// `npx tsc -b core sdk plugins/claude`. Goal: ≤1.1× cold, ≤1.2× warm.
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ScriptedModelServer, createClaudeHome, startTestHost } from "../testkit/dist/index.js";
import claudePlugin, { findClaudeSdk, loadClaudeSdk } from "../plugins/claude/dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const PLUGIN_DIR = join(here, "..", "plugins", "claude");
const ITERATIONS = Number(process.env.CLAUDE_BENCH_ITERATIONS ?? 5);
const INSTANCE = "claude-bench";

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function timed(fn) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** A streaming-input query the bench drives itself, with the plugin's MCP entry and mode. */
function directQuery(sdk, home, mcpUrl, token) {
  const queue = [];
  let wake = null;
  let ended = false;
  const prompt = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (queue.length > 0) yield queue.shift();
        else if (ended) return;
        else await new Promise((resolve) => (wake = resolve));
      }
    },
  };
  const query = sdk.query({
    prompt,
    options: {
      cwd: home.cwd,
      env: { ...process.env, ...home.env, CLAUDE_CONFIG_DIR: home.home },
      includePartialMessages: true,
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
      mcpServers: {
        switchyard: { type: "http", url: mcpUrl, headers: { Authorization: `Bearer ${token}` }, alwaysLoad: true },
      },
      allowedTools: ["mcp__switchyard__*"],
      mcpServersDelivery: "initialize",
    },
  });
  const iterator = query[Symbol.asyncIterator]();
  return {
    async turn(text) {
      queue.push({
        type: "user",
        message: { role: "user", content: text },
        parent_tool_use_id: null,
        uuid: randomUUID(),
      });
      wake?.();
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) throw new Error("the direct query ended early");
        if (value.type === "result") {
          if (value.subtype !== "success" || value.is_error)
            throw new Error(`direct turn ended ${value.subtype}: ${value.result ?? ""}`);
          return value.result;
        }
      }
    },
    close() {
      ended = true;
      wake?.();
      query.close();
    },
  };
}

export default async function run() {
  if (!claudePlugin.drivers.some((driver) => driver.driverKind === "claude"))
    throw new Error("plugins/claude/dist does not export the claude driver");
  // The SDK the plugin would run (it is not the plugin's dependency; the search needs no process helpers for a library).
  const sdk = await loadClaudeSdk(await findClaudeSdk({}, process.env));
  const server = await ScriptedModelServer.start();
  const home = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake", toolSearch: true });
  const lab = await startTestHost({
    plugins: [PLUGIN_DIR],
    providers: [{ id: INSTANCE, driver: "claude", options: {}, homePath: home.home, environment: home.env }],
  });
  // The direct side connects to the same endpoint with a client token of its own.
  const token = lab.issueClientToken();
  const mcpUrl = lab.server.mcpUrl;
  const cold = { host: [], direct: [] };
  const warm = { host: [], direct: [] };
  const open = [];
  try {
    // One untimed round each, so module caches and claude's own caches are warm for both sides.
    await lab.waitForRun(lab.createThread(INSTANCE, "warm up @@reply ok", { runtimeMode: "full-access" }));
    const warmUp = directQuery(sdk, home, mcpUrl, token);
    await warmUp.turn("warm up @@reply ok");
    warmUp.close();

    for (let i = 0; i < ITERATIONS; i++) {
      const prompt = `bench ${i} @@reply ok-${i}`;
      let threadId;
      cold.host.push(
        await timed(async () => {
          threadId = lab.createThread(INSTANCE, prompt, { runtimeMode: "full-access" });
          const done = await lab.waitForRun(threadId);
          if (done.status !== "completed" || done.summary !== `ok-${i}`)
            throw new Error(`host run ${done.status}: ${JSON.stringify(done.error)}`);
        }),
      );
      let direct;
      cold.direct.push(
        await timed(async () => {
          direct = directQuery(sdk, home, mcpUrl, token);
          const text = await direct.turn(prompt);
          if (text !== `ok-${i}`) throw new Error(`direct turn said ${text}`);
        }),
      );
      open.push(direct);
      // Warm: the thread's session is still open (the host closes idle sessions after 15 min).
      warm.host.push(
        await timed(async () => {
          const sent = await lab.host.threads.send({
            threadId,
            text: `again ${i} @@reply again-${i}`,
            mode: "auto",
            createdBy: "user",
            creationSource: "cli",
          });
          const done = await lab.waitForRun(threadId, { runId: sent.runId });
          if (done.status !== "completed") throw new Error(`host warm run ${done.status}`);
        }),
      );
      // The same second turn on the query this iteration opened, as the host's is.
      warm.direct.push(
        await timed(async () => {
          const text = await direct.turn(`again ${i} @@reply again-${i}`);
          if (text !== `again-${i}`) throw new Error(`direct warm turn said ${text}`);
        }),
      );
      // Both sides keep the machine from filling up with idle claude processes.
      direct.close();
      await lab.host.sessions.close(threadId, "bench");
    }
  } finally {
    for (const query of open) query?.close();
    await lab.stop();
    await server.close();
    await home.cleanup();
  }
  const row = (metric, sample, note) => {
    const value = median(sample.host);
    const baseline = median(sample.direct);
    return { metric, value, unit: "ms", baseline, ratio: value / baseline, note };
  };
  return {
    name: "claude-turn",
    rows: [
      row(
        "cold turn: createThread → run completed (claude starts)",
        cold,
        `median of ${ITERATIONS}; baseline: a new query() → its first result, same MCP entry; goal ≤1.1x`,
      ),
      row(
        "warm turn: send → run completed (session open)",
        warm,
        `median of ${ITERATIONS}; baseline: a second message into the query just opened; goal ≤1.2x`,
      ),
    ],
  };
}
