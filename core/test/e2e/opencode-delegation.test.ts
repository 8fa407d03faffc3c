import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../support/sqlite-store.js";
import {
  createCodexHome,
  createOpenCodeHome,
  createPiHome,
  ScriptedModelServer,
  startTestHost,
  type CodexHome,
  type OpenCodeHome,
  type PiHome,
  type TestHost,
} from "@switchyard/testkit";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";

// Real Codex, OpenCode (opencode serve) and Pi, all driven by one scripted model server,
// delegating to each other through the real Switchyard MCP endpoint, each session with its
// own credential. Needs the built plugins (`npx tsc -b plugins/codex plugins/opencode plugins/pi`).
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const OPENCODE_PLUGIN = fileURLToPath(new URL("../../../plugins/opencode", import.meta.url));
const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));
const TOKEN_ENV = "SWITCHYARD_OPENCODE_MCP_TOKEN";

type Item = { kind: string; text: string; status: string; data: Record<string, unknown> };

/** The environment of every live `opencode serve` started for a Switchyard home. */
function openCodeServersOf(home: string): { pid: number; env: Record<string, string> }[] {
  const found: { pid: number; env: Record<string, string> }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env: Record<string, string> = {};
      for (const pair of readFileSync(`/proc/${entry}/environ`, "utf8").split("\0")) {
        const eq = pair.indexOf("=");
        if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      if (env[TOKEN_ENV] !== undefined && env["XDG_DATA_HOME"]?.startsWith(home))
        found.push({ pid: Number(entry), env });
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return found;
}

describe("OpenCode in cross-provider delegation (real Codex, OpenCode and Pi, scripted model)", () => {
  let server: ScriptedModelServer;
  let codexHome: CodexHome;
  let openCodeHome: OpenCodeHome;
  let piHome: PiHome;
  let lab: TestHost;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    piHome = await createPiHome({ modelServerUrl: server.url });
    openCodeHome = await createOpenCodeHome({
      modelServerUrl: server.url,
      config: {
        provider: {
          fake: {
            npm: "@ai-sdk/openai-compatible",
            name: "Fake",
            options: { baseURL: `${server.url}/v1`, apiKey: "sk-switchyard-testkit-dummy" },
            models: {
              "fake-model": { name: "Fake Model", tool_call: true },
              "fake-model-2": { name: "Fake Model 2", tool_call: true },
            },
          },
        },
      },
    });
    lab = await startTestHost({
      plugins: [CODEX_PLUGIN, OPENCODE_PLUGIN, PI_PLUGIN, SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
        {
          id: "opencode",
          driver: "opencode",
          options: { configFile: openCodeHome.configPath },
          environment: openCodeHome.env,
        },
        { id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env },
        { id: "scripted", driver: "scripted", options: {} },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await lab?.stop();
    await codexHome?.cleanup();
    await openCodeHome?.cleanup();
    await piHome?.cleanup();
    await server?.close();
  }, 60_000);

  const items = (threadId: string): Item[] =>
    lab.host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position") as unknown as Item[];

  it("a Codex thread delegates to OpenCode and waits; OpenCode's answer reaches Codex's next model request", async () => {
    const task = {
      task: "greet the team @@reply Hello from OpenCode, the child",
      target: { providerInstanceId: "opencode" },
      mode: "wait",
      clientRequestId: "codex-to-opencode",
    };
    const threadId = await lab.createThread(
      "codex",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply Codex relays: {{output.summary}}`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 150_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("Hello from OpenCode, the child");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      providerInstanceId: "opencode",
      status: "completed",
      summary: "Hello from OpenCode, the child",
    });
    expect(lab.host.store.get("thread", tasks[0]!.childThreadId)).toMatchObject({
      providerInstanceId: "opencode",
      lineage: { relationship: "subagent", parentThreadId: threadId },
    });
    const followUp = server.requests.find(
      (r) => r.toolResult?.output.includes("Hello from OpenCode, the child") && r.headers["originator"] !== undefined,
    );
    expect(followUp, "no Codex request carried the child's result").toBeDefined();
  }, 200_000);

  it("an OpenCode thread delegates to Pi and waits; Pi's answer comes back as the tool's output", async () => {
    const task = {
      task: "check the build @@reply Pi says the build is green",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      clientRequestId: "opencode-to-pi",
    };
    const threadId = await lab.createThread(
      "opencode",
      `go ahead @@tool delegate_task ${JSON.stringify(task)} @@then @@reply OpenCode relays: {{output.summary}}`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 150_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("OpenCode relays: Pi says the build is green");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks[0]).toMatchObject({
      providerInstanceId: "pi",
      status: "completed",
      summary: "Pi says the build is green",
    });
    const call = items(threadId).find((item) => item.kind === "tool_call" && item.data["toolKind"] === "mcp");
    expect(call?.data["name"]).toBe("switchyard_delegate_task");
  }, 200_000);

  it("two concurrent OpenCode sessions each hold and use only their own credential", async () => {
    const prompt = (label: string) =>
      [
        `isolation ${label} @@hold iso-${label} @@tool orchestrator_capabilities {}`,
        `@@then @@tool delegate_task ${JSON.stringify({ task: `@@reply child of ${label}`, target: { providerInstanceId: "scripted" }, mode: "async", clientRequestId: `iso-${label}` })}`,
        `@@then @@reply ${label} is done`,
      ].join(" ");
    const a = await lab.createThread("opencode", prompt("A"), { runtimeMode: "full-access", model: "fake/fake-model" });
    const b = await lab.createThread("opencode", prompt("B"), {
      runtimeMode: "full-access",
      model: "fake/fake-model-2",
    });
    await Promise.all([server.waitForHold("iso-A", 90_000), server.waitForHold("iso-B", 90_000)]);

    // Both sessions are live at once, each on its own server holding exactly its own token.
    const servers = openCodeServersOf(lab.home);
    const sessions = lab.host.store.select("providerSession", "status = 'open' AND thread_id IN (?, ?)", [a, b]);
    expect(sessions).toHaveLength(2);
    const seen = new Map<string, string>();
    for (const { env } of servers) {
      const session = sessions.find((s) => s.id === env["SWITCHYARD_OPENCODE_PROVIDER_SESSION"]);
      if (session === undefined) continue;
      const credential = sqliteStore(lab.host.store)
        .db.prepare(
          "SELECT thread_id AS threadId, provider_session_id AS providerSessionId FROM mcp_credentials WHERE token_hash = ?",
        )
        .get(createHash("sha256").update(env[TOKEN_ENV]!).digest("hex")) as
        { threadId: string; providerSessionId: string } | undefined;
      expect(credential).toEqual({ threadId: session.threadId, providerSessionId: session.id });
      seen.set(session.threadId, env[TOKEN_ENV]!);
    }
    expect([...seen.keys()].sort()).toEqual([a, b].sort());
    expect(seen.get(a)).not.toBe(seen.get(b));

    server.release("iso-A");
    server.release("iso-B");
    const [runA, runB] = await Promise.all([
      lab.waitForRun(a, { timeoutMs: 120_000 }),
      lab.waitForRun(b, { timeoutMs: 120_000 }),
    ]);
    expect(runA.status, JSON.stringify(runA.error)).toBe("completed");
    expect(runB.status, JSON.stringify(runB.error)).toBe("completed");
    // Each session acted as itself: the endpoint saw its own thread's model, and its delegated
    // task has its own thread as parent.
    for (const [threadId, model, label] of [
      [a, "fake/fake-model", "A"],
      [b, "fake/fake-model-2", "B"],
    ] as const) {
      const capabilities = items(threadId).find(
        (item) => item.kind === "tool_call" && item.data["name"] === "switchyard_orchestrator_capabilities",
      );
      expect(String(capabilities?.data["output"])).toContain(
        `"inheritedProvider":{"providerInstanceId":"opencode","model":"${model}","effort":null}`,
      );
      const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
      expect(tasks).toHaveLength(1);
      expect(lab.host.store.get("thread", tasks[0]!.childThreadId)).toMatchObject({
        providerInstanceId: "scripted",
        lineage: { parentThreadId: threadId },
      });
      expect(items(tasks[0]!.childThreadId).some((item) => item.text.includes(`child of ${label}`))).toBe(true);
    }
  }, 240_000);
});
