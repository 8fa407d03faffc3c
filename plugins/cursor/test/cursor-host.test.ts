/**
 * Cursor through a real Switchyard host (plugin host, engine, SQLite, the MCP endpoint): what
 * the shared policy does with what Cursor can and cannot do. A steer the backend hands back
 * becomes a queued follow-up; a message sent while a run is active waits for it (the agent
 * takes one run at a time); work asked in a runtime mode Cursor cannot enforce is refused or
 * stepped down; `orchestrator_capabilities` says all of it. A scripted provider is the calling
 * agent where one is needed. Needs the built plugin and testkit (the host loads `dist`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FakeCursorBackend,
  SCRIPTED_PROVIDER_PLUGIN_DIR,
  createCursorHome,
  startTestHost,
  type CursorHome,
  type TestHost,
} from "@switchyard/testkit";
import { PLUGIN_DIR } from "./cursor-lab.js";

let backend: FakeCursorBackend;
let home: CursorHome;
let lab: TestHost;

beforeAll(async () => {
  backend = await FakeCursorBackend.start();
  home = await createCursorHome({ backendUrl: backend.url });
  lab = await startTestHost({
    plugins: [PLUGIN_DIR, SCRIPTED_PROVIDER_PLUGIN_DIR],
    providers: [
      { id: "cursor", driver: "cursor", homePath: home.home, environment: home.env },
      { id: "parent", driver: "scripted" },
    ],
  });
}, 60_000);

afterAll(async () => {
  await lab?.stop();
  await backend?.close();
  await home?.cleanup();
}, 60_000);

type Item = { kind: string; text: string; status: string; runId: string | null; data: Record<string, unknown> };
const items = (threadId: string): Item[] =>
  lab.host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position") as unknown as Item[];
const liveTurn = async (threadId: string): Promise<void> => {
  const live = await lab.host.waiter.waitFor(
    () =>
      lab.host.store.select("attempt", "thread_id = ? AND status = 'running'", [threadId]).length > 0 ? true : null,
    {
      timeoutMs: 60_000,
    },
  );
  expect(live, "the turn never reached Cursor").not.toBeNull();
};

describe("Cursor through a Switchyard host", () => {
  it("a steer the backend hands back (revert_to_followup) runs as a follow-up turn after the running one, never beside it", async () => {
    const threadId = await lab.createThread("cursor", "hold on @@hold host-revert @@reply first answer", {
      runtimeMode: "full-access",
    });
    await liveTurn(threadId);
    await backend.waitForHold("host-revert", 60_000);
    backend.answerSteersWith("queuedForNextTurn");
    let sent;
    try {
      sent = await lab.host.threads.send({
        threadId,
        text: "the steer @@reply answered the steer",
        mode: "steer",
        createdBy: "user",
        creationSource: "cli",
      });
      expect(sent.delivery).toBe("steered");
      await lab.host.drainEffects();
    } finally {
      backend.answerSteersWith("delivered");
    }
    backend.release("host-revert");
    const runs = await lab.host.threads.runs(threadId, 10);
    const followUp = runs.find((run) => run.id !== sent.runId && run.text.includes("the steer"));
    expect(followUp, "the handed-back steer did not become a run").toBeDefined();
    const done = await lab.waitForRun(threadId, { runId: followUp!.id });
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.summary).toBe("answered the steer");
    const first = await lab.waitForRun(threadId, { runId: sent.runId });
    expect(first.summary).toBe("first answer");
    // The message records the fall-back, and the first turn a notice of what Cursor answered.
    const message = items(threadId).find((item) => item.kind === "user_message" && item.text.includes("the steer"))!;
    expect(message.data).toMatchObject({ delivery: "queued", steerFellBack: true });
    expect(
      items(threadId).some(
        (item) => item.kind === "notice" && item.runId === sent.runId && item.text.includes("revert_to_followup"),
      ),
    ).toBe(true);
    // Cursor saw the steer once (refused) and then the follow-up as its own run, after the first ended.
    const cursorRuns = backend.runs.filter(
      (run) => run.rawUserText.includes("hold on @@hold host-revert") || run.rawUserText.includes("the steer"),
    );
    expect(cursorRuns.map((run) => [run.userText, run.status])).toEqual([
      ["hold on @@hold host-revert @@reply first answer", "finished"],
      ["the steer @@reply answered the steer", "finished"],
    ]);
    expect(cursorRuns[0]!.steers.map((steer) => steer.answer)).toEqual(["queuedForNextTurn"]);
  });

  it("a message queued while a run is active waits for it: Cursor never gets a send during a run", async () => {
    const threadId = await lab.createThread("cursor", "hold on @@hold host-queue @@reply first", {
      runtimeMode: "full-access",
    });
    await liveTurn(threadId);
    await backend.waitForHold("host-queue", 60_000);
    const queued = await lab.host.threads.send({
      threadId,
      text: "next one @@reply second",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(queued.delivery).toBe("queued");
    await lab.host.drainEffects();
    // Still one run at Cursor while the first holds.
    expect(backend.runs.filter((run) => run.userText === "next one @@reply second")).toEqual([]);
    backend.release("host-queue");
    const done = await lab.waitForRun(threadId, { runId: queued.runId });
    expect(done.summary).toBe("second");
    const [firstRun, secondRun] = backend.runs.filter(
      (run) => run.userText === "hold on @@hold host-queue @@reply first" || run.userText === "next one @@reply second",
    );
    expect(firstRun!.status).toBe("finished");
    expect(secondRun!.conversationId).toBe(firstRun!.conversationId);
  });

  it("delegates to Cursor in full access, refuses work in a mode it cannot enforce, and lists what it does", async () => {
    const full = {
      task: "child work @@reply cursor child done",
      target: { providerInstanceId: "cursor" },
      mode: "wait",
      clientRequestId: "to-cursor-full",
    };
    const narrow = {
      task: "never runs",
      target: { providerInstanceId: "cursor" },
      mode: "async",
      runtimeMode: "approval-required",
      clientRequestId: "to-cursor-narrow",
    };
    const parent = await lab.createThread(
      "parent",
      `@@tool delegate_task ${JSON.stringify(full)} @@tool delegate_task ${JSON.stringify(narrow)} @@tool orchestrator_capabilities {} @@reply parent done`,
      { runtimeMode: "full-access" },
    );
    const run = await lab.waitForRun(parent, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const calls = items(parent).filter((item) => item.kind === "tool_call");
    const [delegated, refused, capabilities] = calls.map((item) => String(item.data["output"]));
    expect(delegated).toContain("cursor child done");
    const [task] = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent]);
    expect(task).toMatchObject({ providerInstanceId: "cursor", status: "completed", summary: "cursor child done" });
    expect(lab.host.store.get("thread", task!.childThreadId)).toMatchObject({ runtimeMode: "full-access" });
    expect(refused).toContain("invalid_request");
    expect(refused).toContain('does not offer runtime mode \\"approval-required\\"');
    const listed = JSON.parse(capabilities!) as {
      providers: {
        providerInstanceId: string;
        runtimeModes?: string[];
        steering?: string;
        fork?: string;
        interrupt?: string;
      }[];
    };
    expect(listed.providers.find((provider) => provider.providerInstanceId === "cursor")).toMatchObject({
      runtimeModes: ["full-access"],
      steering: "native",
      fork: "portable",
    });
  });

  it("an approval-required caller cannot delegate to Cursor at all: no mode at or below its own", async () => {
    const inherit = {
      task: "never runs",
      target: { providerInstanceId: "cursor" },
      mode: "async",
      clientRequestId: "to-cursor-inherit",
    };
    const parent = await lab.createThread(
      "parent",
      `@@tool delegate_task ${JSON.stringify(inherit)} @@reply parent done`,
      {
        runtimeMode: "approval-required",
      },
    );
    const run = await lab.waitForRun(parent, { timeoutMs: 60_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const output = String(items(parent).find((item) => item.kind === "tool_call")!.data["output"]);
    expect(output).toContain("offers no runtime mode at or below");
    expect(lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent])).toEqual([]);
  });
});
