/**
 * The OpenCode adapter against the real `opencode serve` (opencode-ai 1.18.33), driven by the
 * scripted Chat Completions model: what is specific to this provider. Slow (each session starts
 * its own server, 2-8 s here); run it on its own.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  commandLineOf,
  environmentVariablesOf,
  isRunning,
  startTestMcpServer,
  turnInput,
  type TestMcpServer,
} from "@switchyard/testkit";
import type { AdapterEvent } from "@switchyard/sdk";
import { MCP_TOKEN_ENV, instanceDirectories } from "../src/index.js";
import { SECOND_MODEL, createOpenCodeLab, grantFor, type OpenCodeLab } from "./opencode-lab.js";

let lab: OpenCodeLab;
let mcp: TestMcpServer;
const TOKEN = "sy_opencode-adapter-test-token";

beforeAll(async () => {
  lab = await createOpenCodeLab({ driverOptions: { interruptGraceMs: 20_000 } });
  mcp = await startTestMcpServer({ token: TOKEN });
}, 60_000);

afterAll(async () => {
  await lab?.dispose();
  await mcp?.close();
}, 60_000);

const TIMEOUT = 60_000;
type Of<T extends AdapterEvent["type"]> = Extract<AdapterEvent, { type: T }>;
const ofType = <T extends AdapterEvent["type"]>(events: readonly AdapterEvent[], type: T, turnId?: string): Of<T>[] =>
  events.filter(
    (event): event is Of<T> =>
      event.type === type && (turnId === undefined || ("turnId" in event && event.turnId === turnId)),
  );
const texts = (events: readonly AdapterEvent[], turnId: string): string[] =>
  ofType(events, "message.completed", turnId).map((event) => event.text);

/** Every file under a directory. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}

describe("OpenCode turns on opencode serve", () => {
  it("streams text, reports a shell command, and sums usage and cost from every step-finish part", async () => {
    const { session, events } = await lab.open();
    expect(session.resumeCursor).toMatch(/^ses_/);
    expect(ofType(events.events, "session.resume_cursor")).toEqual([
      { type: "session.resume_cursor", cursor: session.resumeCursor },
    ]);
    const t = turnInput("run it @@shell echo opencode-shell @@then @@reply shell said {{output}}");
    await session.startTurn(t);
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status, JSON.stringify(end.error)).toBe("completed");
    expect(ofType(events.events, "turn.started", t.turnId)).toHaveLength(1);
    const command = ofType(events.events, "tool_call.started", t.turnId)[0];
    expect(command).toMatchObject({ kind: "command", name: "bash", title: "echo opencode-shell" });
    expect(ofType(events.events, "tool_call.completed", t.turnId)[0]).toMatchObject({
      itemId: command!.itemId,
      status: "completed",
      output: "opencode-shell\n",
    });
    expect(events.textOf(t.turnId)).toBe("shell said opencode-shell");
    expect(texts(events.events, t.turnId)).toEqual(["shell said opencode-shell"]);
    // Two model steps (the tool call, then the answer), each with tokens and a price.
    const usage = end.usage!;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(usage.costUsd).toBeGreaterThan(0);
    expect(usage.byModel?.["fake/fake-model"]).toEqual({
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadInputTokens: usage.cacheReadInputTokens,
      cacheCreationInputTokens: usage.cacheCreationInputTokens,
      reasoningOutputTokens: usage.reasoningOutputTokens,
      costUsd: usage.costUsd,
    });
    await session.close();
  }, 120_000);

  it("calls an MCP tool with the session's own bearer token, which is only in its server's environment, and its server takes no request without its password", async () => {
    const { session, events } = await lab.open({ mcp: grantFor(mcp.url, TOKEN, "probe") });
    const t = turnInput('call it @@tool echo {"text":"hi-opencode-mcp"} @@then @@reply got {{output}}');
    await session.startTurn(t);
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status, JSON.stringify(end.error)).toBe("completed");
    expect(ofType(events.events, "tool_call.started", t.turnId)[0]).toMatchObject({
      kind: "mcp",
      name: "probe_echo",
      server: "probe",
      title: "probe/echo",
    });
    expect(mcp.calls).toContainEqual({ tool: "echo", args: { text: "hi-opencode-mcp" } });
    expect(texts(events.events, t.turnId)).toEqual(["got echo: hi-opencode-mcp"]);
    // The shared orchestration instructions came with the first prompt of the conversation, once,
    // and stay in it: a later turn does not add them again.
    const count = (needle: string) =>
      JSON.stringify(lab.server.requests.filter((r) => !r.sideCall).at(-1)?.body ?? null).split(needle).length - 1;
    expect(count("ORCHESTRATION-MARKER")).toBe(1);
    const later = turnInput("later @@reply fine");
    await session.startTurn(later);
    await events.waitFor("turn.terminal", (e) => e.turnId === later.turnId, TIMEOUT);
    expect(count("ORCHESTRATION-MARKER")).toBe(1);
    expect(count("later @@reply fine")).toBe(1);

    const pid = session.serverPid!;
    const env = environmentVariablesOf(pid);
    expect(env[MCP_TOKEN_ENV]).toBe(TOKEN);
    expect(env["OPENCODE_CONFIG_CONTENT"]).not.toContain(TOKEN);
    expect(env["OPENCODE_CONFIG_CONTENT"]).toContain(`{env:${MCP_TOKEN_ENV}}`);
    expect(commandLineOf(pid).join(" ")).not.toContain(TOKEN);
    // The server, reachable by every local user on loopback, answers only its own client.
    expect((await fetch(`${session.serverUrl}/session`)).status).toBe(401);
    const password = env["OPENCODE_SERVER_PASSWORD"]!;
    expect(password.length).toBeGreaterThanOrEqual(24);
    expect(commandLineOf(pid).join(" ")).not.toContain(password);
    await session.close();
    expect(isRunning(pid)).toBe(false);
    // Nothing OpenCode or the plugin wrote (db, logs) holds the token.
    const dirs = instanceDirectories(lab.ctx.context.paths.dataDir, "opencode-test");
    const written = filesUnder(dirs.root);
    expect(written.some((file) => file.endsWith(".log"))).toBe(true);
    for (const file of written) expect(readFileSync(file).includes(TOKEN), file).toBe(false);
  }, 120_000);

  it("does not repeat orchestration instructions a host already put into the first turn's text", async () => {
    const grant = grantFor(mcp.url, TOKEN, "probe");
    const { session, events } = await lab.open({ mcp: grant });
    const t = turnInput(
      `<switchyard_instructions>\n${grant.instructions}\n</switchyard_instructions>\n\nfolded already @@reply ok`,
    );
    await session.startTurn(t);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT)).status).toBe("completed");
    const request = lab.server.requests.find((r) => r.userText?.includes("folded already"));
    expect(JSON.stringify(request?.body).split("ORCHESTRATION-MARKER").length - 1).toBe(1);
    await session.close();
  }, 120_000);

  it("refuses a session whose MCP credential OpenCode's server cannot use, as a provider error, and leaves no server behind", async () => {
    const before = lab.ctx.processes.spawned.length;
    const failure = await lab
      .open({ mcp: grantFor(mcp.url, "sy_not-this-sessions-token", "probe") })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: "provider_error",
      message: expect.stringContaining('could not connect to the Switchyard MCP endpoint "probe"'),
    });
    expect((failure as Error).message).toContain("the session's credential was refused");
    const started = lab.ctx.processes.spawned.slice(before);
    expect(started).toHaveLength(1);
    for (const child of started) expect(isRunning(child.pid)).toBe(false);
  }, 120_000);

  it("steers a text-only step after it and a tool step into its next request, both inside the steered turn", async () => {
    const { session, events } = await lab.open();
    // A text-only step: the steer waits for it, then gets its own answer before session.idle.
    const text = turnInput("hold on @@hold oc-steer-text @@reply first-answer");
    await session.startTurn(text);
    await lab.server.waitForHold("oc-steer-text", TIMEOUT);
    await session.steerTurn({ turnId: text.turnId, text: "and then @@reply steered-after-text" });
    lab.server.release("oc-steer-text");
    const textEnd = await events.waitFor("turn.terminal", (e) => e.turnId === text.turnId, TIMEOUT);
    expect(textEnd.status).toBe("completed");
    expect(texts(events.events, text.turnId)).toEqual(["first-answer", "steered-after-text"]);

    // A tool step: the steer is folded into the request after the tool result, and the step
    // the first prompt planned after the tool never runs.
    const tool = turnInput("slow @@shell sleep 2 && echo slept @@then @@reply planned-final");
    await session.startTurn(tool);
    await events.waitFor("tool_call.started", (e) => e.turnId === tool.turnId, TIMEOUT);
    await session.steerTurn({ turnId: tool.turnId, text: "change of plan @@reply steered-into-tool" });
    const toolEnd = await events.waitFor("turn.terminal", (e) => e.turnId === tool.turnId, TIMEOUT);
    expect(toolEnd.status).toBe("completed");
    expect(texts(events.events, tool.turnId)).toEqual(["steered-into-tool"]);
    const folded = lab.server.requests.find((r) => r.userText === "change of plan @@reply steered-into-tool");
    expect(folded?.parsed?.items.map((item) => item.type)).toEqual(expect.arrayContaining(["tool_result", "user"]));
    expect(
      ofType(events.events, "turn.terminal").filter((e) => e.turnId === text.turnId || e.turnId === tool.turnId),
    ).toHaveLength(2);
    await expect(session.steerTurn({ turnId: tool.turnId, text: "too late" })).rejects.toMatchObject({
      code: "turn_not_active",
    });
    await session.close();
  }, 180_000);

  it("interrupts with session.abort; the next turn is not cut short by the abort's second idle and sees the aborted prompt", async () => {
    const { session, events } = await lab.open();
    const held = turnInput("wait here @@hold oc-interrupt @@reply never-said");
    await session.startTurn(held);
    await lab.server.waitForHold("oc-interrupt", TIMEOUT);
    await session.interruptTurn({ turnId: held.turnId });
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === held.turnId, TIMEOUT);
    expect(end.status).toBe("interrupted");
    expect(texts(events.events, held.turnId)).toEqual([]);
    lab.server.release("oc-interrupt");
    const next = turnInput("recall @@reply history: {{history}}");
    await session.startTurn(next);
    const nextEnd = await events.waitFor("turn.terminal", (e) => e.turnId === next.turnId, TIMEOUT);
    expect(nextEnd.status).toBe("completed");
    expect(texts(events.events, next.turnId)).toEqual(["history: wait here @@hold oc-interrupt @@reply never-said"]);
    await session.close();
  }, 120_000);

  it("interrupts a turn whose prompt OpenCode had not started yet (the abort is sent again once it runs)", async () => {
    const { session, events } = await lab.open();
    const early = turnInput("too early @@hold oc-early-interrupt @@reply never-said");
    await session.startTurn(early);
    await session.interruptTurn({ turnId: early.turnId });
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === early.turnId, TIMEOUT);
    expect(end.status).toBe("interrupted");
    // OpenCode itself ended the turn: the grace timer that restarts an unresponsive server did not.
    expect(ofType(events.events, "warning", early.turnId)).toEqual([]);
    lab.server.release("oc-early-interrupt");
    await session.close();
  }, 120_000);
});

describe("OpenCode runtime requests", () => {
  it("round-trips approvals: accept runs the command, decline lets the agent carry on with feedback, the Switchyard tools never ask", async () => {
    const marker = path.join(lab.home.cwd, "approved.txt");
    const { session, events } = await lab.open({
      runtimeMode: "approval-required",
      mcp: grantFor(mcp.url, TOKEN, "switchyard"),
    });
    const accepted = turnInput(
      `make it @@tool echo {"text":"no approval needed"} @@then @@shell touch ${marker} && echo made @@then @@reply made {{output}}`,
      { runtimeMode: "approval-required" },
    );
    await session.startTurn(accepted);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === accepted.turnId, TIMEOUT);
    expect(opened.request).toMatchObject({
      kind: "approval",
      approvalKind: "command",
      title: `touch ${marker} && echo made`,
    });
    expect(mcp.calls).toContainEqual({ tool: "echo", args: { text: "no approval needed" } });
    expect(existsSync(marker)).toBe(false);
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    const acceptedEnd = await events.waitFor("turn.terminal", (e) => e.turnId === accepted.turnId, TIMEOUT);
    expect(acceptedEnd.status).toBe("completed");
    expect(existsSync(marker)).toBe(true);
    expect(ofType(events.events, "runtime_request.resolved", accepted.turnId)).toEqual([
      {
        type: "runtime_request.resolved",
        turnId: accepted.turnId,
        requestId: opened.requestId,
        resolution: "answered",
      },
    ]);
    expect(ofType(events.events, "runtime_request.opened", accepted.turnId)).toHaveLength(1);

    const declined = turnInput("try @@shell echo refused-command @@then @@reply carried on: {{output}}", {
      runtimeMode: "approval-required",
    });
    await session.startTurn(declined);
    const asked = await events.waitFor("runtime_request.opened", (e) => e.turnId === declined.turnId, TIMEOUT);
    await session.respondToRuntimeRequest(asked.requestId, { kind: "approval", decision: "decline" });
    const declinedEnd = await events.waitFor("turn.terminal", (e) => e.turnId === declined.turnId, TIMEOUT);
    expect(declinedEnd.status).toBe("completed");
    expect(ofType(events.events, "tool_call.completed", declined.turnId)[0]?.status).toBe("declined");
    expect(texts(events.events, declined.turnId)[0]).toContain("carried on:");
    await expect(
      session.respondToRuntimeRequest(asked.requestId, { kind: "approval", decision: "accept" }),
    ).rejects.toMatchObject({ code: "not_found" });
    await session.close();
  }, 180_000);

  it("an interrupt cancels a pending approval: the request resolves cancelled and its tool ends failed, not declined", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const t = turnInput("risky @@shell echo interrupted-while-asking @@then @@reply never", {
      runtimeMode: "approval-required",
    });
    await session.startTurn(t);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === t.turnId, TIMEOUT);
    await session.interruptTurn({ turnId: t.turnId });
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status).toBe("interrupted");
    expect(ofType(events.events, "runtime_request.resolved", t.turnId)).toEqual([
      { type: "runtime_request.resolved", turnId: t.turnId, requestId: opened.requestId, resolution: "cancelled" },
    ]);
    expect(ofType(events.events, "tool_call.completed", t.turnId).map((e) => e.status)).toEqual(["failed"]);
    await session.close();
  }, 120_000);

  it("turns OpenCode's question tool into a user-input request and hands the chosen label back", async () => {
    const { session, events } = await lab.open();
    const questions = {
      questions: [
        {
          question: "Which colour?",
          header: "Colour",
          options: [
            { label: "Blue", description: "calm" },
            { label: "Red", description: "loud" },
          ],
        },
      ],
    };
    const t = turnInput(`ask @@tool question ${JSON.stringify(questions)} @@then @@reply chose {{output}}`);
    await session.startTurn(t);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(opened.request).toEqual({
      kind: "user_input",
      blocking: true,
      questions: [
        {
          id: "q1",
          header: "Colour",
          question: "Which colour?",
          options: [
            { label: "Blue", description: "calm" },
            { label: "Red", description: "loud" },
          ],
        },
      ],
    });
    await session.respondToRuntimeRequest(opened.requestId, { kind: "user_input", answers: { q1: "Blue" } });
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status).toBe("completed");
    expect(texts(events.events, t.turnId)[0]).toContain("Blue");
    await session.close();
  }, 120_000);

  it("observes a native sub-agent (the task tool) without a thread: spawned with its task, its transcript, finished with its model and usage; its approvals and usage belong to the parent's turn", async () => {
    const { session, events } = await lab.open({ runtimeMode: "approval-required" });
    const task = {
      description: "child job",
      prompt: "child work @@shell echo from-the-child @@then @@reply child-answer {{output}}",
      subagent_type: "general",
    };
    const t = turnInput(`delegate @@tool task ${JSON.stringify(task)} @@then @@reply parent got it`, {
      runtimeMode: "approval-required",
    });
    await session.startTurn(t);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(opened.request).toMatchObject({ kind: "approval", approvalKind: "command", title: "echo from-the-child" });
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status).toBe("completed");
    const observed = ofType(events.events, "subagent.observed", t.turnId);
    // Running (again as more becomes known: its model), then completed once.
    expect(observed.at(-1)!.status).toBe("completed");
    expect(observed.slice(0, -1).map((e) => e.status)).toEqual(observed.slice(0, -1).map(() => "running"));
    expect(observed[0]).toMatchObject({ nativeId: expect.stringMatching(/^ses_/), title: "child job" });
    expect(observed[0]!.nativeId).not.toBe(session.resumeCursor);
    // The child's approval, routed through the parent's turn, names the child.
    expect(opened.subagentNativeId).toBe(observed[0]!.nativeId);
    expect(observed.at(-1)).toMatchObject({
      nativeId: observed[0]!.nativeId,
      summary: expect.stringContaining("child-answer"),
    });
    expect(observed.every((e) => e.nativeThreadId === undefined)).toBe(true);
    const taskCall = ofType(events.events, "tool_call.started", t.turnId).find((e) => e.name === "task");
    expect(taskCall).toMatchObject({ kind: "subagent", title: "child job" });
    // Spawned: tied to the task call, with its prompt and agent type.
    // (The scripted model fills `{{output}}` in the call it makes, so the prompt is the call's.)
    const prompt = (taskCall!.input as { prompt: string }).prompt;
    expect(prompt).toMatch(/^child work /);
    expect(observed[0]).toMatchObject({ parentItemId: taskCall!.itemId, task: prompt, agentType: "general" });
    // Finished: the model it ran on and its own usage (its two steps), part of the turn's.
    const finished = observed.at(-1)!;
    expect(finished).toMatchObject({ parentItemId: taskCall!.itemId, agentType: "general" });
    expect(finished.model).toMatch(/\//);
    expect(finished.usage!.inputTokens).toBeGreaterThan(0);
    expect(finished.usage!.outputTokens).toBeGreaterThan(0);
    expect(finished.usage!.inputTokens!).toBeLessThan(end.usage!.inputTokens!);
    // Its transcript: the instructions it got and what it answered.
    const transcript = ofType(events.events, "subagent.message", t.turnId);
    expect(transcript.every((e) => e.nativeId === observed[0]!.nativeId)).toBe(true);
    expect(transcript.filter((e) => e.role === "user").map((e) => e.text)).toEqual([prompt]);
    expect(transcript.filter((e) => e.role === "assistant").map((e) => e.text)).toContainEqual(
      expect.stringContaining("child-answer"),
    );
    // The child's own text and commands are its own: only the parent's answer is this turn's.
    expect(texts(events.events, t.turnId)).toEqual(["parent got it"]);
    expect(ofType(events.events, "tool_call.started", t.turnId).map((e) => e.name)).toEqual(["task"]);
    // Four model steps: two of the parent, two of the child; the usage counts all of them.
    const childRequests = lab.server.requests.filter((r) => r.userText?.startsWith("child work"));
    expect(childRequests.length).toBeGreaterThanOrEqual(2);
    expect(end.usage!.inputTokens).toBeGreaterThan(0);
    await session.close();
  }, 180_000);
});

describe("OpenCode conversations", () => {
  it("resumes the same OpenCode session on a new adapter (a restarted host) with its history, and refuses a cursor that is gone", async () => {
    const first = await lab.open();
    const remember = turnInput("remember @@reply noted oc-resume-marker");
    await first.session.startTurn(remember);
    expect((await first.events.waitFor("turn.terminal", (e) => e.turnId === remember.turnId, TIMEOUT)).status).toBe(
      "completed",
    );
    const cursor = first.session.resumeCursor!;
    await first.session.close();

    lab.restartAdapter();
    const resumed = await lab.open({ resumeCursor: cursor });
    expect(resumed.session.resumeCursor).toBe(cursor);
    expect(ofType(resumed.events.events, "session.resume_cursor")).toEqual([]);
    const recall = turnInput("recall @@reply history: {{history}}");
    await resumed.session.startTurn(recall);
    expect((await resumed.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, TIMEOUT)).status).toBe(
      "completed",
    );
    expect(texts(resumed.events.events, recall.turnId)).toEqual(["history: remember @@reply noted oc-resume-marker"]);
    await resumed.session.close();

    await expect(lab.open({ resumeCursor: "ses_gone0000000000000000000" })).rejects.toMatchObject({
      code: "not_found",
      message: expect.stringContaining("ses_gone"),
    });
  }, 180_000);

  it("forks after a given turn keeping exactly the turns up to it, or everything; a turn it never ran is not_found", async () => {
    const { session, events } = await lab.open();
    const turns = ["one", "two", "three"].map((word) => turnInput(`${word} @@reply said ${word}`));
    for (const t of turns) {
      await session.startTurn(t);
      expect((await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT)).status).toBe("completed");
    }
    const afterTwo = await session.forkThread({ afterTurnId: turns[1]!.turnId });
    const all = await session.forkThread({});
    expect(new Set([afterTwo.resumeCursor, all.resumeCursor, session.resumeCursor]).size).toBe(3);
    await expect(session.forkThread({ afterTurnId: "turn-never-ran" })).rejects.toMatchObject({ code: "not_found" });
    await session.close();

    const recallOn = async (cursor: string) => {
      const fork = await lab.open({ resumeCursor: cursor });
      const recall = turnInput("recall @@reply history: {{history}}");
      await fork.session.startTurn(recall);
      await fork.events.waitFor("turn.terminal", (e) => e.turnId === recall.turnId, TIMEOUT);
      const [text] = texts(fork.events.events, recall.turnId);
      await fork.session.close();
      return text;
    };
    expect(await recallOn(afterTwo.resumeCursor)).toBe("history: one @@reply said one | two @@reply said two");
    expect(await recallOn(all.resumeCursor)).toBe(
      "history: one @@reply said one | two @@reply said two | three @@reply said three",
    );
  }, 240_000);

  it("lists a model's variants as its efforts and sends a turn's effort as the prompt's variant", async () => {
    const status = await lab.adapter.probe({ depth: "full" });
    // OpenCode adds its own low/medium/high variants to a reasoning model beside the configured ones.
    expect(status.models.find((model) => model.id === SECOND_MODEL)?.efforts).toContain("high");
    const { session, events } = await lab.open();
    const input = turnInput("vary @@reply with effort", { model: SECOND_MODEL, effort: "high" });
    await session.startTurn(input);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === input.turnId, TIMEOUT)).status).toBe("completed");
    const request = lab.server.requests.find((r) => r.userText?.includes("vary @@reply"));
    expect((request?.body as { reasoning_effort?: string } | undefined)?.reasoning_effort).toBe("high");
  });

  it("applies a model per turn, restarts its server for a new runtime mode on the same conversation, and reads a snapshot without the instructions wrapper", async () => {
    const { session, events } = await lab.open();
    const first = turnInput("first @@reply on the second model", {
      model: SECOND_MODEL,
      instructions: "ROLE: be brief",
    });
    await session.startTurn(first);
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === first.turnId, TIMEOUT)).status).toBe("completed");
    const request = lab.server.requests.find((r) => r.userText?.includes("on the second model"));
    expect(request?.model).toBe("fake-model-2");
    expect(JSON.stringify(request?.body)).toContain("ROLE: be brief");
    const firstPid = session.serverPid!;

    const stricter = turnInput(
      "now @@shell echo needs-approval @@then @@reply after approval {{output}} history {{history}}",
      { runtimeMode: "approval-required" },
    );
    await session.startTurn(stricter);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === stricter.turnId, TIMEOUT);
    expect(session.serverPid).not.toBe(firstPid);
    expect(isRunning(firstPid)).toBe(false);
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    expect((await events.waitFor("turn.terminal", (e) => e.turnId === stricter.turnId, TIMEOUT)).status).toBe(
      "completed",
    );
    // The new server continued the same conversation, the first prompt's instructions included.
    expect(texts(events.events, stricter.turnId)[0]).toContain("history first @@reply on the second model");
    const second = lab.server.requests.find((r) => r.userText?.startsWith("now @@shell"));
    expect(JSON.stringify(second?.body)).toContain("ROLE: be brief");

    const snapshot = await session.readSnapshot!();
    expect(snapshot.turns).toEqual([
      { userText: "first @@reply on the second model", assistantText: "on the second model" },
      {
        userText: "now @@shell echo needs-approval @@then @@reply after approval {{output}} history {{history}}",
        assistantText: expect.stringContaining("after approval needs-approval"),
      },
    ]);
    await session.close();
  }, 180_000);

  it("ends a turn failed with the server's output when opencode serve dies, and reports the session exited", async () => {
    const { session, events } = await lab.open();
    const t = turnInput("hang @@hold oc-crash @@reply never");
    await session.startTurn(t);
    await lab.server.waitForHold("oc-crash", TIMEOUT);
    process.kill(-session.serverPid!, "SIGKILL");
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end).toMatchObject({
      status: "failed",
      error: {
        code: "opencode_exited",
        message: expect.stringContaining("opencode serve exited (code none, signal SIGKILL)"),
      },
    });
    expect(ofType(events.events, "session.exited")).toHaveLength(1);
    lab.server.release("oc-crash");
    await expect(session.startTurn(turnInput("again @@reply no"))).rejects.toMatchObject({ code: "session_closed" });
    await session.close();
  }, 120_000);
});
