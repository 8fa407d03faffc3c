import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { releaseGate, SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { runCli } from "../support/cli.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { readRows, ServeProcess, writeHomeConfig } from "../support/serve-process.js";
import { SseClient, type ReceivedEvent } from "../support/sse-client.js";

/**
 * The router of seed 003, from the outside only: a real `switchyard serve`, a client token from
 * the CLI, the MCP endpoint over HTTP to create threads, and SSE streams to learn everything.
 * Nothing polls: every wait is for a pushed event (bounded in time).
 */
describe("a router drives a planner and three children over HTTP and SSE", () => {
  const dirs: string[] = [];
  const streams: SseClient[] = [];
  const clients: Client[] = [];
  let serve: ServeProcess | null = null;
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await serve?.kill9();
    serve = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("gets every completion pushed, misses nothing across a reconnect and a kill -9 restart, and the planner gets each child's result once", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-router-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const stateDir = join(root, "state");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-router-ws-"));
    dirs.push(workspace);
    // Three providers with different capabilities, all able to resume a session after a restart.
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: { gateDir, stateDir } },
        {
          id: "beta",
          driver: "scripted",
          options: {
            gateDir,
            stateDir,
            capabilities: {
              sessions: { resume: true },
              turns: {
                interrupt: true,
                steeringByInterruptRestart: true,
                terminalStatusQuality: "strong",
                emitsTurnStarted: true,
              },
              tools: { mcp: { http: true } },
              runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
              interactionModes: ["plan", "default"],
            },
          },
        },
        {
          id: "cedar",
          driver: "scripted",
          options: {
            gateDir,
            stateDir,
            capabilities: {
              sessions: { resume: true },
              turns: { interrupt: true, terminalStatusQuality: "weak" },
              runtimeModes: ["approval-required", "full-access"],
              interactionModes: ["default"],
            },
          },
        },
      ],
    });
    const added = await runCli(["project", "add", workspace, "--json", "--home", home]);
    expect(added.code, added.stderr).toBe(0);
    const projectId = (JSON.parse(added.stdout) as { id: string }).id;
    const issued = await runCli(["token", "issue", "--json", "--max-runtime-mode", "full-access", "--home", home]);
    expect(issued.code, issued.stderr).toBe(0);
    const { token } = JSON.parse(issued.stdout) as { token: string };

    serve = ServeProcess.start(home);
    let endpoint = await serve.ready;
    const client = await connectMcp(endpoint.mcpUrl, token);
    clients.push(client);

    // The planner: an idle thread the router created.
    const planner = (
      await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
        projectId,
        clientRequestId: "planner",
        threads: [{ title: "planner", target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
      })
    ).threads[0]!.thread.threadId;

    // The router's stream (what it acts on) and a reference stream with the same filter that
    // stays connected, to prove the router's stream missed nothing.
    const query = `threadId=${encodeURIComponent(planner)}&descendants=true&after=0`;
    const open = async (lastEventId?: string) => {
      const stream = await SseClient.connect(`${endpoint.url}/api/v1/events?${query}`, {
        token,
        ...(lastEventId !== undefined ? { lastEventId } : {}),
      });
      streams.push(stream);
      return stream;
    };
    const routerStreams = [await open()];
    const referenceStreams = [await open()];
    const router = () => routerStreams[routerStreams.length - 1]!;
    const reference = () => referenceStreams[referenceStreams.length - 1]!;

    // Three children on three providers.
    const created = await mustCall<{
      threads: { thread: { threadId: string; parentThreadId: string; relationship: string; reportBack: boolean } }[];
    }>(client, "create_threads", {
      projectId,
      clientRequestId: "children",
      threads: [
        { title: "apple", prompt: "@@reply APPLE", target: { providerInstanceId: "alpha" }, parentThreadId: planner },
        {
          title: "banana",
          prompt: "@@plan peel it @@gate banana @@reply BANANA",
          target: { providerInstanceId: "beta" },
          parentThreadId: planner,
        },
        {
          title: "cherry",
          prompt: "@@gate cherry @@reply CHERRY",
          target: { providerInstanceId: "cedar" },
          parentThreadId: planner,
        },
      ],
    });
    const [apple, banana, cherry] = created.threads.map((entry) => entry.thread);
    for (const child of created.threads)
      expect(child.thread).toMatchObject({ parentThreadId: planner, relationship: "subagent", reportBack: true });

    const finished = (threadId: string) => (event: ReceivedEvent) =>
      event.type === "run.finished" && event.payload.threadId === threadId;
    const toldPlanner = (childId: string) => (event: ReceivedEvent) =>
      event.type === "message" &&
      event.payload.threadId === planner &&
      event.payload.data.item.details?.childThreadId === childId;
    /** The planner's turn that acted on a child's result ended. */
    const plannerActedOn = async (stream: SseClient, childId: string) => {
      const message = await stream.waitFor(toldPlanner(childId));
      return stream.waitFor(
        (event) => finished(planner)(event) && event.payload.data.run.runId === message.payload.data.item.runId,
      );
    };

    // 1. The first child's completion, pushed, and the planner told.
    expect((await router().waitFor(finished(apple!.threadId))).payload.data.run).toMatchObject({
      status: "completed",
      summary: "APPLE",
    });
    await plannerActedOn(router(), apple!.threadId);

    // 2. The router loses its stream; the cherry child finishes meanwhile (the reference stream
    //    says so); the router reconnects with Last-Event-ID.
    router().close();
    await router().ended;
    releaseGate(gateDir, "cherry");
    await plannerActedOn(reference(), cherry!.threadId);
    routerStreams.push(await open(router().lastEventId));
    expect((await router().waitFor(finished(cherry!.threadId))).payload.data.run).toMatchObject({
      status: "completed",
      summary: "CHERRY",
    });
    await plannerActedOn(router(), cherry!.threadId);

    // 3. The server is killed while the banana child's turn runs (it has proposed a plan and
    //    waits at its gate), and starts again on its home.
    await reference().waitFor(
      (event) =>
        event.type === "item" &&
        event.payload.threadId === banana!.threadId &&
        event.payload.data.item.kind === "proposed_plan",
    );
    await serve.kill9();
    await router().ended;
    await reference().ended;
    serve = ServeProcess.start(home);
    endpoint = await serve.ready;
    routerStreams.push(await open(router().lastEventId));
    referenceStreams.push(await open(reference().lastEventId));
    releaseGate(gateDir, "banana");
    expect((await router().waitFor(finished(banana!.threadId))).payload.data.run).toMatchObject({
      status: "completed",
      summary: "BANANA",
    });
    await plannerActedOn(router(), banana!.threadId);
    await plannerActedOn(reference(), banana!.threadId);

    // What the router saw, across its three connections, is exactly what the reference saw.
    const routerSaw = routerStreams.flatMap((stream) => stream.events);
    const referenceSaw = referenceStreams.flatMap((stream) => stream.events);
    expect(routerSaw.map((event) => event.payload.sequence)).toEqual(
      referenceSaw.map((event) => event.payload.sequence),
    );
    expect(new Set(routerSaw.map((event) => event.payload.sequence)).size).toBe(routerSaw.length);
    // Each child's one turn reached the planner once, with its result.
    const told = routerSaw.filter(
      (event) =>
        event.type === "message" && event.payload.threadId === planner && event.payload.data.item.role === "user",
    );
    expect(told.map((event) => event.payload.data.item.details.childThreadId)).toEqual([
      apple!.threadId,
      cherry!.threadId,
      banana!.threadId,
    ]);
    expect(told.map((event) => /Result:\n(\w+)/.exec(event.payload.data.item.text)?.[1])).toEqual([
      "APPLE",
      "CHERRY",
      "BANANA",
    ]);
    for (const child of [apple, banana, cherry]) expect(routerSaw.filter(finished(child!.threadId))).toHaveLength(1);
    expect(routerSaw.filter(finished(planner))).toHaveLength(3);

    // And the log agrees after a clean stop: one delivery per child turn, all consumed.
    expect(await serve.terminate()).toBe(0);
    serve = null;
    expect(
      readRows(home, "SELECT id FROM items WHERE thread_id = ? AND id LIKE 'message:child-turn:%'", [planner]),
    ).toHaveLength(3);
    // The banana turn was live at the kill: its run went on in a continued attempt.
    expect(
      readRows<{ reason: string }>(
        home,
        "SELECT json_extract(data, '$.reason') AS reason FROM attempts WHERE thread_id = ? ORDER BY id",
        [banana!.threadId],
      ).map((row) => row.reason),
    ).toEqual(["initial", "continue_after_restart"]);
    expect(
      readRows(
        home,
        "SELECT id FROM context_transfers WHERE id LIKE 'transfer:child-turn:%' AND json_extract(data, '$.status') = 'consumed'",
      ),
    ).toHaveLength(3);
  }, 120_000);
});
