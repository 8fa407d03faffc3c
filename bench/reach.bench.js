// Delegation across environments against local delegation: a scripted parent on A runs one
// delegate_task(wait) to a scripted child that answers at once, either on A itself (the
// baseline) or on B, another Switchyard server on another loopback address linked to A with a
// grant (the call forwarded through A's link client, B's grant checks, B's foreign task and its
// outbox). Interleaved (one of each per round), so load on this shared machine weighs on both
// alike. The goal is a ratio of at most 1.5x on loopback.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSilentLogger, startServer, SwitchyardHost } from "../core/dist/index.js";
import { ReachGrants } from "../core/dist/services/reach/reach-grants.js";
import { ReachLinks } from "../core/dist/services/reach/reach-links.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../testkit/dist/scripted-provider/index.js";

const ROUNDS = 30;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function environment(name, address) {
  const home = mkdtempSync(join(tmpdir(), `switchyard-bench-reach-${name}-`));
  const workspace = mkdtempSync(join(tmpdir(), `switchyard-bench-reach-${name}-ws-`));
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
  const server = await startServer(host, { port: 0, listen: { host: address } });
  const project = await host.projects.add(workspace);
  return {
    host,
    server,
    project,
    close: async () => {
      await server.close();
      await host.stop();
      rmSync(home, { recursive: true, force: true });
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

export default async function run() {
  const a = await environment("a", "127.0.0.2");
  const b = await environment("b", "127.0.0.3");
  try {
    const issued = b.host.container
      .resolve(ReachGrants)
      .issue({ for: "a", projects: "*", verbs: ["delegate", "read"], maxRuntimeMode: "full-access", ttlMs: 3_600_000 });
    a.host.container.resolve(ReachLinks).add({ name: "b", url: b.server.url, secret: issued.secret });
    const runOnce = async (delegation) => {
      const start = performance.now();
      const { thread } = await a.host.threads.createThread({
        projectId: a.project.id,
        providerInstanceId: "parent",
        prompt: `@@tool delegate_task ${JSON.stringify(delegation)}`,
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      });
      const result = await a.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 60_000 });
      if (result.run?.status !== "completed") throw new Error(`run ended ${result.run?.status}`);
      if (!String(result.run.summary ?? "").includes(delegation.task.replace("@@reply ", "")))
        throw new Error(`the parent did not get the child's answer: ${result.run.summary}`);
      return performance.now() - start;
    };
    const local = [];
    const remote = [];
    for (let i = -3; i < ROUNDS; i += 1) {
      const localTime = await runOnce({
        task: `@@reply local-${i}`,
        target: { providerInstanceId: "child" },
        mode: "wait",
      });
      const remoteTime = await runOnce({
        task: `@@reply remote-${i}`,
        target: { providerInstanceId: "child" },
        mode: "wait",
        environmentId: "b",
      });
      // The first rounds warm up both paths (connections, prepared statements, sessions).
      if (i >= 0) {
        local.push(localTime);
        remote.push(remoteTime);
      }
    }
    local.sort((x, y) => x - y);
    remote.sort((x, y) => x - y);
    return {
      name: "Delegation across environments",
      rows: [
        {
          metric: "parent run with delegate_task(wait) to B, p50",
          value: percentile(remote, 50),
          unit: "ms",
          baseline: percentile(local, 50),
          ratio: percentile(remote, 50) / percentile(local, 50),
          note: "baseline: the same delegation on A itself; A on 127.0.0.2, B on 127.0.0.3; goal <= 1.5x",
        },
        {
          metric: "parent run with delegate_task(wait) to B, p90",
          value: percentile(remote, 90),
          unit: "ms",
          baseline: percentile(local, 90),
          ratio: percentile(remote, 90) / percentile(local, 90),
          note: `n=${remote.length} each`,
        },
      ],
    };
  } finally {
    await a.close();
    await b.close();
  }
}
