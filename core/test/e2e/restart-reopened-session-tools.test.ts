import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createPiHome, ScriptedModelServer } from "@switchyard/testkit";
import { runCli } from "../support/cli.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { ServeProcess, waitForRow, writeHomeConfig } from "../support/serve-process.js";

const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));

describe("serve killed mid-turn, then restarted (real Pi, scripted model)", () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 60_000);

  it("reopens the continued Pi session with a credential, and the agent calls a Switchyard tool", async () => {
    const model = await ScriptedModelServer.start();
    cleanups.push(() => model.close());
    const piHome = await createPiHome({ modelServerUrl: model.url });
    cleanups.push(() => piHome.cleanup());
    const home = mkdtempSync(join(tmpdir(), "switchyard-e2e-reopen-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-e2e-reopen-ws-"));
    cleanups.push(
      () => rmSync(home, { recursive: true, force: true }),
      () => rmSync(workspace, { recursive: true, force: true }),
    );
    writeHomeConfig(home, {
      plugins: [PI_PLUGIN],
      providers: [{ id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env }],
    });
    const project = JSON.parse((await runCli(["project", "add", workspace, "--json", "--home", home])).stdout) as {
      id: string;
    };
    const { token } = JSON.parse(
      (await runCli(["token", "issue", "--max-runtime-mode", "full-access", "--json", "--home", home])).stdout,
    ) as { token: string };
    // Asked to continue after the restart, the agent calls a Switchyard tool and reports who it was to the server.
    model.script(
      (ctx) => (ctx.turn.userText ?? "").includes("Switchyard server restarted"),
      [
        { tool: "orchestrator_capabilities", args: {} },
        { reply: "after restart the tool answered for: {{output.callerKind}}" },
      ],
    );

    let server = ServeProcess.start(home);
    cleanups.push(() => server.kill9());
    const first = await server.ready;
    const client = await connectMcp(first.mcpUrl, token);
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      projectId: project.id,
      threads: [
        {
          prompt: "long job @@shell echo started @@then @@hold pi-reopen @@reply never reached",
          target: { providerInstanceId: "pi" },
          runtimeMode: "full-access",
        },
      ],
    });
    const threadId = created.threads[0]!.thread.threadId;
    await client.close();
    // Pi's second model call is held: it has run a command, so its session file exists.
    await model.waitForHold("pi-reopen", 90_000);

    await server.kill9();
    server = ServeProcess.start(home);
    await server.ready;
    model.release("pi-reopen");

    const run = await waitForRow<{ status: string; summary: string | null }>(
      home,
      "SELECT json_extract(data, '$.status') AS status, json_extract(data, '$.summary') AS summary FROM runs WHERE thread_id = ? AND json_extract(data, '$.status') IN ('completed', 'failed', 'interrupted')",
      [threadId],
      120_000,
    );
    expect(run).toMatchObject({ status: "completed", summary: "after restart the tool answered for: agent" });
    const continued = model.requests.filter(
      (r) => (r.userText ?? "").includes("Switchyard server restarted") && !r.sideCall,
    );
    expect(continued.length).toBeGreaterThanOrEqual(2);
    expect(continued[0]!.toolNames).toContain("mcp__switchyard__orchestrator_capabilities");
    expect(await server.terminate()).toBe(0);
  }, 300_000);
});
