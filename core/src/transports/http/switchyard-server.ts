import type { SwitchyardHost } from "../../host/switchyard-host.js";
import { SwitchyardError } from "../../spec/index.js";
import { CLI_ENTRY } from "../../util/package-paths.js";
import type { McpEndpoint } from "../mcp/mcp-endpoint.js";
import type { ApiRouter } from "./api/index.js";
import type { EventStreams } from "./api/event-stream.js";
import { bindLoopbackListener, type LoopbackListener } from "./loopback-listener.js";
import { RequestTurns } from "./request-turns.js";
import { requestRouter } from "./request-routing.js";
import { buildServerEndpoints } from "./server-endpoints.js";
import type { TlsIdentity } from "./tls-identity.js";

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

/** Where `startServer` listens. */
export interface ServerListenOptions {
  /** The port to bind (default `server.port`); 0 lets the OS choose. */
  readonly port?: number;
  /** A listener bound already (the CLI binds before loading plugins, so a taken port fails first). */
  readonly listener?: LoopbackListener;
  /** The built web UI to serve (default the one shipped with core). */
  readonly webAppDir?: string;
  /** The address to bind beyond loopback, with its TLS identity. */
  readonly listen?: { host: string; tls?: TlsIdentity | null };
}

/**
 * The listeners: `options.listener` (or one bound now), and when that one serves TLS (for other
 * machines) a plain loopback port of its own for this machine's agents.
 */
async function bindListeners(
  host: SwitchyardHost,
  options: ServerListenOptions,
): Promise<{ local: LoopbackListener; public: LoopbackListener; all: LoopbackListener[] }> {
  const limits = host.config.server;
  const listener =
    options.listener ?? (await bindLoopbackListener(options.port ?? limits.port, limits, options.listen ?? {}));
  let local: LoopbackListener;
  try {
    local = listener.protocol === "https" ? await bindLoopbackListener(0, limits) : listener;
  } catch (error) {
    await listener.close();
    throw error;
  }
  return { local, public: listener, all: local === listener ? [listener] : [local, listener] };
}

/**
 * Starts the HTTP server on 127.0.0.1 (the MCP endpoint at /mcp, the HTTP API under /api/v1
 * and a health probe) and the host behind it, in the order that gives every session its
 * credential: the socket is bound
 * (on `options.listener`, or now), grants point at it, then the host starts (reconciling and
 * reopening sessions of continued runs), then requests are handled. The host must not be
 * started yet.
 */
export async function startServer(host: SwitchyardHost, options: ServerListenOptions = {}): Promise<RunningServer> {
  if (host.isStarted) {
    throw new SwitchyardError(
      "internal",
      "startServer(host) starts the host itself, after the MCP endpoint is wired, so sessions reopened at boot get their credentials; do not call host.start() before it.",
    );
  }
  const { credentials, schedules, environmentId, threadLinks } = host.served;
  const endpoints = await buildServerEndpoints(host, options.webAppDir);
  let listeners: Awaited<ReturnType<typeof bindListeners>>;
  try {
    listeners = await bindListeners(host, options);
  } catch (error) {
    // A taken port: the plugins' route work ends with the server that never started.
    endpoints.pluginWork.abort();
    throw error;
  }
  const url = listeners.local.url;
  const mcpUrl = `${url}/mcp`;
  credentials.setEndpoint({
    url: mcpUrl,
    serverName: host.config.server.mcpServerName,
    maxWaitMs: host.config.server.maxWaitMs,
    bridge: { command: process.execPath, args: [CLI_ENTRY, "mcp-bridge"] },
  });
  schedules.setWebhookBaseUrl(url);
  // Web URLs name the address other clients reach (`--host`'s, else loopback); both are accepted back.
  threadLinks.setBoundUrls([listeners.public.url, ...listeners.all.map((each) => each.url)]);
  try {
    await host.start();
  } catch (error) {
    endpoints.pluginWork.abort();
    credentials.setEndpoint(null);
    schedules.setWebhookBaseUrl(null);
    threadLinks.setBoundUrls([]);
    for (const each of listeners.all) await each.close();
    throw error;
  }
  const turns = new RequestTurns();
  for (const each of listeners.all) each.serve(requestRouter(each, endpoints, turns, host.logger, environmentId));
  host.logger.info("server listening", { url, mcpUrl, publicUrl: listeners.public.url });
  return {
    port: listeners.local.port,
    url,
    mcpUrl,
    publicUrl: listeners.public.url,
    tlsFingerprint: listeners.public.tlsFingerprint,
    mcp: endpoints.mcp,
    apiUrl: `${url}/api/v1`,
    api: endpoints.api,
    eventStreams: endpoints.eventStreams,
    // Stops taking requests and issuing grants; closing the host then closes the sessions,
    // revoking each one's credentials.
    close: async () => {
      endpoints.eventStreams.closeAll();
      endpoints.pluginWork.abort();
      await endpoints.mcp.close();
      for (const each of listeners.all) await each.close();
      credentials.setEndpoint(null);
      schedules.setWebhookBaseUrl(null);
      threadLinks.setBoundUrls([]);
    },
  };
}
