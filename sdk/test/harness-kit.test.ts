import { describe, expect, it } from "vitest";
import type { AdapterEvent, ManagedProcess, ProviderStatus } from "@switchyard/core/spec";
import { createSilentLogger } from "../../core/src/logging/logger.js";
import { ProcessRunner } from "../../core/src/plugin-host/process-runner.js";
import {
  JsonLinesChannel,
  JsonRpcPeer,
  JsonRpcRequestError,
  LineSplitter,
  RuntimeRequestBook,
  TurnLedger,
  defineAdapter,
  type StartableSession,
} from "../src/index.js";

const logger = createSilentLogger();
const runner = new ProcessRunner(logger, null);

/** A real child process running a small Node script. */
function node(script: string): ManagedProcess {
  return runner.spawn(process.execPath, ["-e", script], { cwd: process.cwd(), label: "kit-test" });
}

function recorder(): { events: AdapterEvent[]; emit: (event: AdapterEvent) => void } {
  const events: AdapterEvent[] = [];
  return { events, emit: (event) => events.push(event) };
}

describe("LineSplitter", () => {
  it("keeps a multi-byte character split across chunks, splits on \\n only, trims \\r", () => {
    const splitter = new LineSplitter();
    const bytes = Buffer.from('{"t":"é\u2028x"}\r\nnext', "utf8");
    const cut = bytes.indexOf(0xa9); // inside the two bytes of "é"
    expect(splitter.push(bytes.subarray(0, cut))).toEqual([]);
    expect(splitter.push(bytes.subarray(cut))).toEqual(['{"t":"é\u2028x"}']);
    expect(splitter.flush()).toEqual(["next"]);
  });
});

describe("JsonLinesChannel and JsonRpcPeer over a real process", () => {
  it("routes responses, notifications and the harness's own requests in order", async () => {
    const child = node(`
      const rl = require("node:readline").createInterface({ input: process.stdin });
      rl.on("line", (line) => {
        const m = JSON.parse(line);
        if (m.method === "sum") {
          process.stdout.write(JSON.stringify({ method: "progress", params: { n: 1 } }) + "\\n");
          process.stdout.write(JSON.stringify({ id: 99, method: "ask", params: { q: "ok?" } }) + "\\n");
          process.stdout.write(JSON.stringify({ id: m.id, result: m.params.a + m.params.b }) + "\\n");
        } else if (m.method === "fail") {
          process.stdout.write(JSON.stringify({ id: m.id, error: { code: -32600, message: "no such thing" } }) + "\\n");
        } else if (m.id === 99) {
          process.stdout.write(JSON.stringify({ method: "answered", params: m.result }) + "\\n");
        }
      });`);
    const seen: string[] = [];
    let peer!: JsonRpcPeer;
    const channel = new JsonLinesChannel(child, { label: "echo", logger, onMessage: (m) => peer.receive(m) });
    peer = new JsonRpcPeer(channel, {
      jsonrpcField: false,
      onNotification: (n) => seen.push(`${n.method}:${JSON.stringify(n.params)}`),
      onRequest: async (r) => ({ yes: (r.params as { q: string }).q }),
    });
    await expect(peer.request<number>("sum", { a: 2, b: 3 })).resolves.toBe(5);
    expect(seen[0]).toBe('progress:{"n":1}');
    const failure = await peer.request("fail").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JsonRpcRequestError);
    expect(failure).toMatchObject({ method: "fail", rpcCode: -32600, message: "no such thing" });
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error("the answer to the harness's request never came back")), 5_000);
      const poll = setInterval(() => {
        if (seen.some((line) => line.startsWith("answered:"))) {
          clearInterval(poll);
          clearTimeout(deadline);
          resolve();
        }
      }, 10);
    });
    expect(seen).toContain('answered:{"yes":"ok?"}');
    await channel.stop(500, 500);
    expect(channel.closed).toBe(true);
  });

  it("fails pending requests when the harness dies, with its stderr tail, and never throws EPIPE", async () => {
    const child = node(`process.stderr.write("CODEX_HOME points to /nowhere but that path does not exist\\n"); process.stdin.once("data", () => process.exit(3));`);
    let peer!: JsonRpcPeer;
    const channel = new JsonLinesChannel(child, { label: "dying harness", logger, onMessage: (m) => peer.receive(m) });
    peer = new JsonRpcPeer(channel, { jsonrpcField: true, onNotification: () => undefined, onRequest: async () => null });
    const error = await peer.request("anything").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "session_closed" });
    expect((error as Error).message).toContain("dying harness exited (code 3");
    expect((error as Error).message).toContain("CODEX_HOME points to /nowhere");
    expect(() => channel.send({ late: true })).toThrow(/exited/);
    await expect(peer.request("after")).rejects.toMatchObject({ code: "session_closed" });
    peer.notify("ignored"); // a notification to a dead harness is dropped, not thrown
  });
});

