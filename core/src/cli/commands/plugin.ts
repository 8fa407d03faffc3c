import type { Command } from "commander";
import { loadConfig } from "../../config/config-loader.js";
import { requireUsableHome } from "../../config/home-access.js";
import { pathsFor, resolveHome } from "../../config/paths.js";
import { createSilentLogger } from "../../logging/logger.js";
import { PluginInstaller } from "../../plugin-host/plugin-installer.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson } from "../output.js";
import { registerPluginNew } from "./plugin-new.js";
import { registerPluginSdkPath } from "./plugin-sdk-path.js";
import { registerPluginList } from "./plugins.js";

export function registerPluginCommands(program: Command): void {
  const plugin = program
    .command("plugin")
    .alias("plugins")
    .description("Manage provider plugins: list, scaffold, install, remove, sdk-path");
  registerPluginList(plugin);
  registerPluginNew(plugin);
  registerPluginSdkPath(plugin);

  plugin
    .command("install <spec>")
    .description(
      "Install a plugin from an npm spec, a tarball (.tgz) or a folder into $SWITCHYARD_HOME/plugins. npm runs no scripts (not even a folder's prepack); once the package's switchyard manifest passed, only the install scripts its switchyard.installScripts names (itself or its dependencies) run",
    )
    .option("--integrity <sri>", "expected SRI hash of a tarball or packed folder (sha512-…)")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (spec: string, options: { integrity?: string; home?: string; json?: boolean }) => {
      const paths = pathsFor(resolveHome(options.home));
      requireUsableHome(paths.home);
      const installed = await new PluginInstaller(paths.pluginsDir, createSilentLogger()).install(
        spec,
        options.integrity !== undefined ? { integrity: options.integrity } : {},
      );
      if (options.json) printJson(installed);
      else {
        process.stdout.write(
          `Installed ${installed.name}${installed.version ? `@${installed.version}` : ""} (drivers: ${installed.drivers.join(", ")})${installed.integrity ? `\nintegrity ${installed.integrity}` : ""}\n`,
        );
        process.stdout.write(
          installed.installScripts.length === 0
            ? "No install scripts ran (the manifest allows none).\n"
            : `Install scripts ran for: ${installed.installScripts.join(", ")} (the manifest's switchyard.installScripts)\n`,
        );
      }
    });

  plugin
    .command("remove <name>")
    .description("Remove an installed plugin (refused while a configured provider uses one of its drivers)")
    .option("--home <dir>", "Switchyard home")
    .action(async (name: string, options: { home?: string }) => {
      const paths = pathsFor(resolveHome(options.home));
      const config = loadConfig(paths.configFile);
      await withHost(options, async (host) => {
        const record = host.pluginHost.list().find((p) => p.name === name);
        const users = config.providers.filter((p) => record?.drivers.includes(p.driver));
        if (users.length > 0) {
          throw new CliError(
            `Plugin ${name} is used by provider instance(s) ${users.map((u) => u.id).join(", ")}; remove them from ${paths.configFile} first.`,
            EXIT.usage,
          );
        }
      });
      await new PluginInstaller(paths.pluginsDir, createSilentLogger()).remove(name);
      process.stdout.write(`Removed ${name}\n`);
    });
}
