// One load-generating process: N real MCP SDK clients, each calling read tools back to back
// for a fixed time once told to go. Runs apart from the suite's own process so its event loop
// does not sit between the clients and the server they measure.
//
// argv: <mcpUrl> <token> <clients> <durationMs> <projectId> <threadIds as JSON>
// stdout: `ready` once every client is connected, then one JSON line with the results.
import { createInterface } from "node:readline";
import { callTool, connect } from "./mcp.js";

const [url, token, clientCount, durationMs, projectId, threadIdsJson] = process.argv.slice(2);
const threadIds = JSON.parse(threadIdsJson);
const latencies = [];
// A count and a few distinct samples: a dead server fails fast, and every failure is not kept.
let errorCount = 0;
const errorSamples = new Set();
const errors = {
  push(message) {
    errorCount += 1;
    if (errorSamples.size < 20) errorSamples.add(message);
  },
};

const calls = [
  ["t3_thread_list", () => ({ projectId })],
  ["t3_thread_read", (i) => ({ threadId: threadIds[i % threadIds.length] })],
  ["orchestrator_capabilities", () => ({})],
];

const connected = await Promise.all(
  Array.from({ length: Number(clientCount) }, async (_, index) => {
    try {
      return await connect(url, token, { name: `load-${index}` });
    } catch (error) {
      errors.push(`connect: ${error.message}`);
      return null;
    }
  }),
);
process.stdout.write("ready\n");
await new Promise((resolve) => createInterface({ input: process.stdin }).once("line", resolve));

const deadline = Date.now() + Number(durationMs);
await Promise.all(
  connected.map(async (client, index) => {
    if (client === null) return;
    for (let i = index; Date.now() < deadline; i += 1) {
      const [name, args] = calls[i % calls.length];
      const started = performance.now();
      try {
        const outcome = await callTool(client, name, args(i), { timeoutMs: 60_000 });
        latencies.push(performance.now() - started);
        if (!outcome.ok) errors.push(`${name}: ${outcome.code}: ${outcome.message}`);
      } catch (error) {
        latencies.push(performance.now() - started);
        errors.push(`${name}: ${error.message}${error.cause ? ` (${error.cause.code ?? error.cause.message})` : ""}`);
      }
    }
    await client.close().catch(() => undefined);
  }),
);
// The line runs to hundreds of kilobytes at a fast server's call rate: exit only once it is
// written whole (an exit right after a pipe write this size once cut it, and the scenario
// failed on JSON it could not parse).
process.stdout.write(
  `${JSON.stringify({ latencies: latencies.map((ms) => Math.round(ms * 100) / 100), errorCount, errorSamples: [...errorSamples].slice(0, 5) })}\n`,
  () => process.exit(0),
);
