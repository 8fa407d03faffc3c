// The overhead of an OpenCode turn through Switchyard (host → plugin adapter → its own opencode
// serve → scripted model server) against OpenCode driven directly with @opencode-ai/sdk (the
// same binary, config and scripted model), side by side:
// - session start: the adapter's openSession (opencode serve listening, event stream open,
//   session created) vs spawning opencode serve and session.create by hand;
// - cold turn: createThread → run completed (a new thread opens a session: its server starts)
//   vs spawn + session.create + session.prompt;
// - warm turn: a follow-up in a thread whose session is open vs session.prompt on a live server.
// Iterations alternate between the two sides so machine drift hits both. Needs the built
// dists: `npx tsc -b core sdk plugins/opencode`.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createOpencodeClient } from "@opencode-ai/sdk/v2";
import { freeLoopbackPort } from "../sdk/dist/index.js";
import { ScriptedModelServer, createOpenCodeHome, startTestHost } from "../testkit/dist/index.js";
import openCodePlugin, { platformPackageNames } from "../plugins/opencode/dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const PLUGIN_DIR = join(here, "..", "plugins", "opencode");
const ITERATIONS = Number(process.env.OPENCODE_BENCH_ITERATIONS ?? 3);
const INSTANCE = "opencode-bench";

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

/** The native binary the plugin starts too. */
function openCodeBinary() {
  const require = createRequire(join(PLUGIN_DIR, "package.json"));
  for (const name of platformPackageNames()) {
    try {
      return join(dirname(require.resolve(`${name}/package.json`)), "bin", "opencode");
    } catch {
      // not this platform package
    }
  }
  throw new Error("no opencode platform package is installed");
}

/** OpenCode by hand: its server on a free port, the SDK client, and a way to stop it. */
async function startDirect(binary, home, config, dataRoot) {
  const port = await freeLoopbackPort();
  const child = spawn(binary, ["serve", "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd: home.cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...home.env,
      XDG_DATA_HOME: join(dataRoot, "data"),
      XDG_STATE_HOME: join(dataRoot, "state"),
      XDG_CACHE_HOME: join(dataRoot, "cache"),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_AUTOUPDATE: "1",
    },
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`opencode serve did not listen: ${out}`)), 60_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`opencode serve exited ${code}: ${out}`)));
  });
  const client = createOpencodeClient({ baseUrl: url, directory: home.cwd });
  return {
    client,
    async stop() {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // gone
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // gone
        }
      }, 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function directPrompt(client, sessionID, text, expected) {
  const result = await client.session.prompt({ sessionID, parts: [{ type: "text", text }] });
  const answer = (result.data?.parts ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
  if (!answer.includes(expected))
    throw new Error(`direct prompt answered ${JSON.stringify(answer)}: ${JSON.stringify(result.error ?? null)}`);
}

export default async function run() {
  if (!openCodePlugin.drivers.some((driver) => driver.driverKind === "opencode"))
    throw new Error("plugins/opencode/dist does not export the opencode driver");
  const server = await ScriptedModelServer.start();
  const home = await createOpenCodeHome({ modelServerUrl: server.url });
  const binary = openCodeBinary();
  const dataRoot = mkdtempSync(join(tmpdir(), "switchyard-opencode-bench-"));
  const directConfig = { ...home.config, permission: "allow" };
  const lab = await startTestHost({
    plugins: [PLUGIN_DIR],
    providers: [{ id: INSTANCE, driver: "opencode", options: { configFile: home.configPath }, environment: home.env }],
  });
  const adapter = lab.host.providers.get(INSTANCE).adapter;
  const start = { host: [], direct: [] };
  const cold = { host: [], direct: [] };
  const warm = { host: [], direct: [] };
  let live;
  try {
    // One untimed round each, so the db is migrated and caches are warm for both sides.
    await lab.waitForRun(lab.createThread(INSTANCE, "warm up @@reply ok", { runtimeMode: "full-access" }));
    const warmup = await startDirect(binary, home, directConfig, dataRoot);
    await warmup.stop();

    for (let i = 0; i < ITERATIONS; i++) {
      start.host.push(
        await timed(async () => {
          const session = await adapter.openSession({
            threadId: `bench-${i}`,
            providerSessionId: `bench-session-${i}`,
            cwd: lab.workspace,
            model: null,
            runtimeMode: "full-access",
            interactionMode: "default",
            resumeCursor: null,
            mcp: null,
            emit: () => undefined,
          });
          await session.close();
        }),
      );
      start.direct.push(
        await timed(async () => {
          const direct = await startDirect(binary, home, directConfig, dataRoot);
          await direct.client.session.create({ title: `bench ${i}` });
          await direct.stop();
        }),
      );
      const prompt = `bench ${i} @@reply ok-${i}`;
      let threadId;
      cold.host.push(
        await timed(async () => {
          threadId = lab.createThread(INSTANCE, prompt, { runtimeMode: "full-access" });
          const done = await lab.waitForRun(threadId);
          if (done.status !== "completed") throw new Error(`host run ${done.status}: ${JSON.stringify(done.error)}`);
        }),
      );
      cold.direct.push(
        await timed(async () => {
          const direct = await startDirect(binary, home, directConfig, dataRoot);
          const session = await direct.client.session.create({ title: `bench ${i}` });
          await directPrompt(direct.client, session.data.id, prompt, `ok-${i}`);
          await direct.stop();
        }),
      );
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
      if (live === undefined) {
        const direct = await startDirect(binary, home, directConfig, dataRoot);
        live = { direct, sessionID: (await direct.client.session.create({ title: "bench warm" })).data.id };
      }
      warm.direct.push(
        await timed(() =>
          directPrompt(live.direct.client, live.sessionID, `again ${i} @@reply again-${i}`, `again-${i}`),
        ),
      );
    }
  } finally {
    await live?.direct.stop();
    await lab.stop();
    await server.close();
    await home.cleanup();
    rmSync(dataRoot, { recursive: true, force: true });
  }
  const row = (metric, sample, note) => {
    const value = median(sample.host);
    const baseline = median(sample.direct);
    return { metric, value, unit: "ms", baseline, ratio: value / baseline, note };
  };
  return {
    name: "opencode-turn",
    rows: [
      row(
        "session start: adapter.openSession (opencode serve, events, session)",
        start,
        `median of ${ITERATIONS}; baseline: spawn opencode serve + session.create with the SDK`,
      ),
      row(
        "cold turn: createThread → run completed (a server starts)",
        cold,
        `median of ${ITERATIONS}; baseline: spawn + session.create + session.prompt`,
      ),
      row(
        "warm turn: send → run completed (session open)",
        warm,
        `median of ${ITERATIONS}; baseline: session.prompt on a live server`,
      ),
    ],
  };
}
