// The overhead of a Pi turn through Switchyard (host → plugin adapter → pi --mode rpc →
// scripted model server) against Pi alone with the same scripted model, side by side:
// - cold: createThread → run completed (a new thread opens a session: pi starts) vs `pi -p`;
// - warm: a follow-up in a thread whose session is open vs a `prompt` → `agent_end` on a pi
//   --mode rpc process the bench drives itself (issue 22's row: `pi` with the home's model only);
// - warm, same launch: the same follow-up vs a `prompt` → `agent_end` on a pi started exactly as
//   the plugin started the host's (its argv and environment, seen at spawn: the Switchyard
//   extension, whose 19 MCP tools make every model request ~6x larger, and a session folder),
//   so the ratio is what Switchyard adds around Pi rather than what Pi does with the tools.
// Iterations alternate between the two sides so machine drift hits both. The warm rows run on
// one thread whose session stays open and on rpc processes the bench keeps, turn after turn,
// so each warm turn on either side is its process's n-th (until December 2026 the host's warm
// turn was always the first after a new pi had started, against an rpc process that had
// answered i prompts already, which charged pi's own second-turn warm-up to the host). Needs
// the built dists: `npx tsc -b core sdk plugins/pi`.
import childProcess from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  ScriptedModelServer,
  createPiHome,
  killAllHarnessProcesses,
  resolveHarnessBinary,
  runHarness,
  spawnHarness,
  startTestHost,
} from "../testkit/dist/index.js";
import piPlugin from "../plugins/pi/dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const PLUGIN_DIR = join(here, "..", "plugins", "pi");
const ITERATIONS = Number(process.env.PI_BENCH_ITERATIONS ?? 5);
/** Warm turns per side: ~10-20 ms each, so a sample large enough for a stable median is cheap. */
const WARM_ITERATIONS = Number(process.env.PI_BENCH_WARM_ITERATIONS ?? 30);
const INSTANCE = "pi-bench";

/** Every process spawned in this process, so the plugin's own pi launch can be repeated. */
const spawned = [];
const realSpawn = childProcess.spawn;
childProcess.spawn = function recordingSpawn(command, args, options) {
  spawned.push({ command, args: [...(args ?? [])], env: options?.env });
  return realSpawn.apply(this, arguments);
};
syncBuiltinESMExports();

