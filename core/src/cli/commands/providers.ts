import type { Command } from "commander";
import { harnessCatalogNote, modelSources } from "../model-sources.js";
import { withProviders } from "../open-host.js";
import { printJson, printTable, style } from "../output.js";

export function registerProviders(program: Command): void {
  program
    .command("providers")
    .description(
      "List configured provider instances: driver, availability, and why not (only looks: no harness session, no writes, no network)",
    )
    .addHelpText(
      "after",
      "\nWithout --full it finds each harness, runs its version command with a throwaway home, and reads its config and login files;\nit writes nothing into a harness's home or the Switchyard database and uses no network (plugins read only what they cached, such as a registry index).\nA note (--json: modelSources) says which models are a harness's own catalog, listed whatever endpoint it is pointed at (docs/models.md).\n",
    )
    .option("--home <dir>", "Switchyard home")
    .option(
      "--full",
      "also start each harness briefly, as the server does, to list its models and check its login (Codex app-server, pi --list-models, an ACP initialize or disposable session/new); harnesses may write into their homes and use the network",
    )
    .option("--json", "print JSON")
    .action(async (options: { home?: string; full?: boolean; json?: boolean }) => {
      await withProviders(options, async (providers, paths) => {
        const all = await providers.probeAll(options.full ? "full" : "inspect");
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
              authenticated: a.status?.authenticated ?? null,
              harness: a.status?.harness ?? null,
              warnings: a.status?.warnings ?? [],
              depth: a.depth,
              models: a.models.map((m) => m.id),
              // Where each model comes from (a harness's own catalog is not the endpoint's).
              modelSources: modelSources(a),
            })),
          );
          return;
        }
        if (all.length === 0) {
          process.stdout.write(
            `No provider instances are configured. Add them to ${paths.configFile} ("providers": [...]).\n`,
          );
          return;
        }
        printTable(
          ["ID", "DRIVER", "AVAILABLE", "MODELS", "WHY NOT"],
          all.map((a) => [
            a.instanceId,
            a.driver,
            a.available ? style("yes", "green") : style("no", "red"),
            String(a.models.length),
            a.reason ?? "",
          ]),
        );
        // Usable, but worth knowing: a harness version outside the range its plugin was tested with.
        for (const a of all)
          for (const warning of a.status?.warnings ?? [])
            process.stdout.write(`${style("warning:", "yellow")} ${a.instanceId}: ${warning}\n`);
        for (const a of all) {
          const note = harnessCatalogNote(a);
          if (note !== null) process.stdout.write(`${style("note:", "dim")} ${note}\n`);
        }
      });
    });
}
