import { SPECIFICATION_VERSION, type CommandGroup, type PluginDefinition, type ProviderDriver } from "@switchyard/spec";

/** Declares a driver; fills in the spec literal so authors cannot get it wrong. */
export function defineDriver<TOptions>(
  driver: Omit<ProviderDriver<TOptions>, "specificationVersion">,
): ProviderDriver<TOptions> {
  return { specificationVersion: SPECIFICATION_VERSION, ...driver };
}

/**
 * Declares a command group a plugin adds to `switchyard` (`switchyard <name> <command> …`).
 * List its name in the manifest's `commands` too, so the CLI shows it without loading the plugin.
 */
export function defineCommandGroup(group: CommandGroup): CommandGroup {
  return group;
}

/** Declares a plugin: the value its entry module exports as `default`. */
export function definePlugin(plugin: { readonly drivers?: readonly ProviderDriver<any>[]; readonly commands?: readonly CommandGroup[] }): PluginDefinition {
  return {
    specificationVersion: SPECIFICATION_VERSION,
    drivers: plugin.drivers ?? [],
    ...(plugin.commands !== undefined ? { commands: plugin.commands } : {}),
  };
}