/** The plugin's launch of pi, with a fresh session folder and no session file to resume. */
function samePiLaunch(sessionDir) {
  const launch = spawned.find((entry) => entry.args.includes("--mode") && entry.args.includes("--extension"));
  if (launch === undefined) throw new Error("the plugin's pi launch was not seen");
  const args = [];
  for (let i = 0; i < launch.args.length; i += 1) {
    if (launch.args[i] === "--session") i += 1;
    else if (launch.args[i] === "--session-dir") {
      args.push("--session-dir", sessionDir);
      i += 1;
    } else args.push(launch.args[i]);
  }
  return {
    binary: { name: "pi", packageName: "pi", version: "same-launch", env: {}, command: launch.command, args: [] },
    args,
    env: launch.env ?? process.env,
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** One prompt → agent_end on an rpc process the bench drives, in ms. */
async function promptOnce(rpc, id, message) {
  return timed(async () => {
    const end = rpc.waitForJsonLine((e) => e.type === "agent_end", 60_000);
    rpc.writeLine({ id, type: "prompt", message });
    await end;
  });
}

async function timed(fn) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

export default async function run() {
  if (!piPlugin.drivers.some((driver) => driver.driverKind === "pi"))
    throw new Error("plugins/pi/dist does not export the pi driver");
  const server = await ScriptedModelServer.start();
  const home = await createPiHome({ modelServerUrl: server.url });
  const pi = resolveHarnessBinary("pi", { searchFrom: here });
  const lab = await startTestHost({
    plugins: [PLUGIN_DIR],
    providers: [{ id: INSTANCE, driver: "pi", options: {}, homePath: home.home, environment: home.env }],
  });
  const cold = { host: [], direct: [] };
  const warm = { host: [], direct: [] };
  const warmSame = { host: [], direct: [] };
  const sameSessionDir = mkdtempSync(join(tmpdir(), "switchyard-bench-pi-sessions-"));
  let rpc;
  let sameRpc;
  try {
    // One untimed round each, so module caches and the extension file are warm for both sides.
    await lab.waitForRun(lab.createThread(INSTANCE, "warm up @@reply ok", { runtimeMode: "full-access" }));
    await runHarness(pi, [...home.args, "--no-session", "-p", "warm up @@reply ok"], { cwd: home.cwd, env: home.env });

    for (let i = 0; i < ITERATIONS; i++) {
      const prompt = `bench ${i} @@reply ok-${i}`;
      cold.host.push(
        await timed(async () => {
          const done = await lab.waitForRun(lab.createThread(INSTANCE, prompt, { runtimeMode: "full-access" }));
          if (done.status !== "completed") throw new Error(`host run ${done.status}: ${JSON.stringify(done.error)}`);
        }),
      );
      cold.direct.push(
        await timed(async () => {
          const exit = await runHarness(pi, [...home.args, "--no-session", "-p", prompt], {
            cwd: home.cwd,
            env: home.env,
          });
          if (exit.code !== 0 || !exit.stdout.includes(`ok-${i}`)) throw new Error(`pi -p failed: ${exit.stderr}`);
        }),
      );
    }

    // Warm: one thread whose session stays open (the host closes idle sessions after 15 min),
    // and the two rpc processes, each given one untimed turn first.
    const threadId = lab.createThread(INSTANCE, "warm thread @@reply ready", { runtimeMode: "full-access" });
    if ((await lab.waitForRun(threadId)).status !== "completed")
      throw new Error("the warm thread's first run did not complete");
    const sendOnce = (text) =>
      timed(async () => {
        const sent = await lab.host.threads.send({
          threadId,
          text,
          mode: "auto",
          createdBy: "user",
          creationSource: "cli",
        });
        const done = await lab.waitForRun(threadId, { runId: sent.runId });
        if (done.status !== "completed") throw new Error(`host warm run ${done.status}`);
      });
    await sendOnce("first warm @@reply ok");
    rpc = spawnHarness(pi, [...home.args, "--mode", "rpc", "--no-session"], {
      cwd: home.cwd,
      env: home.env,
      stdin: "pipe",
    });
    const ready = rpc.waitForJsonLine((e) => e.id === "ready", 60_000);
    rpc.writeLine({ id: "ready", type: "get_state" });
    await ready;
    await promptOnce(rpc, "first", "first warm @@reply ok");
    const same = samePiLaunch(sameSessionDir);
    sameRpc = spawnHarness(same.binary, same.args, { cwd: home.cwd, env: same.env, stdin: "pipe" });
    const sameReady = sameRpc.waitForJsonLine((e) => e.id === "ready", 60_000);
    sameRpc.writeLine({ id: "ready", type: "get_state" });
    await sameReady;
    await promptOnce(sameRpc, "first-same", "first warm @@reply ok");
    for (let i = 0; i < WARM_ITERATIONS; i++) {
      warm.host.push(await sendOnce(`again ${i} @@reply again-${i}`));
      warm.direct.push(await promptOnce(rpc, `p${i}`, `again ${i} @@reply again-${i}`));
      // The same launch, and a host turn beside it (alternating keeps drift on both sides).
      warmSame.host.push(await sendOnce(`same ${i} @@reply same-${i}`));
      warmSame.direct.push(await promptOnce(sameRpc, `s${i}`, `same ${i} @@reply same-${i}`));
    }
  } finally {
    rpc?.closeStdin();
    sameRpc?.closeStdin();
    await killAllHarnessProcesses();
    await lab.stop();
    await server.close();
    await home.cleanup();
    rmSync(sameSessionDir, { recursive: true, force: true });
  }
  const row = (metric, sample, note) => {
    const value = median(sample.host);
    const baseline = median(sample.direct);
    return { metric, value, unit: "ms", baseline, ratio: value / baseline, note };
  };
  return {
    name: "pi-turn",
    rows: [
      row(
        "cold turn: createThread → run completed (pi starts)",
        cold,
        `median of ${ITERATIONS}; baseline: pi -p with the same scripted model`,
      ),
      row(
        "warm Pi turn through the plugin vs driving pi --mode rpc directly (send → run completed, session open)",
        warm,
        `median of ${WARM_ITERATIONS}; goal <= 1.1x; baseline: prompt → agent_end on a pi --mode rpc --no-session the bench drives`,
      ),
      row(
        "warm Pi turn through the plugin vs the same pi launch driven directly",
        warmSame,
        `median of ${WARM_ITERATIONS}; baseline: prompt → agent_end on a pi started with the plugin's own argv and environment (extension, MCP tools, session folder)`,
      ),
    ],
  };
}