describe("TurnLedger: what becomes of open items at turn.terminal", () => {
  it("closes open text with what streamed, ends open tools by the turn's status or as declined, cancels the turn's requests, one terminal", () => {
    const { events, emit } = recorder();
    const book = new RuntimeRequestBook<null>(emit, "req");
    const turn = new TurnLedger("turn-1", emit, book);
    turn.start("native-1");
    turn.start();
    turn.messageDelta("m1", "partial ");
    turn.messageDelta("m1", "answer");
    turn.reasoningDelta("r1", "thinking");
    turn.toolStarted({ itemId: "t1", kind: "command", name: "bash", title: "ls" });
    turn.toolStarted({ itemId: "t2", kind: "command", name: "bash", title: "rm" });
    turn.declineTool("t2");
    book.open("turn-1", { kind: "approval", approvalKind: "command", title: "rm" }, null);
    expect(turn.finish("interrupted")).toBe(true);
    expect(turn.finish("completed")).toBe(false);
    turn.messageDelta("m1", "late");
    const tail = events.slice(events.findIndex((e) => e.type === "runtime_request.opened") + 1);
    expect(tail).toEqual([
      { type: "reasoning.completed", turnId: "turn-1", itemId: "r1", text: "thinking" },
      { type: "message.completed", turnId: "turn-1", itemId: "m1", text: "partial answer" },
      { type: "tool_call.completed", turnId: "turn-1", itemId: "t1", status: "failed" },
      { type: "tool_call.completed", turnId: "turn-1", itemId: "t2", status: "declined" },
      { type: "runtime_request.resolved", turnId: "turn-1", requestId: "turn-1:req:1", resolution: "cancelled" },
      { type: "turn.terminal", turnId: "turn-1", status: "interrupted" },
    ]);
    expect(events.filter((e) => e.type === "turn.started")).toEqual([{ type: "turn.started", turnId: "turn-1", providerTurnId: "native-1" }]);
    expect(turn.lastAssistantText).toBe("partial answer");
  });

  it("a completed turn completes unfinished tools and reports usage; a declined tool's failure reads declined", async () => {
    const { events, emit } = recorder();
    const turn = new TurnLedger("turn-2", emit);
    turn.toolStarted({ itemId: "a", kind: "mcp", name: "mcp__switchyard__task_status", title: "switchyard/task_status", server: "switchyard" });
    turn.toolStarted({ itemId: "b", kind: "command", name: "bash", title: "x" });
    turn.declineTool("b");
    turn.toolCompleted("b", "failed", "user said no");
    turn.addUsage({ inputTokens: 10, outputTokens: 2 });
    turn.addUsage({ inputTokens: 5 });
    turn.finish("completed");
    expect(events.filter((e) => e.type === "tool_call.completed")).toEqual([
      { type: "tool_call.completed", turnId: "turn-2", itemId: "b", status: "declined", output: "user said no" },
      { type: "tool_call.completed", turnId: "turn-2", itemId: "a", status: "completed" },
    ]);
    await expect(turn.ended).resolves.toEqual({ type: "turn.terminal", turnId: "turn-2", status: "completed", usage: { inputTokens: 15, outputTokens: 2 } });
  });
});

