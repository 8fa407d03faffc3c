/**
 * The Cursor adapter against the real `@cursor/sdk` (1.0.32) in its sidecar and the
 * fake Cursor backend: turns, usage from the turn end, shell and MCP tool calls run by the SDK
 * itself, steering with each answer the backend can give, interrupts (and the turn after one),
 * resume in a new process (with and without checkpoints), models, the one runtime mode it
 * honours, a crashed sidecar, the token's secrecy, probes, and the Node it needs.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdapterEvent } from "@switchyard/sdk";
import {
  descendantCommandLines,
  environmentOf,
  mcpGrantFor,
  startTestMcpServer,
  turnInput,
  type TestMcpServer,
} from "@switchyard/testkit";
import { createCursorLab, type CursorLab } from "./cursor-lab.js";

const ofType = <T extends AdapterEvent["type"]>(events: readonly AdapterEvent[], type: T, turnId: string) =>
  events.filter(
    (event): event is Extract<AdapterEvent, { type: T }> =>
      event.type === type && "turnId" in event && event.turnId === turnId,
  );

/** Every file below `roots` whose bytes contain `needle`. */
function filesContaining(roots: readonly string[], needle: string): string[] {
  const found: string[] = [];
  const pending = [...roots];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(file);
      else if (entry.isFile() && readFileSync(file).includes(needle)) found.push(file);
    }
  }
  return found;
}

let lab: CursorLab;
let mcp: TestMcpServer;

beforeAll(async () => {
  lab = await createCursorLab({ backend: { models: ["fake-model", "fake-model-large"] } });
  mcp = await startTestMcpServer({ token: "sy_cursor_test_token_0123456789abcdef" });
}, 60_000);
afterAll(async () => {
  await lab?.dispose();
  await mcp?.close();
}, 60_000);

