import type { PluginDefinition } from "@switchyard/sdk";

/**
 * A driver's options validated by the plugin's own schema, as the plugin host validates an
 * instance's config before `create`: a test builds its adapter from what the host would pass.
 * Throws when the plugin has no such driver (or it takes no options) and when the schema
 * refuses `raw` (with the schema's issues).
 */
export async function validateDriverOptions<TOptions>(
  plugin: PluginDefinition,
  driverKind: string,
  raw: Record<string, unknown> = {},
): Promise<TOptions> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === driverKind);
  if (driver?.optionsSchema === undefined) throw new Error(`the plugin has no ${driverKind} driver with options`);
  const result = await driver.optionsSchema["~standard"].validate(raw);
  if (result.issues) throw new Error(JSON.stringify(result.issues));
  return result.value as TOptions;
}
