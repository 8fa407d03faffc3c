// The baseline for the 2026-07-28 revision: the MCP SDK's v2 server on its own HTTP entry
// (`createMcpHandler`, mounted on node:http with `toNodeHandler`), which serves that revision
// statelessly, as the revision is: a fresh server per request, no session to reuse. It is the
// SDK's one way to serve 2026-07-28 over HTTP, so it is the floor a 2026 call is held to.
import { createServer } from "node:http";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { z } from "zod";
import { echoAnswer } from "./stateful-echo-server.js";

/** Starts the echo server on 127.0.0.1; `echo({ text })` and `answer` as in stateful-echo-server.js. */
export async function startModernEchoServer({ answer } = {}) {
  const handler = createMcpHandler(() => {
    const mcp = new McpServer({ name: "echo", version: "1.0.0" });
    mcp.registerTool("echo", { inputSchema: z.object({ text: z.string() }) }, async ({ text }) =>
      echoAnswer(text, answer),
    );
    return mcp;
  });
  const serve = toNodeHandler(handler);
  const server = createServer((req, res) => void serve(req, res));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
