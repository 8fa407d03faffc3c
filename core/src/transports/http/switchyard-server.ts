import type { IncomingMessage, ServerResponse } from "node:http";
import type { SwitchyardHost } from "../../host/switchyard-host.js";
import { SPEC_SEMVER, SwitchyardError } from "../../spec/index.js";
import { ChangeSetService } from "../../services/workspaces/change-set-service.js";
import { WorkspaceJanitor } from "../../services/workspaces/workspace-janitor.js";
import { McpSessionRegistry } from "../../services/credentials/mcp-session-registry.js";
import { CallerContext } from "../../services/caller-context.js";
import { CapabilitiesService } from "../../services/capabilities-service.js";
import { ProjectService } from "../../services/project-service.js";
import { ProviderDoctorService } from "../../services/provider-doctor-service.js";
import { DelegatedTaskService } from "../../services/delegation/delegated-task-service.js";
import { PendingRequestService } from "../../services/pending-request-service.js";
import { ThreadLaunchService } from "../../services/thread-launch-service.js";
import { ThreadMetadataService } from "../../services/thread-metadata-service.js";
import { ThreadQueryService } from "../../services/thread-query-service.js";
import { ScheduledTaskService } from "../../services/scheduling/scheduled-task-service.js";
import { ReachForwarder } from "../../services/reach/reach-forwarder.js";
import { ForeignTasks } from "../../services/reach/foreign-tasks.js";
import { ScheduledTriggerService } from "../../services/scheduling/scheduled-trigger-service.js";
import { CLI_ENTRY } from "../../util/package-paths.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { McpEndpoint } from "../mcp/mcp-endpoint.js";
import { ORCHESTRATOR_TOOLS } from "../mcp/tools/index.js";
import { closeConnectionOnErrorStatus } from "./server-limits.js";
import { checkLoopbackRequest } from "./loopback-guard.js";
import { bindLoopbackListener, isLoopbackAddress, urlHost, type LoopbackListener } from "./loopback-listener.js";
import type { TlsIdentity } from "./tls-identity.js";
import { ReachGrants } from "../../services/reach/reach-grants.js";
import { ReachAudit } from "../../services/reach/reach-audit.js";
import { RemoteChildren } from "../../services/reach/remote-children.js";
import { RequestTurns } from "./request-turns.js";
import { WebhookRoute } from "./webhook-route.js";
import { API_ROUTES, ApiFailure, ApiRouter } from "./api/index.js";
import { createPluginApiRoutes } from "./api/plugin-routes.js";
import { pluginPathsFor } from "../../config/plugin-paths.js";
import { WebApp } from "./web-app.js";
import { WebSessions } from "../../services/credentials/web-sessions.js";
import { EventStreamService } from "../../services/events/event-stream-service.js";
import { EventStreams } from "./events/event-stream.js";

