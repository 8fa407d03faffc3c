import { describe, expect, it } from "vitest";
import {
  cleanUserText,
  fillJsonSchema,
  findOfferedTool,
  parseScript,
  resolveTurn,
  shellToolCall,
  toolOutputSnippet,
} from "../src/index.js";
import type { OfferedTool } from "../src/index.js";

const fn = (name: string, parameters?: Record<string, unknown>, namespace?: string): OfferedTool => ({
  name,
  qualifiedName: namespace ? `${namespace}__${name}` : name,
  kind: "function",
  ...(namespace ? { namespace } : {}),
  ...(parameters ? { parameters } : {}),
});

describe("parseScript", () => {
  it("returns undefined for text without directives", () => {
    expect(parseScript("hello there")).toBeUndefined();
    expect(parseScript("mail me at a@@b.c")).toBeUndefined();
  });

  it("finds directives mid-message (Pi treats a leading @ as a file include)", () => {
    expect(parseScript("go @@shell echo hi")).toEqual({ steps: [{ shell: "echo hi" }], prose: "go", errors: [] });
  });

  it("parses @@tool with JSON arguments, even across lines", () => {
    const parsed = parseScript('please @@tool echo {"text": "a @@reply b",\n "n": [1, {"x": "}"}]} and then');
    expect(parsed?.steps).toEqual([{ tool: "echo", args: { text: "a @@reply b", n: [1, { x: "}" }] } }]);
    expect(parsed?.prose).toBe("please and then");
  });

  it("splits steps on each action and on @@then", () => {
    const parsed = parseScript('@@tool echo {"text":"x"} @@reply got {{output}}');
    expect(parsed?.steps).toEqual([{ tool: "echo", args: { text: "x" } }, { reply: "got {{output}}" }]);
    expect(parseScript("@@wait 50 @@then @@hold g1 @@echo")?.steps).toEqual([
      { waitMs: 50 },
      { hold: "g1", echo: true },
    ]);
  });

  it("ends line arguments at the end of the line", () => {
    expect(parseScript("@@shell ls -la\n@@reply done\nsome prose")?.steps).toEqual([
      { shell: "ls -la" },
      { reply: "done" },
    ]);
  });

  it("parses @@fail with optional stream flag and status", () => {
    expect(parseScript("@@fail boom")?.steps).toEqual([{ fail: "boom" }]);
    expect(parseScript("@@fail 400 bad request")?.steps).toEqual([{ fail: "bad request", status: 400 }]);
    expect(parseScript("@@fail stream 503 gone")?.steps).toEqual([{ fail: "gone", status: 503, inStream: true }]);
  });

  it("reports bad JSON instead of guessing", () => {
    const parsed = parseScript("@@tool echo {not json}");
    expect(parsed?.errors[0]).toMatch(/bad JSON/);
  });
});

describe("cleanUserText", () => {
  it("drops a <switchyard_instructions> block so directives after it are found", () => {
    const text = "<switchyard_instructions>\nUse @@reply never\n</switchyard_instructions>\n\ngo @@reply yes";
    expect(cleanUserText(text)).toBe("go @@reply yes");
    expect(parseScript(cleanUserText(text))?.steps).toEqual([{ reply: "yes" }]);
  });

  it("undoes opencode run's JSON quoting", () => {
    expect(cleanUserText('"@@tool echo {\\"text\\":\\"x\\"}"')).toBe('@@tool echo {"text":"x"}');
  });

  it("treats harness-injected context messages as empty", () => {
    expect(cleanUserText("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>")).toBe("");
    expect(cleanUserText("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>\nbe nice\n</INSTRUCTIONS>")).toBe("");
    expect(cleanUserText("<session_context>\nThis is the Gemini CLI.\n</session_context>")).toBe("");
    expect(cleanUserText("<system-reminder>x</system-reminder>\nreal text")).toBe("real text");
  });

  it("reads what follows Claude Code's interrupt marker as the request (the interrupted prompt is merged before it)", () => {
    // The next prompt after an interrupt, as Claude Code 2.1.332 sends it: one user message.
    const merged =
      "<system-reminder>x</system-reminder>\nfirst @@hold g1 @@reply never\n\n[Request interrupted by user]\n\nafter @@reply second";
    expect(cleanUserText(merged)).toBe("after @@reply second");
    expect(parseScript(cleanUserText(merged))?.steps).toEqual([{ reply: "second" }]);
    expect(cleanUserText("[Request interrupted by user for tool use]")).toBe("");
    expect(cleanUserText("no marker @@reply x")).toBe("no marker @@reply x");
  });

  it("drops the local command Claude Code records before a prompt after setModel", () => {
    const text =
      "<local-command-caveat>The command below was run directly in Claude Code.</local-command-caveat>\n\n<command-name>/model</command-name>\n <command-message>model</command-message>\n <command-args>claude-fake-2</command-args>\n\n<local-command-stdout>Set model to `claude-fake-2`</local-command-stdout>\n\ntwo @@reply b";
    expect(cleanUserText(text)).toBe("two @@reply b");
  });
});

