import { makePrivateDir } from "../../util/private-files.js";
import { dirname, join } from "node:path";
import { Command, Option } from "commander";
import { loadConfig } from "../../config/config-loader.js";
import { pathsFor, resolveHome, type SwitchyardPaths } from "../../config/paths.js";
import { defaultBuiltinPlugins } from "../../plugin-host/builtin-plugins.js";
import { createLogger, createSilentLogger } from "../../logging/logger.js";
import { PluginHost, type PluginRecord } from "../../plugin-host/plugin-host.js";
import {
  SPEC_SEMVER,
  type CommandContext,
  type CommandGroup,
  type CommandInvocation,
  type CommandOutput,
  type CommandV1,
} from "../../spec/index.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { colorEnabled, printJson, printTable, style } from "../output.js";

/**
 * Command groups plugins contribute (`switchyard registry …`). At start the CLI reads only
 * manifests to list them; running one imports the one plugin that declares it, turns its
 * declarative commands into commander commands and parses the rest of the command line with
 * them. A plugin never sees commander: the spec describes commands, the host parses.
 */

/** The `--home` given anywhere on the command line (contributed commands take it too). */
function homeFromArgv(argv: readonly string[]): string | undefined {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--home") return argv[index + 1];
    if (arg.startsWith("--home=")) return arg.slice("--home=".length);
  }
  return undefined;
}

function cliLogger() {
  return process.env.SWITCHYARD_LOG_LEVEL
    ? createLogger({ color: colorEnabled(process.stderr) })
    : createSilentLogger();
}

/** A plugin host over the same places the server looks (config entries, managed, built-in). */
function pluginHostFor(paths: SwitchyardPaths): PluginHost {
  let configEntries: readonly string[] = [];
  try {
    configEntries = loadConfig(paths.configFile).plugins;
  } catch {
    // A broken config hides only the plugins it lists; the command that needs the config says why.
  }
  return new PluginHost(
    {
      ...defaultBuiltinPlugins(),
      managedDir: paths.pluginsDir,
      configEntries,
      configBaseDir: dirname(paths.configFile),
    },
    cliLogger(),
  );
}

function output(): CommandOutput {
  return {
    write: (text) => void process.stdout.write(text),
    json: (value) => printJson(value),
    table: (headers, rows) => printTable(headers, rows),
    warn: (message) => void process.stderr.write(`${style("warning:", "yellow", process.stderr)} ${message}\n`),
    error: (message) => void process.stderr.write(`${style("error:", "red", process.stderr)} ${message}\n`),
    style: (text, name) => style(text, name),
    stderr: { write: (text: string) => process.stderr.write(text), isTTY: process.stderr.isTTY === true },
  };
}

/** The context one run of a contributed command gets. */
function commandContext(
  plugin: PluginRecord,
  group: string,
  command: string,
  home: string | undefined,
): CommandContext {
  const paths = pathsFor(resolveHome(home));
  const safe = plugin.name.replace(/[^a-zA-Z0-9._-]+/g, "_");
  const onDemand = (dir: string) => () => makePrivateDir(dir);
  const pluginPaths = Object.defineProperties(
    { home: paths.home, configFile: paths.configFile },
    {
      cacheDir: { get: onDemand(join(paths.cacheDir, "plugins", safe)), enumerable: true },
      dataDir: { get: onDemand(join(paths.dataDir, "plugins", safe)), enumerable: true },
    },
  ) as CommandContext["paths"];
  return {
    specVersion: SPEC_SEMVER,
    hostVersion: HOST_VERSION,
    paths: pluginPaths,
    logger: cliLogger().child({ plugin: plugin.name, command: `${group} ${command}` }),
    instances: () =>
      loadConfig(paths.configFile)
        .providers.filter((provider) => plugin.drivers.includes(provider.driver))
        .map((provider) => ({
          id: provider.id,
          driver: provider.driver,
          enabled: provider.enabled,
          options: provider.options,
        })),
    output: output(),
  };
}

/** One declared command as a commander command that runs it. */
function toCommander(definition: CommandV1, group: string, plugin: PluginRecord): Command {
  const command = new Command(definition.name).description(definition.description).exitOverride();
  for (const arg of definition.arguments ?? []) {
    const required = arg.required !== false;
    const name = `${arg.name}${arg.variadic ? "..." : ""}`;
    command.argument(required ? `<${name}>` : `[${name}]`, arg.description ?? "");
  }
  const options = (definition.options ?? []).map((declared) => {
    const option = new Option(
      `--${declared.name}${declared.valueName ? ` <${declared.valueName}>` : ""}`,
      declared.description,
    );
    command.addOption(option);
    return { name: declared.name, key: option.attributeName() };
  });
  command.option("--home <dir>", "Switchyard home");
  command.action(async (...received: unknown[]) => {
    const self = received[received.length - 1] as Command;
    const parsed = self.opts<Record<string, string | boolean | undefined>>();
    const args: Record<string, string | readonly string[] | undefined> = {};
    (definition.arguments ?? []).forEach((arg, index) => {
      args[arg.name] = self.processedArgs[index] as string | string[] | undefined;
    });
    const invocation: CommandInvocation = {
      args,
      options: Object.fromEntries(options.map(({ name, key }) => [name, parsed[key]])),
    };
    const exitCode = await definition.run(
      invocation,
      commandContext(plugin, group, definition.name, parsed.home as string | undefined),
    );
    if (typeof exitCode === "number" && exitCode !== 0) process.exitCode = exitCode;
  });
  return command;
}

/**
 * A whole group under a `switchyard` root of its own, ready to parse `[group, ...words]`: the
 * root only makes help and usage read `switchyard <group> <command>`.
 */
function groupProgram(group: CommandGroup, plugin: PluginRecord): Command {
  const command = new Command(group.name)
    .description(group.description)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  for (const definition of group.commands) command.addCommand(toCommander(definition, group.name, plugin));
  return new Command("switchyard").exitOverride().addCommand(command);
}

/**
 * Lists every contributed command group on `program` (from manifests only). `program` must
 * already have its own commands: a contribution whose name one of them has is skipped (the
 * plugin host refuses a manifest that names a host command, so this only guards new ones).
 */
export function registerContributedCommands(program: Command, argv: readonly string[]): void {
  let host: PluginHost;
  try {
    host = pluginHostFor(pathsFor(resolveHome(homeFromArgv(argv))));
  } catch {
    // A home that is not a folder: the command that opens it says so.
    return;
  }
  const taken = new Set(program.commands.flatMap((command) => [command.name(), ...command.aliases()]));
  for (const contribution of host.commandContributions()) {
    if (taken.has(contribution.name)) continue;
    taken.add(contribution.name);
    program
      .command(contribution.name)
      .description(
        contribution.description ??
          `commands from plugin ${contribution.plugin.name} (run \`switchyard ${contribution.name} --help\`)`,
      )
      .helpOption(false)
      .allowUnknownOption(true)
      .allowExcessArguments(true)
      .action(async (_options: unknown, placeholder: Command) => {
        const loaded = await host.loadCommandGroup(contribution.name);
        // Every word after the group's name, in order (this placeholder knows no options, so
        // commander leaves them all to it): the group's own parser reads them.
        await groupProgram(loaded.group, loaded.plugin).parseAsync([contribution.name, ...placeholder.args], {
          from: "user",
        });
      });
  }
}
