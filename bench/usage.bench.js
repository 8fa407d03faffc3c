// Usage bookkeeping per turn: a scripted turn that reports usage on a host that records it and
// checks the budgets around it (a root-thread token and cost budget, a price-table estimate),
// against the same turn on a host whose engine runs every reaction but the usage reaction.
// The hosts run side by side in this process, turns interleaved. Goal: < 5%.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSilentLogger, ENGINE_REACTIONS, SwitchyardHost, TOKENS } from "../core/dist/index.js";
import { UsageReaction } from "../core/dist/services/usage/usage-reaction.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../testkit/dist/scripted-provider/index.js";

const TURNS = 300;
const WARMUP = 30;

async function hostFor(withUsage, withBudgets = true) {
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-usage-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-usage-ws-"));
  const host = await SwitchyardHost.create({
    home,
    builtinPluginsDir: null,
    logger: createSilentLogger(),
    config: {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted" }],
      ...(withBudgets ? { budgets: { rootThread: { tokens: 1_000_000_000, costUsd: 1_000_000 } } } : {}),
      pricing: { models: { "bench-model": { input: 1, output: 2 } } },
    },
    // Every other reaction stays: the baseline differs by the usage bookkeeping alone.
    ...(withUsage
      ? {}
      : {
          overrides: (c) =>
            c.register(TOKENS.EngineReactions, {
              useFactory: (r) =>
                ENGINE_REACTIONS.filter((reaction) => reaction !== UsageReaction).map((reaction) =>
                  r.resolve(reaction),
                ),
            }),
        }),
  });
  await host.start();
  const project = await host.projects.add(workspace);
  const { thread } = await host.threads.createThread({
    projectId: project.id,
    providerInstanceId: "alpha",
    model: "bench-model",
    createdBy: "user",
    creationSource: "cli",
  });
  return { host, threadId: thread.id, dirs: [home, workspace] };
}

async function turn({ host, threadId }) {
  const start = performance.now();
  const { runId } = await host.threads.send({
    threadId,
    text: "@@usage in=1200 out=80 cached=300 @@reply ok",
    mode: "queue",
    createdBy: "user",
    creationSource: "cli",
  });
  const result = await host.threads.waitForRun({ threadId, runId, timeoutMs: 30_000 });
  if (result.run?.status !== "completed") throw new Error(`turn ended ${result.run?.status}`);
  return performance.now() - start;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// The bookkeeping itself, timed where it runs (inside the transaction that ends each turn), per
// store: on a loaded machine the side-by-side ratio carries the noise of two whole turns, this
// carries only its own.
const bookkeepingMs = new Map();
const onTurnEnded = UsageReaction.prototype.onTurnEnded;
// Keyed by the store the context writes to (one per host; private in TypeScript, there at run time).
UsageReaction.prototype.onTurnEnded = async function timed(ctx, attempt, usage) {
  const start = performance.now();
  try {
    return await onTurnEnded.call(this, ctx, attempt, usage);
  } finally {
    const times = bookkeepingMs.get(ctx.store) ?? [];
    times.push(performance.now() - start);
    bookkeepingMs.set(ctx.store, times);
  }
};

export default async function run() {
  const ours = await hostFor(true);
  const unbudgeted = await hostFor(true, false);
  const bare = await hostFor(false);
  try {
    for (let i = 0; i < WARMUP; i += 1) {
      await turn(ours);
      await turn(unbudgeted);
      await turn(bare);
    }
    const oursTimes = [];
    const unbudgetedTimes = [];
    const bareTimes = [];
    // The order rotates, so no host always runs right after another (the hosts share the process).
    const sides = [
      [ours, oursTimes],
      [unbudgeted, unbudgetedTimes],
      [bare, bareTimes],
    ];
    for (let i = 0; i < TURNS; i += 1) {
      for (let k = 0; k < sides.length; k += 1) {
        const [side, times] = sides[(i + k) % sides.length];
        times.push(await turn(side));
      }
    }
    const recorded = ours.host.store.count("turnUsage", "thread_id = ?", [ours.threadId]);
    if (recorded !== TURNS + WARMUP) throw new Error(`expected ${TURNS + WARMUP} usage records, found ${recorded}`);
    const bookkeeping = median(bookkeepingMs.get(ours.host.store).slice(WARMUP));
    const unbudgetedBookkeeping = median(bookkeepingMs.get(unbudgeted.host.store).slice(WARMUP));
    const p50 = median(oursTimes);
    const unbudgetedP50 = median(unbudgetedTimes);
    const baseline = median(bareTimes);
    return {
      name: "usage bookkeeping",
      rows: [
        {
          metric: "scripted turn with usage records and budget checks, p50",
          value: p50,
          unit: "ms",
          baseline,
          ratio: p50 / baseline,
          note: "baseline: the same turn, every engine reaction but usage; goal < 1.05x",
        },
        { metric: "overhead per turn, p50", value: p50 - baseline, unit: "ms" },
        {
          metric: "usage bookkeeping in the turn's transaction (record, running totals, budget checks), p50",
          value: bookkeeping,
          unit: "ms",
          baseline,
          ratio: bookkeeping / baseline,
          note: "share of a scripted turn; goal < 0.05",
        },
        { metric: "usage bookkeeping, no budgets configured, p50", value: unbudgetedBookkeeping, unit: "ms" },
        {
          metric: "scripted turn with usage records, no budgets configured, p50",
          value: unbudgetedP50,
          unit: "ms",
          baseline,
          ratio: unbudgetedP50 / baseline,
        },
      ],
    };
  } finally {
    for (const h of [ours, unbudgeted, bare]) await h.host.stop();
    for (const dir of [...ours.dirs, ...unbudgeted.dirs, ...bare.dirs]) rmSync(dir, { recursive: true, force: true });
  }
}
