import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../support/sqlite-store.js";
import {
  createCodexHome,
  createPiHome,
  ScriptedModelServer,
  startTestHost,
  type CodexHome,
  type PiHome,
  type TestHost,
} from "@switchyard/testkit";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { environmentId } from "../../src/store/settings.js";

// Two Switchyard servers, each its own home: A runs real Codex, B real Pi, both driven by one
// scripted model server (the only stand-in). A is linked to B with a grant issued on B; a Codex
// thread on A delegates to a Pi child on B through the real MCP endpoints and the link.
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));

describe("delegation across environments end to end (real Codex on A, real Pi on B, scripted model)", () => {
  let server: ScriptedModelServer;
  let codexHome: CodexHome;
  let piHome: PiHome;
  let a: TestHost;
  let b: TestHost;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    piHome = await createPiHome({ modelServerUrl: server.url });
    a = await startTestHost({
      plugins: [CODEX_PLUGIN],
      providers: [{ id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env }],
    });
    b = await startTestHost({
      plugins: [PI_PLUGIN],
      providers: [{ id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env }],
    });
    const issued = b.host.container
      .resolve(ReachGrants)
      .issue({ for: "a", projects: "*", verbs: ["read", "delegate"], maxRuntimeMode: "full-access", ttlMs: 3_600_000 });
    a.host.container.resolve(ReachLinks).add({ name: "b", url: b.server!.url, secret: issued.secret });
  }, 120_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await codexHome?.cleanup();
    await piHome?.cleanup();
    await server?.close();
  }, 60_000);

  it("a Codex thread on A delegates to a Pi child on B and waits; Pi's answer reaches Codex's next model request", async () => {
    const task = {
      task: "check the Mac setup @@reply Hello from Pi on the other machine",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      environmentId: "b",
      clientRequestId: "codex-to-pi-on-b",
    };
    const threadId = await a.createThread(
      "codex",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Codex relays: {{output.summary}} from {{output.childThreadLink}}`,
      { runtimeMode: "full-access" },
    );
    const run = await a.waitForRun(threadId, { timeoutMs: 150_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("Hello from Pi on the other machine");
    // The child is a Pi thread on B, with its parent on A.
    const remote = sqliteStore(a.host.store)
      .statement("SELECT remote_task_id, data FROM reach_remote_tasks WHERE parent_thread_id = ?")
      .all(threadId) as { remote_task_id: string; data: string }[];
    expect(remote).toHaveLength(1);
    const childThreadId = (JSON.parse(remote[0]!.data) as { childThreadId: string }).childThreadId;
    const child = b.host.store.get("thread", childThreadId)!;
    expect(child).toMatchObject({ providerInstanceId: "pi", lineage: { foreignParent: { threadId } } });
    // The link Codex relayed is B's own.
    expect(run.summary).toContain(`switchyard-thread://v2/${environmentId(b.host.store)}/${childThreadId}`);
    // Codex's follow-up model request carried Pi's result as the delegate_task output.
    const followUp = server.requests.find(
      (r) =>
        r.toolResult?.output.includes("Hello from Pi on the other machine") && r.headers["originator"] !== undefined,
    );
    expect(followUp, "no Codex request carried the child's result").toBeDefined();
  }, 200_000);
});
