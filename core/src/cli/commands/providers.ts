import type { Command } from "commander";
import { withHost } from "../open-host.js";
import { printJson, printTable, style } from "../output.js";

export function registerProviders(program: Command): void {
  program
    .command("providers")
    .description("List configured provider instances: driver, availability, and why not")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const all = await host.providers.availabilityAll({ refresh: true });
        if (options.json) {
          printJson(
            all.map((a) => ({
              id: a.instanceId,
              driver: a.driver,
              displayName: a.displayName,
              enabled: a.enabled,
              available: a.available,
              reason: a.reason,
              version: a.status?.version ?? null,
              models: a.models.map((m) => m.id),
            })),
          );
          return;
        }
        if (all.length === 0) {
          process.stdout.write(`No provider instances are configured. Add them to ${host.paths.configFile} ("providers": [...]).\n`);
          return;
        }
        printTable(
          ["ID", "DRIVER", "AVAILABLE", "MODELS", "WHY NOT"],
          all.map((a) => [a.instanceId, a.driver, a.available ? style("yes", "green") : style("no", "red"), String(a.models.length), a.reason ?? ""]),
        );
      });
    });
}