describe("resolveTurn", () => {
  it("skips injected user messages and counts tool rounds since the real one", () => {
    const turn = resolveTurn([
      { type: "user", text: "old @@reply old" },
      { type: "assistant", text: "old", toolCalls: [] },
      { type: "user", text: "new @@shell ls @@then @@reply done" },
      { type: "user", text: "<environment_context>cwd</environment_context>" },
      { type: "assistant", text: "", toolCalls: [{ id: "c1", name: "exec_command" }] },
      { type: "tool_result", callId: "c1", output: "Wall time: 0.1 seconds\nOutput:\nfile-a\n" },
    ]);
    expect(turn.userText).toBe("new @@shell ls @@then @@reply done");
    expect(turn.stepIndex).toBe(1);
    expect(turn.trailingToolResults).toEqual([
      {
        toolName: "exec_command",
        callId: "c1",
        output: "Wall time: 0.1 seconds\nOutput:\nfile-a\n",
        snippet: "file-a",
      },
    ]);
  });

  it("resolves namespaced call names for results", () => {
    const turn = resolveTurn([
      { type: "user", text: "@@tool echo {}" },
      { type: "assistant", text: "", toolCalls: [{ id: "c1", name: "echo", namespace: "mcp__probe" }] },
      { type: "tool_result", callId: "c1", output: "MCP-ECHO:x" },
    ]);
    expect(turn.trailingToolResults[0]?.toolName).toBe("mcp__probe__echo");
  });
});

describe("toolOutputSnippet", () => {
  it("unwraps Gemini and Codex wrappers", () => {
    expect(toolOutputSnippet('{"output":"<untrusted_context>\\nMCP-ECHO:hi\\n</untrusted_context>"}')).toBe(
      "MCP-ECHO:hi",
    );
    expect(
      toolOutputSnippet(
        '{"output":"<untrusted_context>\\nOutput: hi\\nProcess Group PGID: 12\\n</untrusted_context>"}',
      ),
    ).toBe("hi");
    expect(toolOutputSnippet("Chunk ID: a\nWall time: 0 seconds\nProcess exited with code 0\nOutput:\nhi\n")).toBe(
      "hi",
    );
    expect(toolOutputSnippet("x".repeat(500), 10)).toBe("xxxxxxxxxx…");
  });
});

describe("fillJsonSchema", () => {
  it("fills Gemini's router schema (OpenAPI types) with an integer score", () => {
    const value = fillJsonSchema({
      type: "OBJECT",
      properties: { complexity_reasoning: { type: "STRING" }, complexity_score: { type: "INTEGER" } },
      required: ["complexity_reasoning", "complexity_score"],
    });
    expect(value).toEqual({ complexity_reasoning: "scripted", complexity_score: 1 });
  });

  it("takes the first enum value and honours minimum / minItems", () => {
    expect(
      fillJsonSchema({
        type: "object",
        properties: {
          next_speaker: { type: "string", enum: ["user", "model"] },
          n: { type: "number", minimum: 3 },
          list: { type: "array", minItems: 1, items: { type: ["boolean", "null"] } },
        },
      }),
    ).toEqual({ next_speaker: "user", n: 3, list: [false] });
  });
});

describe("offered tools", () => {
  const tools = [
    fn("exec_command", { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] }),
    fn("echo", { type: "object" }, "mcp__probe"),
    fn("probe_echo_more"),
  ];

  it("finds a tool by suffix, preferring exact names, across namespaces", () => {
    expect(findOfferedTool(tools, "echo")?.qualifiedName).toBe("mcp__probe__echo");
    expect(findOfferedTool(tools, "probe__echo")?.qualifiedName).toBe("mcp__probe__echo");
    expect(findOfferedTool(tools, "echo_more")?.name).toBe("probe_echo_more");
    expect(findOfferedTool(tools, "nope")).toBeUndefined();
  });

  it("maps @@shell onto each harness's shell tool", () => {
    expect(shellToolCall(tools, "ls")).toMatchObject({ tool: { name: "exec_command" }, args: { cmd: "ls" } });
    const opencodeBash = fn("bash", {
      type: "object",
      properties: { command: { type: "string" }, description: { type: "string" }, timeout: { type: "number" } },
      required: ["command", "description"],
    });
    expect(shellToolCall([opencodeBash], "ls")?.args).toEqual({ command: "ls", description: "Scripted shell command" });
    const argvShell = fn("shell", { type: "object", properties: { command: { type: "array" } } });
    expect(shellToolCall([argvShell], "ls")?.args).toEqual({ command: ["bash", "-lc", "ls"] });
    expect(shellToolCall([fn("read_file")], "ls")).toBeUndefined();
  });
});

describe("{{history}}", () => {
  it("lists every earlier user message of the request, without the last", async () => {
    const { conversationHistory } = await import("../src/model-server/decision.js");
    const history = conversationHistory({
      api: "openai-chat-completions",
      stream: true,
      tools: [],
      systemText: "",
      items: [
        { type: "user", text: "first marker-a" },
        { type: "assistant", text: "ok", toolCalls: [] },
        { type: "user", text: "second marker-b" },
        { type: "user", text: "now recall" },
      ],
    });
    expect(history).toBe("first marker-a | second marker-b");
  });
});

describe("{{output.<field>}}", () => {
  it("reads a field of the last tool result, also when the result is JSON inside a JSON string", async () => {
    const { substitute } = await import("../src/model-server/decision.js");
    const context = (output: string) =>
      ({
        request: { api: "openai-responses", stream: true, tools: [], systemText: "", items: [] },
        turn: {},
        toolResult: { toolName: "t", output, snippet: output },
      }) as never;
    expect(substitute("id={{output.taskId}}", context('{"taskId":"task:abc","status":"running"}'))).toBe("id=task:abc");
    expect(
      substitute("id={{output.taskId}}", context('[{"type":"input_text","text":"{\\"taskId\\":\\"task:xyz\\"}"}]')),
    ).toBe("id=task:xyz");
    expect(substitute("id={{output.missing}}", context("{}"))).toBe("id=");
  });
});
