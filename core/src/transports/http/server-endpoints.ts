import type { SwitchyardHost } from "../../host/switchyard-host.js";
import { pluginPathsFor } from "../../config/plugin-paths.js";
import { SPEC_SEMVER } from "../../spec/index.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { McpEndpoint } from "../mcp/mcp-endpoint.js";
import { ORCHESTRATOR_TOOLS } from "../mcp/tools/index.js";
import { API_ROUTES, ApiRouter } from "./api/index.js";
import { createPluginApiRoutes } from "./api/plugin-routes.js";
import { EventStreams } from "./api/event-stream.js";
import { WebApp } from "./web-app.js";
import { WebhookRoute } from "./webhook-route.js";

/** What the server hands requests to, built over the host's served services. */
export interface ServerEndpoints {
  readonly mcp: McpEndpoint;
  /** The HTTP API, plugins' routes mounted on it. */
  readonly api: ApiRouter;
  /** The open `GET /api/v1/events` streams. */
  readonly eventStreams: EventStreams;
  readonly hooks: WebhookRoute;
  readonly webApp: WebApp;
  /** Aborted when the server closes (or fails to start): plugins' route handlers stop their work. */
  readonly pluginWork: AbortController;
}

/** Builds the MCP endpoint, the HTTP API (with plugins' routes), webhooks and the web UI over `host`'s services. */
export async function buildServerEndpoints(
  host: SwitchyardHost,
  webAppDir: string | undefined,
): Promise<ServerEndpoints> {
  const served = host.served;
  const limits = host.config.server;
  const mcp = new McpEndpoint(
    ORCHESTRATOR_TOOLS,
    served.credentials,
    served,
    host.logger.child({ component: "mcp" }),
    limits.mcpServerName,
    { maxRequestBodyBytes: limits.maxRequestBodyBytes },
    { grants: served.reachGrants, audit: served.audit },
  );
  const eventStreams = new EventStreams(served.eventStream, limits, host.logger.child({ component: "events" }));
  const api = new ApiRouter(
    served.credentials,
    { ...served, eventStreams },
    host.logger.child({ component: "api" }),
    { maxRequestBodyBytes: limits.maxRequestBodyBytes },
    API_ROUTES,
  );
  const pluginWork = new AbortController();
  await mountPluginRoutes(host, api, pluginWork.signal);
  const hooks = new WebhookRoute(
    served.scheduledTriggers,
    host.config.scheduling.maxWebhookBodyBytes,
    host.logger.child({ component: "webhooks" }),
  );
  return { mcp, api, eventStreams, hooks, webApp: new WebApp(webAppDir), pluginWork };
}

/**
 * Plugins' operations mount on the same router, so they get its authentication, scope checks,
 * CSRF rules and failure shape; a plugin whose routes are malformed gets none.
 */
async function mountPluginRoutes(host: SwitchyardHost, api: ApiRouter, signal: AbortSignal): Promise<void> {
  const builtins = host.pluginHost
    .list()
    .filter((plugin) => plugin.source === "builtin")
    .map((plugin) => plugin.name);
  const contextFor = (pluginName: string) => ({
    specVersion: SPEC_SEMVER,
    hostVersion: HOST_VERSION,
    paths: pluginPathsFor(host.paths, pluginName),
    logger: host.logger.child({ plugin: pluginName }),
    signal,
  });
  const pluginRoutes = await createPluginApiRoutes(
    host.pluginHost.routeContributions(),
    contextFor,
    api.routes().map((route) => route.operationId),
    builtins,
  );
  for (const route of pluginRoutes.routes) api.register(route);
  for (const { plugin, problem } of pluginRoutes.refused)
    host.logger.warn("plugin routes refused", { plugin, reason: problem });
}
