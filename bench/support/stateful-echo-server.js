// The baseline MCP server the endpoint benches compare against: the MCP SDK's own Streamable
// HTTP transport in its stateful mode, one server and transport per session, kept and reused for
// every call of that session. That is the cheapest way the SDK serves repeated calls, so it is
// the honest floor (a stateless echo rebuilt per request would flatter Switchyard).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/**
 * Starts the echo server on 127.0.0.1. `echo({ text })` answers `text`; given `answer` (a tool
 * result recorded from the call it is compared with), `echo` answers that result verbatim, its
 * `content` and its `structuredContent`, so the client on either side parses and checks the same
 * answer and only the servers' work differs.
 */
export async function startStatefulEchoServer({ answer } = {}) {
  const sessions = new Map();
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (transport === undefined) {
      if (req.method !== "POST" || body?.method !== "initialize") {
        res.writeHead(typeof sessionId === "string" ? 404 : 400).end();
        return;
      }
      // enableJsonResponse: each answer is one JSON body, not an SSE stream (the cheaper of the
      // two, and what Switchyard answers a call without a progress token with).
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => sessions.set(id, created),
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      const mcp = new McpServer({ name: "echo", version: "1.0.0" });
      mcp.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => echoAnswer(text, answer));
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What `echo` answers: the recorded `answer` verbatim when there is one, else `text`. */
export function echoAnswer(text, answer) {
  if (answer === undefined) return { content: [{ type: "text", text }] };
  const { content, structuredContent } = answer;
  return { content, ...(structuredContent !== undefined ? { structuredContent } : {}) };
}
