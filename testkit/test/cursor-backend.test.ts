/**
 * The fake Cursor backend at the wire, without the SDK: its schemas come from the installed
 * `@cursor/sdk` (and a release or bundle it does not know is refused, loudly), client messages
 * that arrive before their stream opens or out of order are delivered in sequence, and its
 * frames are what Cursor's Connect protocol says. The SDK-level behaviour is tested in
 * plugins/cursor (the real SDK against this fake).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CURSOR_SDK_VERSION,
  FakeCursorBackend,
  findInstalledCursorSdk,
  loadCursorWireSchemas,
  parsedShellCommand,
  type CursorWireSchemas,
} from "../src/index.js";

let schemas: CursorWireSchemas;
let backend: FakeCursorBackend;
const scratch = mkdtempSync(join(tmpdir(), "switchyard-cursor-fake-"));

beforeAll(async () => {
  schemas = loadCursorWireSchemas();
  backend = await FakeCursorBackend.start({ chunkSize: 100 });
});
afterAll(async () => {
  await backend?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function frame(bytes: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([head, bytes]);
}

/** Opens `RunSSE` for a request id; resolves with every frame once the stream ends. */
async function openRun(
  requestId: string,
): Promise<{ messages: Record<string, unknown>[]; end: Record<string, unknown> }> {
  const response = await fetch(`${backend.url}/agent.v1.AgentService/RunSSE`, {
    method: "POST",
    headers: { "content-type": "application/connect+proto" },
    body: frame(schemas.bidiRequestId.fromJson({ requestId }).toBinary()),
  });
  expect(response.headers.get("content-type")).toBe("application/connect+proto");
  const body = Buffer.from(await response.arrayBuffer());
  const messages: Record<string, unknown>[] = [];
  let end: Record<string, unknown> = {};
  for (let offset = 0; offset < body.length;) {
    const flags = body[offset]!;
    const length = body.readUInt32BE(offset + 1);
    const data = body.subarray(offset + 5, offset + 5 + length);
    offset += 5 + length;
    if (flags === 2) end = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
    else messages.push(schemas.serverMessage.fromBinary(data).toJson() as Record<string, unknown>);
  }
  return { messages, end };
}

async function append(requestId: string, seq: number, message: Record<string, unknown>): Promise<void> {
  const data = Buffer.from(schemas.clientMessage.fromJson(message).toBinary()).toString("hex");
  const response = await fetch(`${backend.url}/aiserver.v1.BidiService/BidiAppend`, {
    method: "POST",
    headers: { "content-type": "application/proto" },
    body: schemas.bidiAppendRequest.fromJson({ data, requestId: { requestId }, appendSeqno: String(seq) }).toBinary(),
  });
  expect(response.status).toBe(200);
}

const runRequest = (text: string, conversationId = "agent-wire") => ({
  runRequest: {
    action: { userMessageAction: { userMessage: { text } } },
    conversationId,
    requestedModel: { modelId: "fake-model" },
  },
});

