import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SwitchyardHost } from "../../host/switchyard-host.js";
import { McpSessionRegistry } from "../../services/credentials/mcp-session-registry.js";
import { CapabilitiesService } from "../../services/capabilities-service.js";
import { DelegatedTaskService } from "../../services/delegation/delegated-task-service.js";
import { PendingRequestService } from "../../services/pending-request-service.js";
import { ThreadLaunchService } from "../../services/thread-launch-service.js";
import { ThreadMetadataService } from "../../services/thread-metadata-service.js";
import { ThreadQueryService } from "../../services/thread-query-service.js";
import { CLI_ENTRY } from "../../util/package-paths.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { McpEndpoint } from "../mcp/mcp-endpoint.js";
import { ORCHESTRATOR_TOOLS } from "../mcp/tools/index.js";
import { applyServerLimits, closeConnectionOnErrorStatus } from "./server-limits.js";
import { checkLoopbackRequest } from "./loopback-guard.js";
import { RequestTurns } from "./request-turns.js";

/** A listening Switchyard server. */
export interface RunningServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/mcp` */
  readonly mcpUrl: string;
  readonly mcp: McpEndpoint;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Starts the HTTP server on 127.0.0.1: the MCP endpoint at /mcp and a health probe. Provider
 * sessions opened after this get credentials pointing here.
 */
export async function startServer(host: SwitchyardHost, options: { port?: number } = {}): Promise<RunningServer> {
  const registry = host.container.resolve(McpSessionRegistry);
  const serverName = host.config.server.mcpServerName;
  const limits = host.config.server;
  const mcp = new McpEndpoint(
    ORCHESTRATOR_TOOLS,
    registry,
    {
      config: host.config,
      environmentId: registry.environmentId,
      capabilities: host.container.resolve(CapabilitiesService),
      tasks: host.container.resolve(DelegatedTaskService),
      threads: host.threads,
      queries: host.container.resolve(ThreadQueryService),
      metadata: host.container.resolve(ThreadMetadataService),
      launches: host.container.resolve(ThreadLaunchService),
      pendingRequests: host.container.resolve(PendingRequestService),
    },
    host.logger.child({ component: "mcp" }),
    serverName,
    { maxRequestBodyBytes: limits.maxRequestBodyBytes },
  );
  const turns = new RequestTurns();
  let port = 0;
  const handleRequest = (req: IncomingMessage, res: ServerResponse): void => {
    closeConnectionOnErrorStatus(res);
    if (cap.isOverCap(req.socket)) {
      json(res, 503, { error: "server_busy", error_description: `Switchyard has ${cap.maxConnections} open connections (server.maxConnections); retry shortly.` }, { "retry-after": "1" });
      return;
    }
    const refused = checkLoopbackRequest(req);
    if (refused !== null) {
      json(res, refused.status, { error: refused.error, error_description: refused.description });
      return;
    }
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path === "/mcp") {
      turns.enqueue(() => {
        if (res.destroyed) return;
        mcp.handle(req, res).catch((error: unknown) => {
          host.logger.error("MCP request failed", { error: (error as Error).message });
          if (!res.headersSent) json(res, 500, { error: "internal_error" });
          else res.end();
        });
      });
      return;
    }
    if (path === "/health") {
      json(res, 200, { status: "ok", version: HOST_VERSION, environmentId: registry.environmentId });
      return;
    }
    json(res, 404, { error: "not_found" });
  };
  const server: Server = createServer(handleRequest);
  const cap = applyServerLimits(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? host.config.server.port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const mcpUrl = `${url}/mcp`;
  registry.setEndpoint({ url: mcpUrl, serverName, maxWaitMs: host.config.server.maxWaitMs, bridge: { command: process.execPath, args: [CLI_ENTRY, "mcp-bridge"] } });
  host.sessions.setGrantIssuer(registry);
  host.logger.info("server listening", { url, mcpUrl });
  return {
    port,
    url,
    mcpUrl,
    mcp,
    close: async () => {
      host.sessions.setGrantIssuer(null);
      registry.setEndpoint(null);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
