import type { Command } from "commander";
import { withHost } from "../open-host.js";
import { printJson, printTable, style } from "../output.js";

/** `switchyard plugins list`: what loaded and what was refused, with reasons. */
export function registerPluginList(parent: Command): void {
  parent
    .command("list")
    .description("List plugins: loaded and refused, with reasons")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, (host) => {
        const plugins = host.pluginHost.list();
        if (options.json) {
          printJson(plugins);
          return;
        }
        printTable(
          ["PLUGIN", "VERSION", "SOURCE", "STATUS", "DRIVERS", "COMMANDS"],
          plugins.map((p) => [
            p.name,
            p.version ?? "-",
            p.source,
            p.status === "loaded" ? style("loaded", "green") : style("refused", "red"),
            p.drivers.join(", "),
            p.commands.join(", "),
          ]),
        );
        for (const plugin of plugins.filter((p) => p.refusal !== null))
          process.stdout.write(`\n${plugin.refusal!.message}\n`);
        for (const plugin of plugins.filter((p) => p.warning !== null))
          process.stdout.write(`\n${style("warning:", "yellow")} plugin "${plugin.name}": ${plugin.warning}\n`);
      });
    });
}
