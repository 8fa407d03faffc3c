/**
 * Pi through a real Switchyard host: the plugin loaded by the plugin host, the MCP endpoint on
 * 127.0.0.1, and Pi calling back into it through the Switchyard extension with the session's
 * own credential. Needs the built plugin (`npx tsc -b plugins/pi`): the host loads `dist`.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ScriptedModelServer,
  commandLineOf,
  createPiHome,
  environmentVariablesOf,
  startTestHost,
  type PiHome,
  type TestHost,
} from "@switchyard/testkit";
import { ACKNOWLEDGING_EXTENSION, PLUGIN_DIR } from "./pi-lab.js";

const INSTANCE = "pi-host";

let server: ScriptedModelServer;
let home: PiHome;
let lab: TestHost;

beforeAll(async () => {
  if (!existsSync(path.join(PLUGIN_DIR, "dist", "index.js")))
    throw new Error("Build the plugin first: npx tsc -b plugins/pi");
  server = await ScriptedModelServer.start();
  home = await createPiHome({ modelServerUrl: server.url });
  const extension = path.join(home.root, "acknowledging.js");
  writeFileSync(extension, ACKNOWLEDGING_EXTENSION);
  lab = await startTestHost({
    plugins: [PLUGIN_DIR],
    providers: [
      {
        id: INSTANCE,
        driver: "pi",
        options: { extraArgs: ["--extension", extension] },
        homePath: home.home,
        environment: home.env,
      },
    ],
    serverConfig: { maxWaitMs: 3_000 },
  });
}, 60_000);

afterAll(async () => {
  await lab?.stop();
  await server?.close();
  await home?.cleanup();
}, 60_000);

type Item = { kind: string; text: string; status: string; data: Record<string, unknown> };
const items = (threadId: string): Item[] =>
  lab.host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position") as unknown as Item[];

/**
 * The live Pi process of a provider session. Pi sets `process.title`, which overwrites
 * /proc/<pid>/cmdline, so it is found by its environment (the session's state file).
 */
function piProcessOf(providerSessionId: string): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = environmentVariablesOf(Number(entry));
      if (env["PI_CODING_AGENT_DIR"] === home.home && env["SWITCHYARD_PI_STATE_FILE"]?.includes(providerSessionId))
        return Number(entry);
    } catch {
      // gone meanwhile, or not ours
    }
  }
  throw new Error(`no pi process for provider session ${providerSessionId}`);
}

/** Files under a directory whose names match. */
function findFiles(dir: string, pattern: RegExp): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findFiles(full, pattern));
    else if (pattern.test(entry.name)) found.push(full);
  }
  return found;
}

