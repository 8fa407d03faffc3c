import type { Command } from "commander";
import { ConnectionRecords } from "../../connect/connection-records.js";
import { runningServer } from "../../connect/running-server.js";
import { ProviderSessionsTable } from "../../store/tables/provider-sessions.js";
import { RunsTable } from "../../store/tables/runs.js";
import { ThreadsTable } from "../../store/tables/threads.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { withHost } from "../open-host.js";
import { EXIT, printJson, style } from "../output.js";

/** "3h 12m", "45s": how long a server has been up. */
function uptimeText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${seconds % 60}s`;
  return `${seconds}s`;
}

/**
 * `switchyard status`: whether a server runs on this home (its URL, pid, uptime), and what the
 * home holds: open provider sessions, threads and their active runs, connections. Exit 0 when a
 * server runs, 1 when none does, so scripts can wait on it.
 */
export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "Is a Switchyard server running on this home? Its URL and uptime, open sessions, active threads and connections",
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const server = runningServer(host.paths.home);
        const status = {
          home: host.paths.home,
          version: HOST_VERSION,
          server: server === null ? null : { ...server, uptimeMs: Date.now() - Date.parse(server.startedAt) },
          openSessions: await new ProviderSessionsTable(host.store).countOpen(),
          threads: await new ThreadsTable(host.store).countLive(),
          activeThreads: await new RunsTable(host.store).countThreadsWithActiveRuns(),
          connections: new ConnectionRecords(host.paths.home).list().length,
        };
        if (options.json) printJson(status);
        else {
          const lines = [`Switchyard ${HOST_VERSION}, home ${status.home}`];
          if (status.server === null)
            lines.push(`  server:      ${style("not running", "yellow")} (start it with \`switchyard serve\`)`);
          else
            lines.push(
              `  server:      ${style("running", "green")} at ${status.server.mcpUrl} (pid ${status.server.pid}, up ${uptimeText(status.server.uptimeMs)}, since ${status.server.startedAt})`,
            );
          lines.push(`  sessions:    ${status.openSessions} open`);
          lines.push(`  threads:     ${status.threads} (${status.activeThreads} with a run under way)`);
          lines.push(
            `  connections: ${status.connections}${status.connections > 0 ? " (switchyard connections)" : " (switchyard connect <harness> wires your own agents)"}`,
          );
          process.stdout.write(`${lines.join("\n")}\n`);
        }
        if (server === null) process.exitCode = EXIT.failed;
      });
    });
}
