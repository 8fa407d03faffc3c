// The store's SQL traffic per delegation: a parent thread delegates one task (delegate_task, mode
// "wait") to a scripted child that replies, and its run completes; one delegation at a time, so
// each one's statements are its own. Counted from every statement the store's connection ran
// (the Store's `onStatement` option, better-sqlite3's `verbose`: append's statements and the
// transaction helper's BEGIN/SAVEPOINT/COMMIT included; not the WAL checkpoint worker's
// connection) by core's StoreTrafficCounter, from the first measured delegation's thread
// creation to the last one's outbox being idle, divided by the delegations. The figures are
// counts, so the machine's load does not move them: no baseline. They were issue 33 item 4's
// "before" figures (bench/README.md lists its steps since); its goals are statements <= 150 and
// commits <= 8 per delegation.
// STORE_TRAFFIC_DELEGATIONS (default 10) sets how many are counted, after 2 uncounted ones.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

const WARMUP = 2;
const DELEGATIONS = Number(process.env.STORE_TRAFFIC_DELEGATIONS ?? 10);
const STATEMENTS_GOAL = 150;
const COMMITS_GOAL = 8;

/** Further delegations a parent run makes, one after another, for the marginal rows. */
const FURTHER = 2;

function delegatingPrompt(tag, count) {
  const call = (i) =>
    `@@tool delegate_task ${JSON.stringify({ task: `@@reply ${tag} child ${i}`, target: { providerInstanceId: "child" }, mode: "wait" })}`;
  return [...Array.from({ length: count }, (_, i) => call(i)), `@@reply ${tag} done`].join("\n");
}

export default async function run() {
  const { createSilentLogger, pathsFor, startServer, SwitchyardHost, TOKENS } = await import("../core/dist/index.js");
  const { Store } = await import("../core/dist/store/store.js");
  const { StoreTrafficCounter } = await import("../core/dist/store/store-traffic.js");
  const { instanceCachingFactory } = await import("tsyringe");
  const { SCRIPTED_PROVIDER_PLUGIN_DIR } = await import("../testkit/dist/scripted-provider/index.js");
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-traffic-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  const databaseFile = pathsFor(home).databaseFile;
  const counter = new StoreTrafficCounter();
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
    },
    overrides: (container) =>
      container.register(TOKENS.Store, {
        useFactory: instanceCachingFactory(() => new Store(databaseFile, { onStatement: counter.observe })),
      }),
  });
  const server = await startServer(host, { port: 0 });
  // The idle check reads through a connection of its own, so its statements are not counted.
  const observer = new Database(databaseFile, { readonly: true });
  const dueEffects = observer
    .prepare("SELECT COUNT(*) FROM outbox WHERE status IN ('pending', 'claimed') AND available_at <= ?")
    .pluck();
  const outboxIdle = async () => {
    for (const deadline = Date.now() + 10_000; dueEffects.get(Date.now()) > 0;) {
      if (Date.now() > deadline) throw new Error("the outbox did not go idle within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  try {
    const project = await host.projects.add(workspace);
    const delegate = async (tag, count = 1) => {
      const { thread } = await host.threads.createThread({
        projectId: project.id,
        providerInstanceId: "parent",
        prompt: delegatingPrompt(tag, count),
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      });
      const result = await host.threads.waitForRun({ threadId: thread.id, timeoutMs: 60_000 });
      if (result.run?.status !== "completed")
        throw new Error(`delegation ${tag}: the parent's run ended ${result.run?.status} ${result.run?.error ?? ""}`);
      await outboxIdle();
    };
    for (let i = 0; i < WARMUP; i += 1) await delegate(`warmup-${i}`);
    counter.reset();
    for (let i = 0; i < DELEGATIONS; i += 1) await delegate(`measured-${i}`);
    const traffic = counter.snapshot();
    // The same parents delegating 1 + FURTHER tasks in one run: the difference is what a further
    // delegation costs once the parent's run, session and MCP connection exist.
    counter.reset();
    for (let i = 0; i < DELEGATIONS; i += 1) await delegate(`further-${i}`, 1 + FURTHER);
    const longer = counter.snapshot();
    const further = (key) => (longer[key] - traffic[key]) / DELEGATIONS / FURTHER;
    const per = (n) => n / DELEGATIONS;
    const sample = `${DELEGATIONS} delegations one at a time after ${WARMUP} uncounted, scripted parent and child`;
    return {
      name: "store traffic per delegation",
      rows: [
        {
          metric: "SQL statements per delegation",
          value: per(traffic.statements),
          unit: "",
          note: `every statement the store's connection ran, BEGIN/COMMIT included; goal <= ${STATEMENTS_GOAL} (issue 33); ${sample}`,
        },
        {
          metric: "statements inside transactions per delegation",
          value: per(traffic.inTransactions),
          unit: "",
          note: "between a BEGIN and its COMMIT/ROLLBACK, not counting those two",
        },
        {
          metric: "commits per delegation",
          value: per(traffic.commits),
          unit: "",
          note: `every transaction, with or without events (delegation-scale's commits row counts those with events); goal <= ${COMMITS_GOAL} (issue 33); rollbacks ${traffic.rollbacks}`,
        },
        {
          metric: "largest transaction",
          value: traffic.largestTransaction,
          unit: "statements",
          note: "the most statements inside one transaction over the counted delegations",
        },
        {
          metric: "repeated identical reads inside a transaction, per delegation",
          value: per(traffic.repeatedReads),
          unit: "",
          note: "a SELECT with the same SQL and values as an earlier one of the same transaction: what an identity map saves",
        },
        {
          metric: "SQL statements per further delegation of the same parent run",
          value: further("statements"),
          unit: "",
          note: `marginal: parents delegating ${1 + FURTHER} tasks in one run, less the one-delegation parents, per extra task; inside transactions ${further("inTransactions").toFixed(1)}, repeated reads ${further("repeatedReads").toFixed(1)}`,
        },
        {
          metric: "commits per further delegation of the same parent run",
          value: further("commits"),
          unit: "",
          note: "marginal, as above (delegation-scale's parents make 3 delegations per run)",
        },
      ],
    };
  } finally {
    observer.close();
    await server.close();
    await host.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}
