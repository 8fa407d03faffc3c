import type { IncomingMessage, ServerResponse } from "node:http";
import type { SwitchyardHost } from "../../host/switchyard-host.js";
import { SwitchyardError } from "../../spec/index.js";
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
import { checkLoopbackRequest } from "./loopback-guard.js";
import { bindLoopbackListener, type LoopbackListener } from "./loopback-listener.js";

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

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * Starts the HTTP server on 127.0.0.1 (the MCP endpoint at /mcp and a health probe) and the
 * host behind it, in the order that gives every session its credential: the socket is bound
 * (on `options.listener`, or now), grants point at it, then the host starts (reconciling and
 * reopening sessions of continued runs), then requests are handled. The host must not be
 * started yet.
 */
export async function startServer(host: SwitchyardHost, options: { port?: number; listener?: LoopbackListener } = {}): Promise<RunningServer> {
  if (host.isStarted) {
    throw new SwitchyardError(
      "internal",
      "startServer(host) starts the host itself, after the MCP endpoint is wired, so sessions reopened at boot get their credentials; do not call host.start() before it.",
    );
  }
  const registry = host.container.resolve(McpSessionRegistry);
  const serverName = host.config.server.mcpServerName;
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
  );
  const listener = options.listener ?? (await bindLoopbackListener(options.port ?? host.config.server.port));
  const server = listener.server;
  const port = listener.port;
  const handleRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const refused = checkLoopbackRequest(req, port);
    if (refused !== null) {
      json(res, 403, { error: "forbidden", error_description: refused });
      return;
    }
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path === "/mcp") {
      mcp.handle(req, res).catch((error: unknown) => {
        host.logger.error("MCP request failed", { error: (error as Error).message });
        if (!res.headersSent) json(res, 500, { error: "internal_error" });
        else res.end();
      });
      return;
    }
    if (path === "/health") {
      json(res, 200, { status: "ok", version: HOST_VERSION, environmentId: registry.environmentId });
      return;
    }
    json(res, 404, { error: "not_found" });
  };
  // Long waits (delegate_task, t3_thread_wait) hold requests open; never cut them off server-side.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  const url = `http://127.0.0.1:${port}`;
  const mcpUrl = `${url}/mcp`;
  registry.setEndpoint({ url: mcpUrl, serverName, maxWaitMs: host.config.server.maxWaitMs, bridge: { command: process.execPath, args: [CLI_ENTRY, "mcp-bridge"] } });
  try {
    host.start();
  } catch (error) {
    registry.setEndpoint(null);
    await listener.close();
    throw error;
  }
  listener.serve(handleRequest);
  host.logger.info("server listening", { url, mcpUrl });
  return {
    port,
    url,
    mcpUrl,
    mcp,
    // Stops taking requests and issuing grants; closing the host then closes the sessions,
    // revoking each one's credentials.
    close: async () => {
      await listener.close();
      registry.setEndpoint(null);
    },
  };
}
