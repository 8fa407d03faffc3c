/**
 * Codex CLI (`codex exec --json`, native binary, stdin closed) against the scripted model server:
 * a text turn, a shell tool call and an MCP tool call over Streamable HTTP.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ScriptedModelServer,
  createCodexHome,
  killAllHarnessProcesses,
  parseJsonLines,
  resolveHarnessBinary,
  runHarness,
} from "../src/index.js";
import type { CodexHome, HarnessBinary } from "../src/index.js";

/** A stateless MCP server over Streamable HTTP with one `echo` tool (a new McpServer per POST). */
async function startEchoMcpServer(): Promise<{ url: string; methods: string[]; close(): Promise<void> }> {
  const methods: string[] = [];
  const http: Server = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { method?: string };
      if (body.method) methods.push(body.method);
      const mcp = new McpServer({ name: "probe", version: "1.0.0" });
      mcp.registerTool(
        "echo",
        { description: "Echo the text back", inputSchema: { text: z.string() } },
        ({ text }) => ({
          content: [{ type: "text", text: `MCP-ECHO:${text}` }],
        }),
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    methods,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

type CodexEvent = { type: string; item?: Record<string, unknown> };

let server: ScriptedModelServer;
let mcp: Awaited<ReturnType<typeof startEchoMcpServer>>;
let codex: HarnessBinary;
const homes: CodexHome[] = [];

beforeAll(async () => {
  codex = resolveHarnessBinary("codex");
  server = await ScriptedModelServer.start();
  mcp = await startEchoMcpServer();
});
afterEach(async () => {
  await killAllHarnessProcesses();
  server.reset();
});
afterAll(async () => {
  await Promise.all(homes.map((home) => home.cleanup()));
  await server?.close();
  await mcp?.close();
});

async function runCodex(prompt: string, options: { mcp?: boolean } = {}) {
  const home = await createCodexHome({
    modelServerUrl: server.url,
    ...(options.mcp ? { mcpServers: { probe: { url: mcp.url } } } : {}),
  });
  homes.push(home);
  const exit = await runHarness(codex, home.execArgs(prompt), { cwd: home.cwd, env: home.env, timeoutMs: 50_000 });
  const events = parseJsonLines(exit.stdout) as CodexEvent[];
  return { exit, events, home };
}

const completedItems = (events: CodexEvent[], type: string) =>
  events.filter((e) => e.type === "item.completed" && e.item?.["type"] === type).map((e) => e.item ?? {});

describe("Codex CLI against the scripted model server", () => {
  it("runs the native binary, not the npm wrapper", () => {
    expect(codex.native).toBe(true);
    expect(codex.command).toMatch(/codex-.*\/vendor\/.*\/bin\/codex$/);
  });

  it("completes a text turn", async () => {
    const { exit, events } = await runCodex("hello from the lab");
    expect(exit.code).toBe(0);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(["thread.started", "turn.started", "turn.completed"]),
    );
    expect(completedItems(events, "agent_message").map((i) => i["text"])).toEqual(["PONG"]);

    const request = await server.waitForRequest((r) => r.api === "openai-responses");
    expect(request.path).toBe("/v1/responses");
    expect(request.userText).toBe("hello from the lab");
    expect(request.toolNames).toContain("exec_command");
    expect(request.headers["authorization"]).toBe("[redacted]");
  });

  it("reads directives after a prepended <switchyard_instructions> block", async () => {
    const prompt =
      "<switchyard_instructions>\nYou are a child thread. Example: @@reply wrong\n</switchyard_instructions>\n\ntask @@reply right";
    const { events } = await runCodex(prompt);
    expect(completedItems(events, "agent_message").map((i) => i["text"])).toEqual(["right"]);
    const request = await server.waitForRequest((r) => r.api === "openai-responses");
    expect(request.userText).toBe("task @@reply right");
  });

  it("round-trips a shell tool call (exec_command)", async () => {
    const { exit, events } = await runCodex("go @@shell echo hi-from-codex-shell");
    expect(exit.code).toBe(0);
    expect(completedItems(events, "command_execution")[0]).toMatchObject({ exit_code: 0 });
    expect(completedItems(events, "agent_message").at(-1)?.["text"]).toBe(
      "DONE after exec_command: hi-from-codex-shell",
    );
    const result = await server.waitForRequest((r) => r.toolResult?.toolName === "exec_command");
    expect(result.toolResult?.snippet).toBe("hi-from-codex-shell");
  });

  it("calls an MCP tool over Streamable HTTP (namespaced Responses tool)", async () => {
    const { exit, events } = await runCodex('@@tool echo {"text":"hi-codex"}', { mcp: true });
    expect(exit.code).toBe(0);
    expect(completedItems(events, "mcp_tool_call")[0]).toMatchObject({
      server: "probe",
      tool: "echo",
      status: "completed",
      result: { content: [{ type: "text", text: "MCP-ECHO:hi-codex" }] },
    });
    expect(completedItems(events, "agent_message").at(-1)?.["text"]).toBe(
      "DONE after mcp__probe__echo: MCP-ECHO:hi-codex",
    );

    const offered = await server.waitForRequest((r) => r.stepIndex === 0 && r.api === "openai-responses");
    expect(offered.tools).toContainEqual(expect.objectContaining({ name: "echo", namespace: "mcp__probe" }));
    expect(offered.decision).toMatchObject({ kind: "tool_call", tool: { qualifiedName: "mcp__probe__echo" } });
    const result = await server.waitForRequest((r) => r.toolResult !== undefined);
    expect(result.toolResult).toMatchObject({ toolName: "mcp__probe__echo", snippet: "MCP-ECHO:hi-codex" });
    expect(mcp.methods).toEqual(expect.arrayContaining(["initialize", "tools/list", "tools/call"]));
  });

  it("fails the turn at once on @@fail (retries are off in the home)", async () => {
    const { events } = await runCodex("@@fail 400 scripted refusal");
    const failure = events.find((e) => e.type === "turn.failed" || e.type === "error");
    expect(JSON.stringify(failure)).toContain("scripted refusal");
    expect(server.requests.filter((r) => r.api === "openai-responses")).toHaveLength(1);
  });
});