describe("RuntimeRequestBook: one resolution per request, dismiss means cancelled", () => {
  it("answers, dismisses and refuses unknown or mismatched answers", async () => {
    const { events, emit } = recorder();
    const book = new RuntimeRequestBook<{ rpcId: number }>(emit, "codex-request");
    const approval = book.open("t", { kind: "approval", approvalKind: "command", title: "echo hi" }, { rpcId: 7 });
    const question = book.open("t", { kind: "user_input", blocking: true, questions: [{ id: "q", question: "Which?" }] }, { rpcId: 8 });
    expect(() => book.respond(approval.requestId, { kind: "user_input", answers: { q: "a" } })).toThrow(/approval; answer it with a decision/);
    book.respond(approval.requestId, { kind: "approval", decision: "accept" });
    await expect(approval.outcome).resolves.toEqual({ kind: "answered", response: { kind: "approval", decision: "accept" } });
    expect(book.find((native) => native.rpcId === 8)?.requestId).toBe(question.requestId);
    book.respond(question.requestId, { kind: "dismiss" });
    await expect(question.outcome).resolves.toEqual({ kind: "cancelled", resolution: "cancelled", dismissed: true });
    expect(() => book.respond(question.requestId, { kind: "dismiss" })).toThrow(expect.objectContaining({ code: "not_found" }));
    expect(events.filter((e) => e.type === "runtime_request.resolved").map((e) => (e as { resolution: string }).resolution)).toEqual(["answered", "cancelled"]);
    const late = book.open("u", { kind: "approval", approvalKind: "permission", title: "p" }, { rpcId: 9 });
    book.cancelTurn(null, "expired");
    await expect(late.outcome).resolves.toMatchObject({ kind: "cancelled", resolution: "expired" });
    expect(book.pending()).toEqual([]);
  });
});

describe("defineAdapter", () => {
  const status: ProviderStatus = { installed: true, executable: true, authenticated: true, models: [] };
  const instance = { id: "kit", driver: "kit", displayName: "Kit", homePath: null, environment: {}, customModels: [] };

  it("closes a session whose start failed, tracks live ones, and disposes them all", async () => {
    const closed: string[] = [];
    let fail = true;
    const adapter = defineAdapter<StartableSession & { name: string }>({
      instance,
      driverKind: "kit",
      capabilities: { turns: { interrupt: true } },
      probe: async () => status,
      createSession: (input, onClosed) => ({
        name: input.threadId,
        resumeCursor: null,
        start: async () => {
          if (fail) throw new Error("harness would not start");
        },
        startTurn: async () => ({}),
        close: async () => {
          closed.push(input.threadId);
          onClosed();
        },
      }),
    });
    expect(adapter.specificationVersion).toBe("v1");
    expect(adapter.capabilities().turns.interrupt).toBe(true);
    expect(adapter.capabilities().turns.activeSteering).toBe(false);
    const input = { threadId: "a", providerSessionId: "p", cwd: "/", model: null, runtimeMode: "full-access", interactionMode: "default", resumeCursor: null, mcp: null, emit: () => undefined } as const;
    await expect(adapter.openSession(input)).rejects.toThrow("harness would not start");
    expect(closed).toEqual(["a"]);
    expect(adapter.sessions.size).toBe(0);
    fail = false;
    await adapter.openSession({ ...input, threadId: "b" });
    await adapter.openSession({ ...input, threadId: "c" });
    expect(adapter.sessions.size).toBe(2);
    await adapter.dispose!();
    expect(closed.sort()).toEqual(["a", "b", "c"]);
    expect(adapter.sessions.size).toBe(0);
  });
});
