import type { Command } from "commander";
import { SwitchyardHost } from "../../host/switchyard-host.js";
import { startServer } from "../../transports/http/switchyard-server.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { logFormatOption, logLevelOption, serverLogger, type LogOptions } from "../log-options.js";
import { parsePort } from "../parse.js";
import { style } from "../output.js";

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Run the Switchyard server: the MCP endpoint on 127.0.0.1, the engine and the provider plugins")
    .option("--port <port>", "port to listen on; 0 picks a free one (default: config server.port, 7410)", parsePort)
    .option("--home <dir>", "Switchyard home (default: $SWITCHYARD_HOME or ~/.switchyard)")
    .option("--json", "print the endpoint as one JSON line instead of text")
    .addOption(logLevelOption())
    .addOption(logFormatOption())
    .action(async (options: { port?: number; home?: string; json?: boolean } & LogOptions) => {
      const host = await SwitchyardHost.create({ ...(options.home !== undefined ? { home: options.home } : {}), logger: serverLogger(options) });
      const report = host.start();
      let server;
      try {
        server = await startServer(host, options.port !== undefined ? { port: options.port } : {});
      } catch (error) {
        await host.stop();
        throw error;
      }
      const refused = host.pluginHost.list().filter((plugin) => plugin.status === "refused");
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ mcpUrl: server.mcpUrl, url: server.url, port: server.port, home: host.paths.home, version: HOST_VERSION })}\n`);
      } else {
        const lines = [
          `Switchyard ${HOST_VERSION}`,
          `MCP endpoint: ${server.mcpUrl}`,
          `Home: ${host.paths.home}`,
          `Providers: ${host.providers.list().map((p) => `${p.descriptor.id} (${p.descriptor.driver})`).join(", ") || "none configured (add them to config.json)"}`,
        ];
        if (report.continuedRuns.length + report.interruptedRuns.length > 0) {
          lines.push(`Recovered after restart: ${report.continuedRuns.length} run(s) continued, ${report.interruptedRuns.length} interrupted`);
        }
        for (const plugin of refused) lines.push(style(`warning: ${plugin.refusal?.message}`, "yellow"));
        process.stdout.write(`${lines.join("\n")}\n`);
      }
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        host.logger.info("shutting down", { signal });
        await server.close();
        await host.stop();
        process.exit(0);
      };
      process.on("SIGINT", () => void stop("SIGINT"));
      process.on("SIGTERM", () => void stop("SIGTERM"));
    });
}
