import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { defaultBuiltinPluginsDir } from "../../host/composition-root.js";
import { SwitchyardError } from "../../spec/index.js";

/** The module of the Pi plugin that hands out its extension's source. */
interface PiPluginModule {
  extensionSource(): Promise<{ readonly text: string; readonly extension: string }>;
}

const PI_PLUGIN_PACKAGE = "@switchyard/plugin-pi";

/**
 * The Switchyard extension's code, from the Pi plugin installed with this Switchyard (a
 * built-in plugin), loaded at run time as core reaches every plugin.
 */
export async function findPiExtensionSource(): Promise<string> {
  const dir = defaultBuiltinPluginsDir();
  const candidates = dir !== null && existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
  for (const candidate of candidates) {
    const manifest = join(candidate, "package.json");
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, "utf8")) as {
      name?: string;
      main?: string;
      exports?: { ".": { default?: string } };
    };
    if (pkg.name !== PI_PLUGIN_PACKAGE) continue;
    const entry = join(candidate, pkg.exports?.["."]?.default ?? pkg.main ?? "dist/index.js");
    const plugin = (await import(pathToFileURL(entry).href)) as PiPluginModule;
    const source = await plugin.extensionSource();
    if (source.extension !== ".js") break;
    return source.text;
  }
  throw new SwitchyardError(
    "not_found",
    `The Pi plugin (${PI_PLUGIN_PACKAGE}, built) is not installed with this Switchyard, so its extension cannot be copied. Build it (npm run build) or reinstall Switchyard.`,
    {},
  );
}