describe("the fake Cursor backend's schemas", () => {
  it("loads the message types it speaks from the installed SDK, which is the pinned release", () => {
    expect(findInstalledCursorSdk().version).toBe(CURSOR_SDK_VERSION);
    expect(schemas.sdkVersion).toBe(CURSOR_SDK_VERSION);
    expect(
      [
        schemas.clientMessage,
        schemas.serverMessage,
        schemas.bidiRequestId,
        schemas.bidiAppendRequest,
        schemas.errorDetails,
      ].map((type) => type.typeName),
    ).toEqual([
      "agent.v1.AgentClientMessage",
      "agent.v1.AgentServerMessage",
      "aiserver.v1.BidiRequestId",
      "aiserver.v1.BidiAppendRequest",
      "aiserver.v1.ErrorDetails",
    ]);
    expect(schemas.typeCount).toBeGreaterThan(1000);
    // The SDK's classes validate: a field the protocol does not have is refused.
    expect(() => schemas.serverMessage.fromJson({ interactionUpdate: { noSuchUpdate: {} } })).toThrow();
  });

  it("refuses another release of the SDK, naming both versions and what to do", () => {
    const dir = join(scratch, "other-release");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "@cursor/sdk", version: "9.9.9" }));
    expect(() => loadCursorWireSchemas({ sdkPackageDir: dir })).toThrow(
      /known to match @cursor\/sdk 1\.0\.32, but 9\.9\.9 is installed.*move CURSOR_SDK_VERSION/s,
    );
  });

  it("refuses a folder that is not the SDK, and a bundle whose layout it cannot read", () => {
    const notSdk = join(scratch, "not-sdk");
    mkdirSync(notSdk, { recursive: true });
    writeFileSync(join(notSdk, "package.json"), JSON.stringify({ name: "left-pad", version: "1.0.0" }));
    expect(() => loadCursorWireSchemas({ sdkPackageDir: notSdk })).toThrow(/is not the @cursor\/sdk package/);
    const relaid = join(scratch, "relaid");
    mkdirSync(join(relaid, "dist", "esm"), { recursive: true });
    writeFileSync(join(relaid, "package.json"), JSON.stringify({ name: "@cursor/sdk", version: CURSOR_SDK_VERSION }));
    writeFileSync(join(relaid, "dist", "esm", "index.js"), "export const nothing = 1;\n");
    expect(() => loadCursorWireSchemas({ sdkPackageDir: relaid })).toThrow(/holds no generated protobuf modules/);
  });
});