describe("Cursor adapter over the Cursor SDK and the fake backend", () => {
  it("runs a text turn: started with Cursor's run id, chunks streamed into one message, one terminal with the turn-end usage, the agent id as cursor", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("say it @@reply a reply long enough to arrive in several chunks from the backend");
    const started = await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status, JSON.stringify(terminal.error)).toBe("completed");
    const mine = events.ofTurn(input.turnId).map((e) => e.type);
    expect(mine[0]).toBe("turn.started");
    expect(mine.at(-1)).toBe("turn.terminal");
    expect(mine.filter((type) => type === "turn.terminal")).toHaveLength(1);
    expect(ofType(events.events, "turn.started", input.turnId)[0]!.providerTurnId).toBe(started.providerTurnId);
    expect(started.providerTurnId).toMatch(/^run-/);
    // The backend streamed 24-character deltas; they form one message.
    expect(ofType(events.events, "message.delta", input.turnId).length).toBeGreaterThan(1);
    expect(ofType(events.events, "message.completed", input.turnId).map((e) => e.text)).toEqual([
      "a reply long enough to arrive in several chunks from the backend",
    ]);
    // Usage is what the backend reported at the turn's end, in the spec's terms.
    const run = lab.backend.runs.find((r) => r.userText === input.text)!;
    expect(run.usage).not.toBeNull();
    expect(terminal.usage).toEqual({
      inputTokens: run.usage!.inputTokens,
      outputTokens: run.usage!.outputTokens,
      cacheReadInputTokens: run.usage!.cacheReadTokens,
      cacheCreationInputTokens: run.usage!.cacheWriteTokens,
    });
    const cursor = await events.waitFor("session.resume_cursor");
    expect(cursor.cursor).toMatch(/^agent-[0-9a-f-]{36}$/);
    expect(session.resumeCursor).toBe(cursor.cursor);
    expect(run.conversationId).toBe(cursor.cursor);
    // No model named: the catalog's first.
    expect(run.model).toBe("fake-model");
  });

  it("runs a shell command in the SDK's own process and reports it as a command item with its output", async () => {
    const { session, events } = await lab.open();
    const input = turnInput(
      "run it @@shell echo cursor-shell-ran > shell-marker.txt; cat shell-marker.txt @@then @@reply shell said {{output}}",
    );
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status, JSON.stringify(terminal.error)).toBe("completed");
    const [started] = ofType(events.events, "tool_call.started", input.turnId);
    expect(started).toMatchObject({
      kind: "command",
      name: "shell",
      title: "echo cursor-shell-ran > shell-marker.txt; cat shell-marker.txt",
    });
    const [completed] = ofType(events.events, "tool_call.completed", input.turnId);
    expect(completed).toMatchObject({ itemId: started!.itemId, status: "completed" });
    expect(completed!.output?.trim()).toBe("cursor-shell-ran");
    expect(events.textOf(input.turnId)).toBe("shell said cursor-shell-ran");
    // The command ran in the session's working directory.
    const run = lab.backend.runs.find((r) => r.userText === input.text)!;
    expect(run.toolCalls[0]).toMatchObject({ kind: "shell", output: "cursor-shell-ran\n" });
  });

  it("injects the MCP endpoint with the session's bearer header: the SDK calls the tool itself, and no command line, log line or sidecar environment shows the token", async () => {
    const { session, events } = await lab.open({ mcp: mcpGrantFor(mcp.url, mcp.token) });
    const input = turnInput('call it @@tool echo {"text":"from-cursor"} @@then @@reply mcp said {{output}}');
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status, JSON.stringify(terminal.error)).toBe("completed");
    expect(mcp.calls).toContainEqual({ tool: "echo", args: { text: "from-cursor" } });
    expect(mcp.rejectedRequests).toBe(0);
    const [started] = ofType(events.events, "tool_call.started", input.turnId);
    expect(started).toMatchObject({
      kind: "mcp",
      name: "mcp__switchyard__echo",
      server: "switchyard",
      title: "switchyard/echo",
    });
    expect(ofType(events.events, "tool_call.completed", input.turnId)[0]).toMatchObject({
      status: "completed",
      output: "echo: from-cursor",
    });
    expect(events.textOf(input.turnId)).toBe("mcp said echo: from-cursor");
    const run = lab.backend.runs.find((r) => r.userText === input.text)!;
    expect(run.mcpServers?.map((server) => [server.serverName, server.status])).toEqual([["switchyard", "connected"]]);
    // The token travels over the sidecar's stdin only.
    expect(descendantCommandLines().some((line) => line.includes("cursor-sidecar.js"))).toBe(true);
    expect(descendantCommandLines().filter((line) => line.includes(mcp.token))).toEqual([]);
    expect(environmentOf(session.processId!).filter((entry) => entry.includes(mcp.token))).toEqual([]);
    expect(lab.ctx.logs.filter((line) => JSON.stringify(line).includes(mcp.token))).toEqual([]);
    // Diagnostics get the server's name, transport and header names only.
    const opened = lab.ctx.logs.filter(
      (line) => line.message === "cursor sidecar started" && line.fields["pid"] === session.processId,
    );
    expect(opened.map((line) => line.fields["mcpServers"])).toEqual([
      { switchyard: { type: "http", headers: ["Authorization"] } },
    ]);
    // Nor does any file the SDK wrote: its agent store, Cursor's data folder, the home.
    await session.close();
    expect(filesContaining([lab.home.root, lab.ctx.context.paths.dataDir], mcp.token)).toEqual([]);
    // (The scan does read the agent store: the agent's own id is in it.)
    expect(filesContaining([lab.ctx.context.paths.dataDir], session.resumeCursor!).length).toBeGreaterThan(0);
  });

  it("without the right bearer token the MCP server refuses the SDK and the tool is never offered (the header is what authenticates)", async () => {
    const before = mcp.rejectedRequests;
    const { session, events } = await lab.open({
      mcp: mcpGrantFor(mcp.url, "sy_wrong_token_for_the_negative_control"),
    });
    const input = turnInput('call it @@tool echo {"text":"refused"} @@then @@reply never');
    await session.startTurn(input);
    await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(mcp.rejectedRequests).toBeGreaterThan(before);
    expect(mcp.calls).not.toContainEqual({ tool: "echo", args: { text: "refused" } });
    expect(events.textOf(input.turnId)).toContain("TOOL NOT OFFERED: echo");
  });

  it("steers natively when the backend delivers the message into the running turn", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("hold on @@hold steer-delivered @@reply done after the steer");
    await session.startTurn(input);
    await lab.backend.waitForHold("steer-delivered", 60_000);
    await session.steerTurn({ turnId: input.turnId, text: "also mention the weather" });
    lab.backend.release("steer-delivered");
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("completed");
    const run = lab.backend.runs.find((r) => r.userText === input.text)!;
    expect(run.steers).toEqual([expect.objectContaining({ text: "also mention the weather", answer: "delivered" })]);
    expect(ofType(events.events, "warning", input.turnId)).toEqual([]);
  });

  for (const answer of ["queuedForNextTurn", "cancelled", "rejected"] as const) {
    it(`refuses the steer when the backend answers ${answer} (the SDK's revert_to_followup), so the host queues it; the turn goes on and gets a notice`, async () => {
      const { session, events } = await lab.open();
      const gate = `steer-${answer}`;
      const input = turnInput(`hold on @@hold ${gate} @@reply done without the steer`);
      await session.startTurn(input);
      await lab.backend.waitForHold(gate, 60_000);
      lab.backend.answerSteersWith(answer);
      try {
        await expect(session.steerTurn({ turnId: input.turnId, text: `steer for ${answer}` })).rejects.toMatchObject({
          code: "conflict",
          details: { outcome: "revert_to_followup" },
        });
      } finally {
        lab.backend.answerSteersWith("delivered");
      }
      expect(ofType(events.events, "warning", input.turnId).map((e) => e.message)).toEqual([
        expect.stringContaining("revert_to_followup"),
      ]);
      lab.backend.release(gate);
      expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000)).status).toBe(
        "completed",
      );
      const run = lab.backend.runs.find((r) => r.userText === input.text)!;
      expect(run.steers).toEqual([expect.objectContaining({ text: `steer for ${answer}`, answer })]);
    });
  }

  it("interrupts with run.cancel() (the SDK closes the run's stream), and the next turn runs on the same agent", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("hold on @@hold never-released @@reply never");
    await session.startTurn(input);
    await lab.backend.waitForHold("never-released", 60_000);
    await session.interruptTurn({ turnId: input.turnId });
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("interrupted");
    const cancelled = lab.backend.runs.find((r) => r.userText === input.text)!;
    expect(cancelled.status).toBe("cancelled");
    // Interrupt-and-restart: a new run right after, in the same conversation.
    const next = turnInput("after it @@reply back again");
    await session.startTurn(next);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === next.turnId, 60_000)).status).toBe("completed");
    expect(lab.backend.runs.find((r) => r.userText === next.text)!.conversationId).toBe(cancelled.conversationId);
  });

  it("interrupts a turn inside a shell command and ends the command", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("keep at it @@shell sleep 45; echo never-printed @@then @@reply never");
    await session.startTurn(input);
    const started = await events.waitFor("tool_call.started", (e) => e.turnId === input.turnId, 60_000);
    await session.interruptTurn({ turnId: input.turnId });
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000)).status).toBe(
      "interrupted",
    );
    expect(ofType(events.events, "tool_call.completed", input.turnId)).toEqual([
      expect.objectContaining({ itemId: started.itemId, status: "failed" }),
    ]);
  });

  it("resumes the agent in a new sidecar process: the same conversation id, and the history the checkpoint carried", async () => {
    const first = await lab.open({ threadId: "thread-resume" });
    const opening = turnInput("remember the word aubergine @@reply noted");
    await first.session.startTurn(opening);
    await first.events.waitFor("turn.terminal", (e) => e.turnId === opening.turnId, 60_000);
    const agentId = first.session.resumeCursor!;
    const firstPid = first.session.processId!;
    await first.session.close();

    const second = await lab.open({ threadId: "thread-resume", resumeCursor: agentId });
    expect(second.session.processId).not.toBe(firstPid);
    expect(second.session.resumeCursor).toBe(agentId);
    const recall = turnInput("recall @@reply history: {{history}}");
    await second.session.startTurn(recall);
    expect((await second.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, 60_000)).status).toBe(
      "completed",
    );
    expect(second.events.textOf(recall.turnId)).toBe("history: remember the word aubergine @@reply noted");
    expect(lab.backend.runs.find((r) => r.userText === recall.text)!.conversationId).toBe(agentId);
    // Resuming does not announce a new cursor.
    expect(second.events.events.filter((e) => e.type === "session.resume_cursor")).toEqual([]);
  });

  it("injects the MCP endpoint into a resumed agent as well: the new session's own credential reaches the server", async () => {
    // Each session gets its own token from the host; the resumed one must use its own.
    const resumedMcp = await startTestMcpServer({ token: "sy_cursor_resumed_session_token_0123456789" });
    try {
      const first = await lab.open({ threadId: "thread-mcp-resume", mcp: mcpGrantFor(mcp.url, mcp.token) });
      const opening = turnInput("hello @@reply hi");
      await first.session.startTurn(opening);
      await first.events.waitFor("turn.terminal", (e) => e.turnId === opening.turnId, 60_000);
      const agentId = first.session.resumeCursor!;
      await first.session.close();

      const second = await lab.open({
        threadId: "thread-mcp-resume",
        resumeCursor: agentId,
        mcp: mcpGrantFor(resumedMcp.url, resumedMcp.token),
      });
      const input = turnInput('call it @@tool echo {"text":"after-resume"} @@then @@reply mcp said {{output}}');
      await second.session.startTurn(input);
      expect((await second.events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000)).status).toBe(
        "completed",
      );
      expect(second.events.textOf(input.turnId)).toBe("mcp said echo: after-resume");
      expect(resumedMcp.calls).toEqual([{ tool: "echo", args: { text: "after-resume" } }]);
      expect(resumedMcp.rejectedRequests).toBe(0);
      expect(descendantCommandLines().filter((line) => line.includes(resumedMcp.token))).toEqual([]);
    } finally {
      await resumedMcp.close();
    }
  });

  it("resumes without checkpoints too: the same conversation, but no history, which is the backend's to keep", async () => {
    const forgetful = await createCursorLab({ backend: { checkpoints: false } });
    try {
      const first = await forgetful.open({ threadId: "thread-no-checkpoints" });
      const opening = turnInput("remember the word parsnip @@reply noted");
      await first.session.startTurn(opening);
      expect((await first.events.waitFor("turn.terminal", (e) => e.turnId === opening.turnId, 60_000)).status).toBe(
        "completed",
      );
      const agentId = first.session.resumeCursor!;
      await first.session.close();

      const second = await forgetful.open({ threadId: "thread-no-checkpoints", resumeCursor: agentId });
      const recall = turnInput("recall @@reply history: [{{history}}]");
      await second.session.startTurn(recall);
      expect((await second.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, 60_000)).status).toBe(
        "completed",
      );
      expect(second.events.textOf(recall.turnId)).toBe("history: []");
      expect(forgetful.backend.runs.find((r) => r.userText === recall.text)!.conversationId).toBe(agentId);
    } finally {
      await forgetful.dispose();
    }
  });

  it("refuses to reopen an agent the thread's store does not have, with not_found", async () => {
    await expect(
      lab.open({ threadId: "thread-unknown-agent", resumeCursor: "agent-00000000-0000-4000-8000-000000000000" }),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  it("runs the turn's model when it names one, and keeps it for later turns", async () => {
    const { session, events } = await lab.open();
    const named = turnInput("with a model @@reply large", { model: "fake-model-large" });
    await session.startTurn(named);
    await events.waitFor("turn.terminal", (e) => e.turnId === named.turnId, 60_000);
    const later = turnInput("no model named @@reply still large");
    await session.startTurn(later);
    await events.waitFor("turn.terminal", (e) => e.turnId === later.turnId, 60_000);
    expect(lab.backend.runs.find((r) => r.userText === named.text)!.model).toBe("fake-model-large");
    expect(lab.backend.runs.find((r) => r.userText === later.text)!.model).toBe("fake-model-large");
  });

  it("refuses a turn in a runtime mode it cannot enforce, before anything reaches Cursor", async () => {
    const { session } = await lab.open({ runtimeMode: "approval-required" });
    const input = turnInput("must not run @@reply ran anyway", { runtimeMode: "approval-required" });
    await expect(session.startTurn(input)).rejects.toMatchObject({
      code: "invalid_input",
      details: { runtimeMode: "approval-required", offered: ["full-access"] },
    });
    expect(lab.backend.runs.some((r) => r.userText === input.text)).toBe(false);
  });

  it("refuses a second turn while one runs (the agent takes one run at a time)", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("hold on @@hold busy-gate @@reply first done");
    await session.startTurn(input);
    await lab.backend.waitForHold("busy-gate", 60_000);
    await expect(session.startTurn(turnInput("second @@reply never"))).rejects.toMatchObject({ code: "conflict" });
    lab.backend.release("busy-gate");
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000)).status).toBe("completed");
  });

  it("fails the turn with the backend's error when the run fails (a client error: the SDK does not retry it)", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("break it @@fail 400 the backend broke on purpose");
    await session.startTurn(input);
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal.status).toBe("failed");
    expect(terminal.error?.message).toContain("the backend broke on purpose");
    expect(lab.backend.runs.filter((r) => r.userText === input.text).map((r) => r.status)).toEqual(["failed"]);
  });

  it("ends the turn failed and reports the session exited when the sidecar dies", async () => {
    const { session, events } = await lab.open();
    const input = turnInput("hold on @@hold crash-gate @@reply never");
    await session.startTurn(input);
    await lab.backend.waitForHold("crash-gate", 60_000);
    process.kill(session.processId!, "SIGKILL");
    const terminal = await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000);
    expect(terminal).toMatchObject({ status: "failed", error: { code: "cursor_sidecar_exited" } });
    expect((await events.waitFor("session.exited")).reason).toMatch(/cursor sidecar exited/);
    await expect(session.startTurn(turnInput("after the crash"))).rejects.toMatchObject({ code: "session_closed" });
  });
});

