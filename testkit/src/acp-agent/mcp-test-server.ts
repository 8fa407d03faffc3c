import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod";

/** One tool call the test MCP server received. */
export interface TestMcpCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/** A small real MCP server (Streamable HTTP, bearer auth) on 127.0.0.1, for tests. */
export interface TestMcpServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The bearer token it accepts. */
  readonly token: string;
  /** Tool calls received, in order. */
  readonly calls: readonly TestMcpCall[];
  /** Requests refused for a missing or wrong bearer token. */
  readonly rejectedRequests: number;
  close(): Promise<void>;
}

/**
 * Starts an MCP server with one tool, `echo` (`{text}` → `echo: <text>`), that refuses every
 * request without `Authorization: Bearer <token>` (401, like the Switchyard endpoint).
 */
export async function startTestMcpServer(options: { readonly token?: string } = {}): Promise<TestMcpServer> {
  const token = options.token ?? `test-${randomUUID()}`;
  const calls: TestMcpCall[] = [];
  let rejectedRequests = 0;
  const transports = new Map<string, StreamableHTTPServerTransport>();

  const buildServer = () => {
    const server = new McpServer({ name: "switchyard-test", version: "0.0.0" });
    server.registerTool(
      "echo",
      { description: "Echoes its input.", inputSchema: { text: z.string() } },
      async ({ text }) => {
        calls.push({ tool: "echo", args: { text } });
        return { content: [{ type: "text", text: `echo: ${text}` }] };
      },
    );
    return server;
  };

  const httpServer = http.createServer((req, res) => {
    void (async () => {
      if (!req.url?.startsWith("/mcp")) {
        res.writeHead(404).end();
        return;
      }
      if (req.headers.authorization !== `Bearer ${token}`) {
        rejectedRequests++;
        res
          .writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" })
          .end(JSON.stringify({ error: "invalid_mcp_credential" }));
        return;
      }
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      if (transport === undefined) {
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) transports.delete(created.sessionId);
        };
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    token,
    calls,
    get rejectedRequests() {
      return rejectedRequests;
    },
    close: async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close().catch(() => undefined)));
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
