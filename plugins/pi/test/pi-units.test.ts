/**
 * The pure parts of the Pi plugin: options, argv, wire helpers, the extension writer, the
 * approval dialog protocol. No Pi process here.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { APPROVAL_TITLE_PREFIX } from "../src/pi-extension/switchyard-extension.js";
import { approvalAnswer, approvalRequestOf, parseApprovalDialog } from "../src/pi-approvals.js";
import { extensionSource, writeSwitchyardExtension } from "../src/pi-extension-writer.js";
import { mcpEnvironment, piArgs, piEnvironment, threadSessionDir } from "../src/pi-launch.js";
import { JsonlSplitter } from "../src/pi-rpc-client.js";
import { parseMcpToolName, toolKindOf, toolTitleOf } from "../src/pi-turn.js";
import { messageText, messageThinking } from "../src/pi-wire.js";
import { parseModelTable, piOptionsSchema, reservedFlagsIn } from "../src/index.js";
import { grantFor, piOptions } from "./pi-lab.js";

describe("Pi options", () => {
  it("fills defaults", async () => {
    expect(await piOptions()).toEqual({ extraArgs: [], offline: true, startupTimeoutMs: 60_000, requestTimeoutMs: 30_000, interruptGraceMs: 15_000 });
  });

  it("refuses reserved launch flags, in both --flag and --flag=value forms, and unknown options", async () => {
    const result = await piOptionsSchema["~standard"].validate({ extraArgs: ["--thinking", "high", "--session=x.jsonl", "--mode", "json", "--api-key", "k"], colour: true });
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
      binary: { command: process.execPath, args: ["/x/cli.js"], source: "package" },
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

  it("scrubs inherited SWITCHYARD_MCP_* / SWITCHYARD_PI_* values and sets the home and the grant", () => {
    const previous = process.env["SWITCHYARD_MCP_TOKEN"];
    process.env["SWITCHYARD_MCP_TOKEN"] = "from-host";
    try {
      const env = piEnvironment(
        { id: "p", driver: "pi", displayName: "Pi", homePath: "/pi-home", environment: { SWITCHYARD_MCP_URL: "http://wrong", FOO: "bar" }, customModels: [] },
        mcpEnvironment(grantFor("http://127.0.0.1:1/mcp", "tok")),
      );
      expect(env).toMatchObject({ FOO: "bar", PI_CODING_AGENT_DIR: "/pi-home", SWITCHYARD_MCP_URL: "http://127.0.0.1:1/mcp", SWITCHYARD_MCP_TOKEN: "tok" });
      const bare = piEnvironment({ id: "p", driver: "pi", displayName: "Pi", homePath: null, environment: { SWITCHYARD_MCP_URL: "http://wrong" }, customModels: [] }, {});
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
  it("splits JSONL on \\n only (U+2028 stays inside a record) and strips \\r", () => {
    const lines: string[] = [];
    const splitter = new JsonlSplitter();
    splitter.push('{"a":"x\u2028y"}\r\n{"b"', (line) => lines.push(line));
    splitter.push(":1}\n\n", (line) => lines.push(line));
    expect(lines.map((line) => JSON.parse(line))).toEqual([{ a: "x\u2028y" }, { b: 1 }]);
  });

  it("reads text and thinking out of messages", () => {
    const message = { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "a" }, { type: "toolCall", id: "c", name: "bash", arguments: {} }, { type: "text", text: "b" }] };
    expect(messageText(message)).toBe("ab");
    expect(messageThinking(message)).toBe("hmm");
    expect(messageText({ role: "user", content: "plain" })).toBe("plain");
  });

  it("kinds and titles Pi's tools", () => {
    expect(toolKindOf("bash")).toBe("command");
    expect(toolKindOf("read")).toBe("file_read");
    expect(toolKindOf("grep")).toBe("search");
    expect(toolKindOf("write")).toBe("file_change");
    expect(toolKindOf("mcp__switchyard__delegate_task")).toBe("mcp");
    expect(toolKindOf("my_custom_tool")).toBe("other");
    expect(parseMcpToolName("mcp__t3-code__t3_thread_wait")).toEqual({ server: "t3-code", tool: "t3_thread_wait" });
    expect(toolTitleOf("bash", { command: "ls -la" })).toBe("ls -la");
    expect(toolTitleOf("edit", { path: "src/a.ts" })).toBe("edit src/a.ts");
    expect(toolTitleOf("mcp__switchyard__delegate_task", {})).toBe("switchyard/delegate_task");
  });

  it("parses pi --list-models", () => {
    const table = "provider  model         context  max-out  thinking  images\nfake      fake-model    128K     16.4K    no        no\nanthropic claude-opus-4 200K 32K yes yes\n";
    expect(parseModelTable(table)).toEqual([
      { provider: "fake", id: "fake-model" },
      { provider: "anthropic", id: "claude-opus-4" },
    ]);
    expect(parseModelTable("")).toEqual([]);
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
    const request = { type: "extension_ui_request" as const, id: "ui-1", method: "select", title: `${APPROVAL_TITLE_PREFIX}${JSON.stringify(prompt)}`, options: ["accept", "accept_for_session", "decline"] };
    expect(parseApprovalDialog(request)).toEqual(prompt);
    expect(approvalRequestOf(prompt)).toMatchObject({ kind: "approval", approvalKind: "command", title: "rm -rf build", options: [{ decision: "accept" }, { decision: "accept_for_session" }, { decision: "decline" }] });
    expect(approvalAnswer("ui-1", "accept_for_session")).toEqual({ type: "extension_ui_response", id: "ui-1", value: "accept_for_session" });
    expect(approvalAnswer("ui-1", "cancel")).toEqual({ type: "extension_ui_response", id: "ui-1", cancelled: true });
    expect(approvalAnswer("ui-1", null)).toEqual({ type: "extension_ui_response", id: "ui-1", cancelled: true });
    expect(parseApprovalDialog({ ...request, title: "Pick a colour" })).toBeNull();
    expect(parseApprovalDialog({ ...request, method: "confirm" })).toBeNull();
  });
});
