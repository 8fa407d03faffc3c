import type { Command } from "commander";
import { loadConfig } from "../../config/config-loader.js";
import { requireUsableHome } from "../../config/home-access.js";
import { pathsFor, resolveHome } from "../../config/paths.js";
import { acquireHomeLock, HomeLockedError, type HomeLock } from "../../host/home-lock.js";
import { SwitchyardHost } from "../../host/switchyard-host.js";
import { hasErrorCode } from "../../spec/index.js";
import {
  bindLoopbackListener,
  isLoopbackAddress,
  type LoopbackListener,
} from "../../transports/http/loopback-listener.js";
import {
  readTlsIdentity,
  selfSignedTlsIdentity,
  type PinnableTlsIdentity,
  type TlsIdentity,
} from "../../transports/http/tls-identity.js";
import { displayFingerprint } from "../../services/reach/pinned-fetch.js";
import type { ServerLimits } from "../../transports/http/server-limits.js";
import { startServer } from "../../transports/http/switchyard-server.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { forgetRunningServer, recordRunningServer } from "../../connect/running-server.js";
import { logFormatOption, logLevelOption, serverLogger, type LogOptions } from "../log-options.js";
import { parsePort } from "../parse.js";
import { CliError, EXIT, style } from "../output.js";

/** One engine per home: a second server is refused before it loads anything. */
function takeHomeLock(home: string): HomeLock {
  try {
    return acquireHomeLock(home);
  } catch (error) {
    if (error instanceof HomeLockedError) throw new CliError(error.message, EXIT.usage);
    throw error;
  }
}

/** Binds the port before plugins load, so a taken port fails at once and says what to do. */
async function bindPort(
  port: number,
  limits: ServerLimits,
  configFile: string,
  listen: { host?: string; tls?: TlsIdentity | null },
): Promise<LoopbackListener> {
  try {
    return await bindLoopbackListener(port, limits, listen);
  } catch (error) {
    if (hasErrorCode(error) && error.code === "invalid_input") throw new CliError(error.message, EXIT.usage);
    if (hasErrorCode(error) && error.code === "conflict") {
      throw new CliError(
        `${error.message} Stop the program using it (another Switchyard server?), or choose another port with --port <port> (--port 0 picks a free one) or server.port in ${configFile}.`,
        EXIT.usage,
      );
    }
    throw error;
  }
}

interface TlsOptions {
  host?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsSelfSigned?: boolean;
}

/**
 * The TLS identity `serve` was asked for, or null; refuses, before anything is bound, an address
 * beyond loopback without one and half-given certificate options.
 */