describe("Pi through a Switchyard host", () => {
  it("calls a Switchyard MCP tool through the extension with the session's own credential, which stays out of argv and files", async () => {
    const threadId = await lab.createThread(INSTANCE, "go @@tool orchestrator_capabilities {}", {
      runtimeMode: "full-access",
    });
    const run = await lab.waitForRun(threadId, { timeoutMs: 60_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");

    const call = items(threadId).find((item) => item.kind === "tool_call" && item.data["toolKind"] === "mcp");
    expect(call, "no MCP tool call item").toBeDefined();
    expect(call!.status).toBe("completed");
    expect(call!.data["name"]).toBe("mcp__switchyard__orchestrator_capabilities");
    expect(call!.data["server"]).toBe("switchyard");
    expect(call!.text).toBe("switchyard/orchestrator_capabilities");
    // Only this session's credential makes the endpoint answer as this instance's agent.
    expect(String(call!.data["output"])).toContain(`"providerInstanceId":"${INSTANCE}"`);
    expect(String(call!.data["output"])).toContain('"callerKind":"agent"');
    expect(run.summary).toContain("DONE after mcp__switchyard__orchestrator_capabilities");

    // The host folded the shared instructions into the first prompt (Pi has no instruction channel), once.
    const first = await server.waitForRequest(
      (r) => r.userText === "go @@tool orchestrator_capabilities {}" && r.stepIndex === 0,
    );
    const body = JSON.stringify(first.body);
    expect(body.split('You can coordinate other coding agents through the \\"switchyard\\" MCP tools').length - 1).toBe(
      1,
    );
    expect(body).toContain("<switchyard_instructions>");
    // Pi 0.99+ (seed 000): three Switchyard tools declared, the others found through tool_search.
    const declared = first.toolNames.filter((name) => name.startsWith("mcp__"));
    expect(declared.sort()).toEqual([
      "mcp__switchyard__delegate_task",
      "mcp__switchyard__orchestrator_capabilities",
      "mcp__switchyard__task_status",
    ]);
    expect(first.toolNames).toContain("tool_search");

    // The token: in Pi's environment only (the adapter tests check the argv it was spawned with).
    const [session] = lab.host.store.select("providerSession", "thread_id = ?", [threadId]);
    const pid = piProcessOf(session!.id);
    const token = environmentVariablesOf(pid)["SWITCHYARD_MCP_TOKEN"];
    expect(token).toBeTruthy();
    expect(commandLineOf(pid).join(" ")).not.toContain(token!);
    const extensions = findFiles(lab.home, /^switchyard-pi-extension-[0-9a-f]{12}\.js$/);
    expect(extensions).toHaveLength(1);
    expect(readFileSync(extensions[0]!, "utf8")).not.toContain(token!);
    expect(readFileSync(extensions[0]!, "utf8")).toContain("SWITCHYARD_MCP_TOKEN");
  });

  it("a blocking t3_thread_wait on a thread that never finishes returns the server's resumable pending result", async () => {
    const stuck = await lab.createThread(INSTANCE, "never ends @@hold stuck-gate", { runtimeMode: "full-access" });
    await server.waitForHold("stuck-gate", 30_000);
    const started = Date.now();
    // t3_thread_wait is deferred: the model finds it with tool_search, which declares it for the next call.
    const prompt = `go @@tool tool_search {"query":"t3_thread_wait"} @@then @@tool t3_thread_wait {"threadId":"${stuck}"}`;
    const waiter = await lab.createThread(INSTANCE, prompt, { runtimeMode: "full-access" });
    const run = await lab.waitForRun(waiter, { timeoutMs: 60_000 });
    const elapsed = Date.now() - started;
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const call = items(waiter).find(
      (item) => item.kind === "tool_call" && item.data["name"] === "mcp__switchyard__t3_thread_wait",
    );
    expect(call?.status).toBe("completed");
    const output = JSON.parse(String(call!.data["output"])) as {
      waitTimedOut: boolean;
      status: string;
      threadId: string;
    };
    expect(output).toMatchObject({ threadId: stuck, waitTimedOut: true, status: "running" });
    const before = await server.waitForRequest((r) => r.userText === prompt && r.stepIndex === 0);
    const after = await server.waitForRequest((r) => r.userText === prompt && r.stepIndex === 1);
    expect(before.toolNames).not.toContain("mcp__switchyard__t3_thread_wait");
    expect(after.toolNames).toContain("mcp__switchyard__t3_thread_wait");
    // The server's cap (3 s) ended the wait, not a client timeout.
    expect(elapsed).toBeGreaterThanOrEqual(3_000);

    await lab.host.threads.interrupt({ threadId: stuck });
    server.release("stuck-gate");
    expect(["interrupted", "cancelled"]).toContain((await lab.waitForRun(stuck, { timeoutMs: 60_000 })).status);
  });

  it("records a steer a Pi input handler consumed as handled on the message, and runs no follow-up for it", async () => {
    const threadId = await lab.createThread(INSTANCE, "working @@hold host-ack @@reply held reply", {
      runtimeMode: "full-access",
    });
    await server.waitForHold("host-ack", 30_000);
    await lab.host.waiter.waitFor(
      async () => ((await lab.host.threads.runs(threadId))[0]?.status === "running" ? true : null),
      {
        timeoutMs: 30_000,
      },
    );
    const sent = await lab.host.threads.send({
      threadId,
      text: "swallowed steer",
      mode: "steer",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(sent.delivery).toBe("steered");
    const handled = await lab.host.waiter.waitFor(
      () => items(threadId).find((item) => item.kind === "user_message" && item.data["delivery"] === "handled") ?? null,
      { timeoutMs: 30_000 },
    );
    expect(handled?.data["handledBy"]).toBe("a Pi extension's input handler");
    server.release("host-ack");
    expect((await lab.waitForRun(threadId, { timeoutMs: 60_000 })).status).toBe("completed");
    expect(await lab.host.threads.runs(threadId)).toHaveLength(1);
  });
});
