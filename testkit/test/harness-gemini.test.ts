/**
 * Gemini CLI (`gemini -y -o json -p`) against the scripted model server: a text turn (with the
 * router side call answered by schema), a shell tool call and an MCP tool call over Streamable HTTP.
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
  createGeminiHome,
  killAllHarnessProcesses,
  resolveHarnessBinary,
  runHarness,
} from "../src/index.js";
import type { GeminiHome, HarnessBinary } from "../src/index.js";

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

type GeminiOutput = { response: string; stats: { tools: { byName: Record<string, { success: number }> } } };

let server: ScriptedModelServer;
let mcp: Awaited<ReturnType<typeof startEchoMcpServer>>;
let gemini: HarnessBinary;
const homes: GeminiHome[] = [];

beforeAll(async () => {
  gemini = resolveHarnessBinary("gemini");
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

async function runGemini(prompt: string, options: { mcp?: boolean } = {}) {
  const home = await createGeminiHome({
    modelServerUrl: server.url,
    ...(options.mcp ? { mcpServers: { probe: { url: mcp.url } } } : {}),
  });
  homes.push(home);
  const exit = await runHarness(gemini, home.promptArgs(prompt), { cwd: home.cwd, env: home.env, timeoutMs: 50_000 });
  const start = exit.stdout.indexOf("{");
  const output = JSON.parse(exit.stdout.slice(start)) as GeminiOutput;
  return { exit, output };
}

describe("Gemini CLI against the scripted model server", () => {
  it("completes a text turn; the router side call gets schema-typed JSON", async () => {
    const { exit, output } = await runGemini("hello from the lab");
    expect(exit.code).toBe(0);
    expect(output.response).toBe("PONG");

    const router = await server.waitForRequest((r) => r.api === "gemini" && r.sideCall);
    expect(router.path).toMatch(/:generateContent$/);
    expect(JSON.parse(router.decision?.kind === "text" ? router.decision.text : "{}")).toMatchObject({
      complexity_score: expect.any(Number),
    });
    const main = await server.waitForRequest((r) => r.api === "gemini" && !r.sideCall);
    expect(main.path).toMatch(/:streamGenerateContent\?alt=sse$/);
    expect(main.userText).toBe("hello from the lab");
    expect(main.toolNames).toContain("run_shell_command");
    expect(main.headers["x-goog-api-key"]).toBe("[redacted]");
  });

  it("round-trips a shell tool call (run_shell_command)", async () => {
    const { exit, output } = await runGemini("go @@shell echo hi-from-gemini-shell");
    expect(exit.code).toBe(0);
    expect(output.response).toBe("DONE after run_shell_command: hi-from-gemini-shell");
    const result = await server.waitForRequest((r) => r.toolResult?.toolName === "run_shell_command");
    expect(result.toolResult?.output).toContain("<untrusted_context>");
  });

  it("calls an MCP tool over Streamable HTTP", async () => {
    const { exit, output } = await runGemini('go @@tool echo {"text":"hi-gemini"}', { mcp: true });
    expect(exit.code).toBe(0);
    expect(output.response).toBe("DONE after mcp_probe_echo: MCP-ECHO:hi-gemini");
    expect(output.stats.tools.byName["mcp_probe_echo"]).toMatchObject({ success: 1 });

    const offered = await server.waitForRequest((r) => !r.sideCall && r.stepIndex === 0 && r.api === "gemini");
    expect(offered.toolNames).toContain("mcp_probe_echo");
    const result = await server.waitForRequest((r) => r.toolResult !== undefined);
    expect(result.toolResult).toMatchObject({ toolName: "mcp_probe_echo", snippet: "MCP-ECHO:hi-gemini" });
    expect(mcp.methods).toEqual(expect.arrayContaining(["initialize", "tools/list", "tools/call"]));
  });
});