async function tlsIdentityFor(options: TlsOptions, home: string): Promise<PinnableTlsIdentity | null> {
  const host = options.host ?? "127.0.0.1";
  if ((options.tlsCert === undefined) !== (options.tlsKey === undefined))
    throw new CliError(
      "--tls-cert and --tls-key go together: give the certificate and its private key (PEM files).",
      EXIT.usage,
    );
  if (options.tlsSelfSigned && options.tlsCert !== undefined)
    throw new CliError("Give either --tls-cert/--tls-key or --tls-self-signed, not both.", EXIT.usage);
  const wantsTls = options.tlsSelfSigned === true || options.tlsCert !== undefined;
  if (!wantsTls && !isLoopbackAddress(host)) {
    throw new CliError(
      `serve --host ${host} needs TLS: ${host} is not a loopback address, and tokens and link secrets must not cross a network in clear. Add --tls-self-signed (a certificate made once under the home; links pin its fingerprint) or --tls-cert <file> --tls-key <file>, or keep the default 127.0.0.1 and reach it through an SSH tunnel (docs/multi-machine.md).`,
      EXIT.usage,
    );
  }
  if (!wantsTls) return null;
  try {
    return options.tlsSelfSigned
      ? await selfSignedTlsIdentity(home, host)
      : readTlsIdentity(options.tlsCert!, options.tlsKey!);
  } catch (error) {
    if (hasErrorCode(error)) throw new CliError((error as unknown as Error).message, EXIT.usage);
    throw error;
  }
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description(
      "Run the Switchyard server: the MCP endpoint on 127.0.0.1 (or --host, with TLS beyond loopback), the engine and the provider plugins",
    )
    .option("--port <port>", "port to listen on; 0 picks a free one (default: config server.port, 7410)", parsePort)
    .option(
      "--host <addr>",
      "address to listen on (default 127.0.0.1); any non-loopback address needs TLS, and this machine's agents then get a loopback port of their own",
    )
    .option("--tls-cert <file>", "serve TLS with this PEM certificate (with --tls-key)")
    .option("--tls-key <file>", "the PEM private key of --tls-cert")
    .option(
      "--tls-self-signed",
      "serve TLS with a self-signed certificate made once under the home (keys/tls); links pin its SHA-256 fingerprint",
    )
    .option("--home <dir>", "Switchyard home (default: $SWITCHYARD_HOME or ~/.switchyard)")
    .option("--json", "print the endpoint as one JSON line instead of text")
    .addOption(logLevelOption())
    .addOption(logFormatOption())
    .action(async (options: { port?: number; home?: string; json?: boolean } & TlsOptions & LogOptions) => {
      // Boot order: the home lock, the port, then plugins; the server wires the MCP endpoint
      // before it starts the host, so sessions reopened for continued runs get credentials.
      const home = resolveHome(options.home);
      requireUsableHome(home);
      const tls = await tlsIdentityFor(options, home);
      const lock = takeHomeLock(home);
      let host: SwitchyardHost;
      let listener: LoopbackListener | null = null;
      try {
        const { configFile } = pathsFor(home);
        const { server } = loadConfig(configFile);
        listener = await bindPort(options.port ?? server.port, server, configFile, {
          ...(options.host !== undefined ? { host: options.host } : {}),
          tls,
        });
        host = await SwitchyardHost.create({ home, logger: serverLogger({ ...options, home }), homeLock: lock });
      } catch (error) {
        await listener?.close();
        lock.release();
        throw error;
      }
      let server;
      try {
        server = await startServer(host, { listener });
      } catch (error) {
        await host.stop();
        throw error;
      }
      // Shutdown order: stop taking requests, then close the sessions (revoking each one's
      // credentials), then give the home up. Registered before the endpoint is printed, so a
      // signal sent as soon as it appears is handled.
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        host.logger.info("shutting down", { signal });
        forgetRunningServer(host.paths.home, process.pid);
        await server.close();
        await host.stop();
        process.exit(0);
      };
      process.on("SIGINT", () => void stop("SIGINT"));
      process.on("SIGTERM", () => void stop("SIGTERM"));
      // `connect`, `connections` and `status` find the server here (a --port 0 one too).
      recordRunningServer(host.paths.home, {
        pid: process.pid,
        url: server.url,
        mcpUrl: server.mcpUrl,
        port: server.port,
        startedAt: new Date().toISOString(),
        version: HOST_VERSION,
      });
      const report = host.reconcileReport!;
      const refused = host.pluginHost.list().filter((plugin) => plugin.status === "refused");
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ mcpUrl: server.mcpUrl, url: server.url, port: server.port, publicUrl: server.publicUrl, tlsFingerprint: server.tlsFingerprint, home: host.paths.home, version: HOST_VERSION })}\n`,
        );
      } else {
        // What each instance can do now (waiting at most a moment for its first check), so a
        // provider that cannot run work says so here rather than at the first thread.
        const availability = new Map((await host.providers.snapshotAll()).map((a) => [a.instanceId, a]));
        const providerText = (id: string, driver: string) => {
          const known = availability.get(id);
          if (known === undefined || known.available) return `${id} (${driver})`;
          return style(
            `${id} (${driver}, ${known.state === "checking" ? "still being checked" : `unavailable: ${known.reason ?? "unknown reason"}`})`,
            "yellow",
          );
        };
        const unavailable = host.providers.list().filter((p) => availability.get(p.descriptor.id)?.available === false);
        const lines = [
          `Switchyard ${HOST_VERSION}`,
          `MCP endpoint: ${server.mcpUrl}`,
          `Web UI: ${server.url}/ (sign in with the link \`switchyard ui\` prints, or paste a token)`,
          ...(server.publicUrl !== server.url
            ? [
                `Other machines: ${server.publicUrl} (link add pins TLS certificate SHA-256 ${displayFingerprint(server.tlsFingerprint!)})`,
              ]
            : []),
          `Home: ${host.paths.home}`,
          `Providers: ${
            host.providers
              .list()
              .map((p) => providerText(p.descriptor.id, p.descriptor.driver))
              .join(", ") || "none configured (add them to config.json)"
          }`,
          ...(unavailable.length > 0
            ? [
                style(
                  `warning: ${unavailable.length} provider instance(s) cannot run work now; \`switchyard doctor\` says why and what to do.`,
                  "yellow",
                ),
              ]
            : []),
        ];
        if (report.continuedRuns.length + report.interruptedRuns.length > 0) {
          lines.push(
            `Recovered after restart: ${report.continuedRuns.length} run(s) continued, ${report.interruptedRuns.length} interrupted`,
          );
        }
        for (const plugin of refused) lines.push(style(`warning: ${plugin.refusal?.message}`, "yellow"));
        process.stdout.write(`${lines.join("\n")}\n`);
      }
    });
}