describe("the fake Cursor backend at the wire", () => {
  it("buffers a run request that arrives before its stream opens, then plays it: text, checkpoint, usage, a clean end", async () => {
    await append("early-1", 0, runRequest("say it @@reply hello wire"));
    const { messages, end } = await openRun("early-1");
    expect(messages).toEqual([
      { interactionUpdate: { textDelta: { text: "hello wire" } } },
      { conversationCheckpointUpdate: { turns: [expect.any(String)] } },
      {
        interactionUpdate: {
          turnEnded: expect.objectContaining({ inputTokens: expect.any(String), outputTokens: "3" }),
        },
      },
    ]);
    expect(end).toEqual({});
    const turn = JSON.parse(
      Buffer.from(
        (messages[1] as { conversationCheckpointUpdate: { turns: string[] } }).conversationCheckpointUpdate.turns[0]!,
        "base64",
      ).toString("utf8"),
    );
    expect(turn).toEqual({ user: "say it @@reply hello wire", steers: [], assistant: "hello wire" });
    expect(backend.runs.find((run) => run.requestId === "early-1")).toMatchObject({
      status: "finished",
      conversationId: "agent-wire",
      model: "fake-model",
      reply: "hello wire",
    });
  });

  it("delivers appends in sequence order even when they overtake each other, and answers a steer", async () => {
    const stream = openRun("ordered-1");
    await append("ordered-1", 0, runRequest("hold on @@hold wire-gate @@reply held done"));
    await backend.waitForHold("wire-gate");
    // #2 arrives before #1: it must wait for it.
    await append("ordered-1", 2, { clientHeartbeat: {} });
    const record = backend.runs.find((run) => run.requestId === "ordered-1")!;
    expect(record.clientMessages).toEqual(["runRequest"]);
    await append("ordered-1", 1, {
      conversationAction: {
        injectContextAction: {
          injectionId: "inj-1",
          expectedRunId: "ordered-1",
          userContext: { userMessage: { text: "a steer", messageId: "m1" } },
        },
      },
    });
    expect(record.clientMessages).toEqual(["runRequest", "conversationAction", "clientHeartbeat"]);
    backend.release("wire-gate");
    const { messages } = await stream;
    expect(messages[0]).toEqual({
      interactionUpdate: { contextInjectionState: { injectionId: "inj-1", state: { delivered: {} } } },
    });
    expect(record.steers).toEqual([{ text: "a steer", injectionId: "inj-1", answer: "delivered" }]);
  });

  it("asks the client to run a shell command with the parse the client requires, and waits for its result", async () => {
    const stream = openRun("shell-1");
    await append("shell-1", 0, runRequest("run it @@shell echo a && echo b @@then @@reply said {{output}}"));
    const record = await backend.waitForRun((run) => run.requestId === "shell-1" && run.toolCalls.length === 1);
    expect(record.toolCalls[0]).toMatchObject({ kind: "shell", name: "echo a && echo b", output: null });
    await append("shell-1", 1, {
      execClientMessage: {
        id: 1,
        shellResult: { success: { command: "echo a && echo b", stdout: "a\nb\n", exitCode: 0 } },
      },
    });
    const { messages } = await stream;
    const exec = messages.find((message) => "execServerMessage" in message) as {
      execServerMessage: { id: number; shellArgs: Record<string, unknown> };
    };
    expect(exec.execServerMessage.id).toBe(1);
    expect(exec.execServerMessage.shellArgs).toMatchObject({
      command: "echo a && echo b",
      simpleCommands: ["echo a", "echo b"],
      parsingResult: {
        executableCommands: [
          { name: "echo", fullText: "echo a", args: [{ type: "word", value: "a" }] },
          { name: "echo", fullText: "echo b", args: [{ type: "word", value: "b" }] },
        ],
      },
    });
    expect(
      messages.map(
        (message) => Object.keys((message as { interactionUpdate?: object }).interactionUpdate ?? message)[0],
      ),
    ).toEqual([
      "toolCallStarted",
      "execServerMessage",
      "toolCallCompleted",
      "textDelta",
      "conversationCheckpointUpdate",
      "turnEnded",
    ]);
    expect(messages).toContainEqual({ interactionUpdate: { textDelta: { text: "said a b" } } });
  });

  it("ends a failed run with a Connect error carrying Cursor's error detail: client errors are final, server errors retryable", async () => {
    for (const [status, code, retryable] of [
      [400, "invalid_argument", false],
      [500, "internal", true],
    ] as const) {
      const requestId = `fail-${status}`;
      await append(requestId, 0, runRequest(`break @@fail ${status} broke with ${status}`));
      const { end } = await openRun(requestId);
      const error = end["error"] as { code: string; message: string; details: { type: string; value: string }[] };
      expect(error).toMatchObject({ code, message: `broke with ${status}` });
      expect(error.details[0]!.type).toBe("aiserver.v1.ErrorDetails");
      const detail = schemas.errorDetails.fromBinary(Buffer.from(error.details[0]!.value, "base64")).toJson() as {
        details?: { isRetryable?: boolean };
      };
      expect(detail.details?.isRetryable ?? false).toBe(retryable);
    }
  });

  it("treats a closed stream as the client's cancel", async () => {
    const controller = new AbortController();
    const opened = fetch(`${backend.url}/agent.v1.AgentService/RunSSE`, {
      method: "POST",
      headers: { "content-type": "application/connect+proto" },
      body: frame(schemas.bidiRequestId.fromJson({ requestId: "cancel-1" }).toBinary()),
      signal: controller.signal,
    });
    await append("cancel-1", 0, runRequest("hold on @@hold never-opened @@reply never"));
    await backend.waitForHold("never-opened");
    controller.abort();
    await opened.catch(() => undefined);
    const record = await backend.waitForRun((run) => run.requestId === "cancel-1" && run.status === "cancelled");
    expect(record.heldOn).toBeNull();
  });
});

describe("parsedShellCommand", () => {
  it("splits on the shell's list and pipe operators and words on whitespace", () => {
    expect(parsedShellCommand("sleep 45; echo x | tr a b || true").simpleCommands).toEqual([
      "sleep 45",
      "echo x",
      "tr a b",
      "true",
    ]);
  });
});
