import { SPECIFICATION_VERSION, type PluginDefinition, type ProviderDriver } from "@switchyard/spec";

/** Declares a driver; fills in the spec literal so authors cannot get it wrong. */
export function defineDriver<TOptions>(
  driver: Omit<ProviderDriver<TOptions>, "specificationVersion">,
): ProviderDriver<TOptions> {
  return { specificationVersion: SPECIFICATION_VERSION, ...driver };
}

/** Declares a plugin: the value its entry module exports as `default`. */
export function definePlugin(plugin: { readonly drivers: readonly ProviderDriver<any>[] }): PluginDefinition {
  return { specificationVersion: SPECIFICATION_VERSION, drivers: plugin.drivers };
}