describe("Cursor probes and the Node the SDK needs", () => {
  it("inspects without starting a sidecar: the SDK's version, the Node, the key in the environment, the custom models", async () => {
    const spawnedBefore = lab.ctx.processes.spawned.length;
    const status = await lab.adapter.probe({ depth: "inspect" });
    expect(status).toMatchObject({ installed: true, executable: true, authenticated: true, version: "1.0.32" });
    expect(lab.ctx.processes.spawned.length).toBe(spawnedBefore);
  });

  it("probes fully by listing the account's models through the SDK, never creating an agent or a run", async () => {
    const runsBefore = lab.backend.runs.length;
    const status = await lab.adapter.probe({ depth: "full" });
    expect(status).toMatchObject({ installed: true, executable: true, authenticated: true, version: "1.0.32" });
    expect(status.models.map((model) => model.id)).toEqual(["fake-model", "fake-model-large"]);
    expect(lab.backend.runs.length).toBe(runsBefore);
  });

  it("reports a key the backend refuses as not authenticated", async () => {
    const strict = await createCursorLab({
      backend: { apiKey: "the-only-good-key" },
      environment: { CURSOR_API_KEY: "a-bad-key" },
    });
    try {
      const status = await strict.adapter.probe({ depth: "full" });
      expect(status).toMatchObject({ installed: true, authenticated: false });
      expect(status.message).toMatch(/refused the API key/);
      expect(status.message).not.toContain("a-bad-key");
    } finally {
      await strict.dispose();
    }
  });

  it("says what to set when there is no key", async () => {
    const keyless = await createCursorLab({ withoutEnv: ["CURSOR_API_KEY"] });
    try {
      const status = await keyless.adapter.probe({ depth: "full" });
      expect(status).toMatchObject({ installed: true, executable: true, authenticated: false });
      expect(status.message).toContain("CURSOR_API_KEY");
    } finally {
      await keyless.dispose();
    }
  });

  it("refuses a Node older than 22.13 with a reason that names it, in the probe and at session open", async () => {
    // A stand-in `node` that answers --version like Node 20 (the host's own Node may be anything).
    const fakeNode = path.join(lab.home.root, "node20");
    writeFileSync(fakeNode, "#!/bin/sh\necho v20.20.2\n", { mode: 0o755 });
    const old = await createCursorLab({ driverOptions: { nodePath: fakeNode } });
    try {
      const status = await old.adapter.probe({ depth: "inspect" });
      expect(status).toMatchObject({ installed: true, executable: false });
      expect(status.message).toContain(`nodePath "${fakeNode}" is v20.20.2`);
      expect(status.message).toContain(">= 22.13");
      await expect(old.open()).rejects.toMatchObject({
        code: "provider_unavailable",
        message: expect.stringContaining("v20.20.2"),
      });
    } finally {
      await old.dispose();
    }
  });

  it("loads the SDK from the sdkPath option in the sidecar, and says where it looked when that folder holds none", async () => {
    // A package that names itself @cursor/sdk and throws when imported: only a sidecar that
    // imports from sdkPath can report its message.
    const decoy = path.join(lab.home.root, "decoy", "node_modules", "@cursor", "sdk");
    mkdirSync(decoy, { recursive: true });
    writeFileSync(
      path.join(decoy, "package.json"),
      JSON.stringify({
        name: "@cursor/sdk",
        version: "1.0.32",
        type: "module",
        exports: { ".": { import: "./index.js" }, "./sqlite": { import: "./index.js" } },
      }),
    );
    writeFileSync(path.join(decoy, "index.js"), 'throw new Error("the decoy SDK from sdkPath was imported");\n');
    const decoyed = await createCursorLab({ driverOptions: { sdkPath: decoy } });
    const empty = await createCursorLab({ driverOptions: { sdkPath: path.join(lab.home.root, "no-sdk-here") } });
    try {
      const status = await decoyed.adapter.probe({ depth: "full" });
      expect(status).toMatchObject({ installed: true, executable: true, version: "1.0.32" });
      expect(status.message).toContain(`The Cursor SDK in ${decoy} did not load in its sidecar`);
      expect(status.message).toContain("the decoy SDK from sdkPath was imported");
      await expect(decoyed.open()).rejects.toMatchObject({
        code: "provider_unavailable",
        message: expect.stringContaining("the decoy SDK from sdkPath was imported"),
      });
      const missing = await empty.adapter.probe({ depth: "inspect" });
      expect(missing).toMatchObject({ installed: false, executable: false });
      expect(missing.message).toContain(
        `The sdkPath option names ${path.join(lab.home.root, "no-sdk-here")}, which holds no @cursor/sdk package`,
      );
      await expect(empty.open()).rejects.toMatchObject({
        code: "provider_unavailable",
        message: expect.stringContaining("holds no @cursor/sdk package"),
      });
    } finally {
      await decoyed.dispose();
      await empty.dispose();
    }
  });

  it("runs the SDK on the host's own Node when no nodePath is set, whatever the instance's PATH holds", async () => {
    // No node on this PATH: the sidecar must not look for one there.
    const nodeless = await createCursorLab({ environment: { PATH: path.join(lab.home.root, "no-bin-here") } });
    try {
      const status = await nodeless.adapter.probe({ depth: "inspect" });
      expect(status).toMatchObject({ installed: true, executable: true, version: "1.0.32" });
      const { session, events } = await nodeless.open();
      const input = turnInput("host node @@reply on the host's node");
      await session.startTurn(input);
      expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, 60_000)).status).toBe(
        "completed",
      );
      expect(nodeless.ctx.logs.find((line) => line.message === "cursor sidecar started")?.fields["node"]).toBe(
        process.version,
      );
    } finally {
      await nodeless.dispose();
    }
  });
});