/** A listening Switchyard server. */
export interface RunningServer {
  /** The port of `url`. */
  readonly port: number;
  /** `http://127.0.0.1:<port>` (or the loopback address `--host` chose): what this machine's agents, CLI and browser use. */
  readonly url: string;
  /** `<url>/mcp` */
  readonly mcpUrl: string;
  /**
   * Where other machines reach this server: `url` itself, or, when it serves TLS (`serve --host`
   * beyond loopback), `https://<host>:<port>` while `url` is a plain loopback port of its own (local
   * agents and harnesses cannot be asked to trust a self-signed certificate).
   */
  readonly publicUrl: string;
  /** The SHA-256 fingerprint of the TLS certificate at `publicUrl` (what `link add` pins); null without TLS. */
  readonly tlsFingerprint: string | null;
  readonly mcp: McpEndpoint;
  /** `<url>/api/v1` */
  readonly apiUrl: string;
  /** The HTTP API's router: more routes can be registered on it. */
  readonly api: ApiRouter;
  /** The open `GET /api/v1/events` streams. */
  readonly eventStreams: EventStreams;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function apiFailure(res: ServerResponse, failure: ApiFailure): void {
  json(res, failure.status, { error: { code: failure.code, message: failure.message, details: failure.details } }, failure.headers);
}

/**
 * Starts the HTTP server on 127.0.0.1 (the MCP endpoint at /mcp, the HTTP API under /api/v1
 * and a health probe) and the host behind it, in the order that gives every session its
 * credential: the socket is bound
 * (on `options.listener`, or now), grants point at it, then the host starts (reconciling and
 * reopening sessions of continued runs), then requests are handled. The host must not be
 * started yet.
 */
export async function startServer(host: SwitchyardHost, options: { port?: number; listener?: LoopbackListener; webAppDir?: string; listen?: { host: string; tls?: TlsIdentity | null } } = {}): Promise<RunningServer> {
  if (host.isStarted) {
    throw new SwitchyardError(
      "internal",
      "startServer(host) starts the host itself, after the MCP endpoint is wired, so sessions reopened at boot get their credentials; do not call host.start() before it.",
    );
  }
  const registry = host.container.resolve(McpSessionRegistry);
  const serverName = host.config.server.mcpServerName;
  const limits = host.config.server;
  const services = {
    config: host.config,
    environmentId: registry.environmentId,
    capabilities: host.container.resolve(CapabilitiesService),
    tasks: host.container.resolve(DelegatedTaskService),
    threads: host.threads,
    queries: host.container.resolve(ThreadQueryService),
    metadata: host.container.resolve(ThreadMetadataService),
    launches: host.container.resolve(ThreadLaunchService),
    pendingRequests: host.container.resolve(PendingRequestService),
    callers: host.container.resolve(CallerContext),
    schedules: host.container.resolve(ScheduledTaskService),
    reach: host.container.resolve(ReachForwarder),
    foreignTasks: host.container.resolve(ForeignTasks),
    changeSets: host.container.resolve(ChangeSetService),
  };
  const reach = { grants: host.container.resolve(ReachGrants), audit: host.container.resolve(ReachAudit) };
  const mcp = new McpEndpoint(ORCHESTRATOR_TOOLS, registry, services, host.logger.child({ component: "mcp" }), serverName, { maxRequestBodyBytes: limits.maxRequestBodyBytes }, reach);
  const eventStreams = new EventStreams(host.container.resolve(EventStreamService), limits, host.logger.child({ component: "events" }));
  const api = new ApiRouter(registry, { ...services, projects: host.container.resolve(ProjectService), providerDoctor: host.container.resolve(ProviderDoctorService), usage: host.usage, forks: host.forks, eventStreams, webSessions: host.container.resolve(WebSessions), audit: reach.audit, remoteChildren: host.container.resolve(RemoteChildren), workspaces: host.container.resolve(WorkspaceJanitor) }, host.logger.child({ component: "api" }), { maxRequestBodyBytes: limits.maxRequestBodyBytes }, API_ROUTES);
  // Plugins' operations mount on the same router, so they get its authentication, scope
  // checks, CSRF rules and failure shape; a plugin whose routes are malformed gets none.
  const pluginWork = new AbortController();
  const pluginRoutes = await createPluginApiRoutes(host.pluginHost.routeContributions(), (pluginName) => ({
    specVersion: SPEC_SEMVER,
    hostVersion: HOST_VERSION,
    paths: pluginPathsFor(host.paths, pluginName),
    logger: host.logger.child({ plugin: pluginName }),
    signal: pluginWork.signal,
  }), api.routes().map((route) => route.operationId), host.pluginHost.list().filter((plugin) => plugin.source === "builtin").map((plugin) => plugin.name));
  for (const route of pluginRoutes.routes) api.register(route);
  for (const { plugin, problem } of pluginRoutes.refused) host.logger.warn("plugin routes refused", { plugin, reason: problem });
  const hooks = new WebhookRoute(host.container.resolve(ScheduledTriggerService), host.config.scheduling.maxWebhookBodyBytes, host.logger.child({ component: "webhooks" }));
  const webApp = new WebApp(options.webAppDir);
  const listener = options.listener ?? (await bindLoopbackListener(options.port ?? host.config.server.port, limits, options.listen ?? {}));
  // A TLS listener is for other machines; this machine's agents get a plain loopback port.
  let local: LoopbackListener;
  try {
    local = listener.protocol === "https" ? await bindLoopbackListener(0, limits) : listener;
  } catch (error) {
    await listener.close();
    throw error;
  }
  const listeners = local === listener ? [listener] : [local, listener];
  const port = local.port;
  const turns = new RequestTurns();
  const handlerFor = (listener: LoopbackListener) => (req: IncomingMessage, res: ServerResponse): void => {
    const cap = listener.cap;
    closeConnectionOnErrorStatus(res);
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    // The API answers every refusal in its own failure shape; /mcp and /health keep theirs.
    const isApi = ApiRouter.owns(path);
    if (cap.isOverCap(req.socket)) {
      const message = `Switchyard has ${cap.maxConnections} open connections (server.maxConnections); retry shortly.`;
      if (isApi) apiFailure(res, new ApiFailure("server_busy", message, { maxConnections: cap.maxConnections }, 503, { "retry-after": "1" }));
      else json(res, 503, { error: "server_busy", error_description: message }, { "retry-after": "1" });
      return;
    }
    // Beyond loopback, TLS and the bearer credential stand in for the Host rule: no browser page
    // gets a TLS session to this server under its own name. Origins stay loopback-only.
    const refused = checkLoopbackRequest(req, { anyHostName: hooks.owns(path) || !isLoopbackAddress(listener.host), boundHost: urlHost(listener.host) });
    if (refused !== null) {
      if (isApi) apiFailure(res, new ApiFailure(refused.status === 403 ? "host_not_allowed" : "invalid_request", refused.description, {}, refused.status));
      else json(res, refused.status, { error: refused.error, error_description: refused.description });
      return;
    }
    if (isApi) {
      turns.enqueue(() => {
        if (res.destroyed) return;
        api.handle(req, res).catch((error: unknown) => {
          host.logger.error("API request failed", { error: (error as Error).message });
          if (!res.headersSent) apiFailure(res, new ApiFailure("orchestration_error", "The request failed inside the server."));
          else res.end();
        });
      });
      return;
    }
    if (hooks.owns(path)) {
      turns.enqueue(() => {
        if (res.destroyed) return;
        hooks.handle(req, res, path).catch((error: unknown) => {
          host.logger.error("webhook request failed", { error: (error as Error).message });
          if (!res.headersSent) json(res, 500, { error: "internal_error" });
          else res.end();
        });
      });
      return;
    }
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
    // Everything else is the web UI (its client routes included).
    webApp.handle(req, res, path);
  };
  const url = local.url;
  const mcpUrl = `${url}/mcp`;
  const apiUrl = `${url}/api/v1`;
  registry.setEndpoint({ url: mcpUrl, serverName, maxWaitMs: host.config.server.maxWaitMs, bridge: { command: process.execPath, args: [CLI_ENTRY, "mcp-bridge"] } });
  const schedules = host.container.resolve(ScheduledTaskService);
  schedules.setWebhookBaseUrl(url);
  try {
    host.start();
  } catch (error) {
    pluginWork.abort();
    registry.setEndpoint(null);
    schedules.setWebhookBaseUrl(null);
    for (const each of listeners) await each.close();
    throw error;
  }
  for (const each of listeners) each.serve(handlerFor(each));
  host.logger.info("server listening", { url, mcpUrl, publicUrl: listener.url });
  return {
    port,
    url,
    mcpUrl,
    publicUrl: listener.url,
    tlsFingerprint: listener.tlsFingerprint,
    mcp,
    apiUrl,
    api,
    eventStreams,
    // Stops taking requests and issuing grants; closing the host then closes the sessions,
    // revoking each one's credentials.
    close: async () => {
      eventStreams.closeAll();
      pluginWork.abort();
      await mcp.close();
      for (const each of listeners) await each.close();
      registry.setEndpoint(null);
      schedules.setWebhookBaseUrl(null);
    },
  };
}
