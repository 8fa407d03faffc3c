/**
 * The parts of the Pi plugin that need no Pi process: options, argv, wire helpers, the
 * extension writer, the approval dialog protocol and its routing through the request book.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RuntimeRequestBook, type AdapterEvent } from "@switchyard/sdk";
import { APPROVAL_TITLE_PREFIX } from "../src/pi-extension/switchyard-extension.js";
import { approvalAnswer, approvalRequestOf, parseApprovalDialog } from "../src/pi-approvals.js";
import { routeUiRequest, type PiDialog } from "../src/pi-dialogs.js";
import { extensionSource, writeSwitchyardExtension } from "../src/pi-extension-writer.js";
import { mcpEnvironment, piArgs, piEnvironment, threadSessionDir } from "../src/pi-launch.js";
import { piModelEfforts } from "../src/pi-efforts.js";
import { PiTurn } from "../src/pi-turn.js";
import { messageText, messageThinking, type PiExtensionUiResponse } from "../src/pi-wire.js";
import { parseModelTable, piOptionsSchema, reservedFlagsIn } from "../src/index.js";
import { grantFor, piOptions } from "./pi-lab.js";

describe("Pi options", () => {
  it("fills defaults", async () => {
    expect(await piOptions()).toEqual({
      extraArgs: [],
      offline: true,
      startupTimeoutMs: 60_000,
      requestTimeoutMs: 30_000,
      interruptGraceMs: 15_000,
    });
  });

  it("refuses reserved launch flags, in both --flag and --flag=value forms, and unknown options", async () => {
    const result = await piOptionsSchema["~standard"].validate({
      extraArgs: ["--thinking", "high", "--session=x.jsonl", "--mode", "json", "--api-key", "k"],
      colour: true,
    });
    expect(result.issues?.map((issue) => issue.message).join("\n")).toMatch(/--session=x\.jsonl, --mode, --api-key/);
    expect(result.issues?.some((issue) => issue.message === 'Unrecognized key: "colour"')).toBe(true);
    expect(reservedFlagsIn(["--thinking", "high", "--no-context-files"])).toEqual([]);
    expect(reservedFlagsIn(["-p", "-c", "--model=a/b"])).toEqual(["-p", "-c", "--model=a/b"]);
  });
});

describe("Pi launch", () => {
  it("builds argv with the RPC mode, session files, model and the extension, never a secret", async () => {
    const options = await piOptions({ extraArgs: ["--thinking", "low"] });
    const args = piArgs({
      binary: { command: process.execPath, args: ["/x/cli.js"], source: "local" },
      options,
      sessionDir: "/agent/sessions/switchyard/t1",
      sessionFile: "/agent/sessions/switchyard/t1/s.jsonl",
      model: "fake/fake-model",
      extensionPath: "/cache/pi-extension/switchyard-pi-extension-abc.js",
    });
    expect(args).toEqual([
      "/x/cli.js",
      "--mode",
      "rpc",
      "--offline",
      "--session-dir",
      "/agent/sessions/switchyard/t1",
      "--session",
      "/agent/sessions/switchyard/t1/s.jsonl",
      "--model",
      "fake/fake-model",
      "--extension",
      "/cache/pi-extension/switchyard-pi-extension-abc.js",
      "--thinking",
      "low",
    ]);
  });

  it("starts Pi with a turn's effort as --thinking, after the instance's own extra args", async () => {
    const options = await piOptions({ extraArgs: ["--thinking", "low"] });
    const args = piArgs({
      binary: { command: process.execPath, args: ["/x/cli.js"], source: "local" },
      options,
      sessionDir: "/s",
      sessionFile: null,
      model: null,
      thinking: "high",
      extensionPath: "/e.js",
    });
    expect(args.slice(-4)).toEqual(["--thinking", "low", "--thinking", "high"]);
  });

  it("scrubs inherited SWITCHYARD_MCP_* / SWITCHYARD_PI_* values and sets the home and the grant", () => {
    const previous = process.env["SWITCHYARD_MCP_TOKEN"];
    process.env["SWITCHYARD_MCP_TOKEN"] = "from-host";
    try {
      const env = piEnvironment(
        {
          id: "p",
          driver: "pi",
          displayName: "Pi",
          homePath: "/pi-home",
          environment: { SWITCHYARD_MCP_URL: "http://wrong", FOO: "bar" },
          customModels: [],
        },
        mcpEnvironment(grantFor("http://127.0.0.1:1/mcp", "tok")),
      );
      expect(env).toMatchObject({
        FOO: "bar",
        PI_CODING_AGENT_DIR: "/pi-home",
        SWITCHYARD_MCP_URL: "http://127.0.0.1:1/mcp",
        SWITCHYARD_MCP_TOKEN: "tok",
      });
      const bare = piEnvironment(
        {
          id: "p",
          driver: "pi",
          displayName: "Pi",
          homePath: null,
          environment: { SWITCHYARD_MCP_URL: "http://wrong" },
          customModels: [],
        },
        {},
      );
      expect(bare["SWITCHYARD_MCP_URL"]).toBeUndefined();
      expect(bare["SWITCHYARD_MCP_TOKEN"]).toBeUndefined();
    } finally {
      if (previous === undefined) delete process.env["SWITCHYARD_MCP_TOKEN"];
      else process.env["SWITCHYARD_MCP_TOKEN"] = previous;
    }
  });

  it("gives every thread its own safe session directory", () => {
    expect(threadSessionDir("/a", "thread-1")).toBe("/a/sessions/switchyard/thread-1");
    const odd = threadSessionDir("/a", "thread:cmd:x/../y");
    expect(path.dirname(odd)).toBe("/a/sessions/switchyard");
    expect(path.basename(odd)).toMatch(/^thread_cmd_x_.._y-[0-9a-f]{8}$/);
    expect(threadSessionDir("/a", "thread:cmd:x/../z")).not.toBe(odd);
  });
});

describe("Pi wire helpers", () => {
  it("reads text and thinking out of messages", () => {
    const message = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "a" },
        { type: "toolCall", id: "c", name: "bash", arguments: {} },
        { type: "text", text: "b" },
      ],
    };
    expect(messageText(message)).toBe("ab");
    expect(messageThinking(message)).toBe("hmm");
    expect(messageText({ role: "user", content: "plain" })).toBe("plain");
  });

  it("parses pi --list-models", () => {
    const table =
      "provider  model         context  max-out  thinking  images\nfake      fake-model    128K     16.4K    no        no\nanthropic claude-opus-4 200K 32K yes yes\n";
    expect(parseModelTable(table)).toEqual([
      { provider: "fake", id: "fake-model", reasoning: false },
      { provider: "anthropic", id: "claude-opus-4", reasoning: true },
    ]);
    expect(parseModelTable("")).toEqual([]);
  });

  it("offers Pi's thinking levels as the efforts of a reasoning model, xhigh only where the model maps it", () => {
    expect(piModelEfforts({ reasoning: false })).toEqual({});
    expect(piModelEfforts({ reasoning: true })).toEqual({ efforts: ["off", "minimal", "low", "medium", "high"] });
    expect(piModelEfforts({ reasoning: true, xhigh: true }).efforts?.at(-1)).toBe("xhigh");
  });
});

describe("the Switchyard extension's files and approval protocol", () => {
  it("writes the extension once, content-addressed, with code only", async () => {
    const cacheDir = await mkdtemp(path.join(os.tmpdir(), "switchyard-pi-cache-"));
    try {
      const first = await writeSwitchyardExtension(cacheDir);
      expect(await writeSwitchyardExtension(cacheDir)).toBe(first);
      expect(path.dirname(first)).toBe(path.join(cacheDir, "pi-extension"));
      expect(path.basename(first)).toMatch(/^switchyard-pi-extension-[0-9a-f]{12}\.(js|ts)$/);
      const text = await readFile(first, "utf8");
      expect(text).toBe((await extensionSource()).text);
      expect(text).not.toContain("sourceMappingURL");
      expect(text).toContain("export default");
      // A cleared cache is written again.
      await rm(path.join(cacheDir, "pi-extension"), { recursive: true, force: true });
      expect(await writeSwitchyardExtension(cacheDir)).toBe(first);
      expect(await readFile(first, "utf8")).toBe(text);
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
  });

  it("round-trips an approval dialog", () => {
    const prompt = { toolCallId: "call_1", toolName: "bash", approvalKind: "command" as const, title: "rm -rf build" };
    const request = {
      type: "extension_ui_request" as const,
      id: "ui-1",
      method: "select",
      title: `${APPROVAL_TITLE_PREFIX}${JSON.stringify(prompt)}`,
      options: ["accept", "accept_for_session", "decline"],
    };
    expect(parseApprovalDialog(request)).toEqual(prompt);
    expect(approvalRequestOf(prompt)).toMatchObject({
      kind: "approval",
      approvalKind: "command",
      title: "rm -rf build",
      options: [{ decision: "accept" }, { decision: "accept_for_session" }, { decision: "decline" }],
    });
    expect(approvalAnswer("ui-1", "accept_for_session")).toEqual({
      type: "extension_ui_response",
      id: "ui-1",
      value: "accept_for_session",
    });
    expect(approvalAnswer("ui-1", "cancel")).toEqual({ type: "extension_ui_response", id: "ui-1", cancelled: true });
    expect(approvalAnswer("ui-1", null)).toEqual({ type: "extension_ui_response", id: "ui-1", cancelled: true });
    expect(parseApprovalDialog({ ...request, title: "Pick a colour" })).toBeNull();
    expect(parseApprovalDialog({ ...request, method: "confirm" })).toBeNull();
  });

  it("routes the extension's dialogs through the request book: an answer, a dismissal, a decline, other dialogs", async () => {
    const events: AdapterEvent[] = [];
    const emit = (event: AdapterEvent) => events.push(event);
    const requests = new RuntimeRequestBook<PiDialog>(emit, "approval");
    const turn = new PiTurn("turn-1", emit, requests);
    const answers: PiExtensionUiResponse[] = [];
    const warnings: string[] = [];
    const route = {
      turn,
      generation: 1,
      warn: (message: string) => warnings.push(message),
      answer: (answer: PiExtensionUiResponse) => answers.push(answer),
    };
    const dialog = (id: string, toolCallId: string) => ({
      type: "extension_ui_request" as const,
      id,
      method: "select",
      title: `${APPROVAL_TITLE_PREFIX}${JSON.stringify({ toolCallId, toolName: "bash", approvalKind: "command", title: `echo ${id}` })}`,
    });
    const settled = () => new Promise((resolve) => setImmediate(resolve));

    routeUiRequest(dialog("ui-1", "call_1"), requests, route);
    routeUiRequest(dialog("ui-2", "call_2"), requests, route);
    routeUiRequest(dialog("ui-3", "call_3"), requests, route);
    const [accepted, dismissed, declined] = requests.pending().map((open) => open.requestId);
    expect(requests.pending().map((open) => open.native)).toEqual([
      { uiRequestId: "ui-1", toolCallId: "call_1", generation: 1 },
      { uiRequestId: "ui-2", toolCallId: "call_2", generation: 1 },
      { uiRequestId: "ui-3", toolCallId: "call_3", generation: 1 },
    ]);
    requests.respond(accepted!, { kind: "approval", decision: "accept" });
    requests.respond(dismissed!, { kind: "dismiss" });
    requests.respond(declined!, { kind: "approval", decision: "decline" });
    await settled();
    expect(answers).toEqual([
      { type: "extension_ui_response", id: "ui-1", value: "accept" },
      { type: "extension_ui_response", id: "ui-2", cancelled: true },
      { type: "extension_ui_response", id: "ui-3", value: "decline" },
    ]);
    expect(
      events
        .filter((event) => event.type === "runtime_request.resolved")
        .map((event) => (event as { resolution: string }).resolution),
    ).toEqual(["answered", "cancelled", "answered"]);
    // The declined call's failure (the extension blocks it) is reported as declined.
    turn.apply({
      type: "tool_execution_start",
      toolCallId: "call_3",
      toolName: "bash",
      args: { command: "echo ui-3" },
    });
    turn.apply({ type: "tool_execution_end", toolCallId: "call_3", toolName: "bash", isError: true });
    expect(events.at(-1)).toMatchObject({ type: "tool_call.completed", itemId: "call_3", status: "declined" });

    // Another extension's dialog, and an approval between turns, are dismissed at once.
    answers.length = 0;
    routeUiRequest(
      { type: "extension_ui_request", id: "ui-4", method: "confirm", title: "Delete it?" },
      requests,
      route,
    );
    routeUiRequest(dialog("ui-5", "call_5"), requests, { ...route, turn: null });
    routeUiRequest(
      { type: "extension_ui_request", id: "ui-6", method: "notify", message: "MCP tools are unavailable" },
      requests,
      route,
    );
    routeUiRequest({ type: "extension_ui_request", id: "ui-7", method: "setStatus" }, requests, route);
    expect(answers).toEqual([
      { type: "extension_ui_response", id: "ui-4", cancelled: true },
      { type: "extension_ui_response", id: "ui-5", cancelled: true },
    ]);
    expect(warnings).toEqual([
      'A Pi extension asked "Delete it?" through a confirm dialog, which Switchyard does not show; it was dismissed.',
      "Pi: MCP tools are unavailable",
    ]);
    expect(requests.pending()).toEqual([]);
  });
});
