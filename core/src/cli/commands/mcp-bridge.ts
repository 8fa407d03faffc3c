import type { Command } from "commander";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CliError, EXIT } from "../output.js";

/**
 * `switchyard mcp-bridge`: a stdio MCP server that forwards every message to the Switchyard
 * HTTP endpoint, for harnesses without an HTTP MCP client. Endpoint and token come from the
 * environment (SWITCHYARD_MCP_URL, SWITCHYARD_MCP_TOKEN), never argv.
 */
export function registerMcpBridge(program: Command): void {
  program
    .command("mcp-bridge")
    .description("Bridge a stdio MCP client to the Switchyard endpoint (reads SWITCHYARD_MCP_URL and SWITCHYARD_MCP_TOKEN)")
    .action(async () => {
      const url = process.env.SWITCHYARD_MCP_URL;
      const token = process.env.SWITCHYARD_MCP_TOKEN;
      if (!url || !token) throw new CliError("SWITCHYARD_MCP_URL and SWITCHYARD_MCP_TOKEN must be set in the environment.", EXIT.usage);
      const upstream = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
      const downstream = new StdioServerTransport();
      downstream.onmessage = (message) => {
        upstream.send(message).catch((error: unknown) => process.stderr.write(`switchyard mcp-bridge: ${(error as Error).message}\n`));
      };
      upstream.onmessage = (message) => {
        void downstream.send(message);
      };
      upstream.onerror = (error) => process.stderr.write(`switchyard mcp-bridge: ${error.message}\n`);
      const close = async () => {
        await upstream.close().catch(() => undefined);
        process.exit(0);
      };
      downstream.onclose = () => void close();
      process.stdin.on("end", () => void close());
      await upstream.start();
      await downstream.start();
    });
}
