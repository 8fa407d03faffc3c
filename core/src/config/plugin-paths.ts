import { makePrivateDir } from "../util/private-files.js";
import { join } from "node:path";
import type { PluginPaths } from "../spec/index.js";
import type { SwitchyardPaths } from "./paths.js";

/**
 * A plugin's own folders in the home (`cache/plugins/<name>`, `data/plugins/<name>`), created
 * when the plugin first reads them, so loading plugins creates nothing.
 */
export function pluginPathsFor(paths: SwitchyardPaths, pluginName: string): PluginPaths {
  const safe = pluginName.replace(/[^a-zA-Z0-9._-]+/g, "_");
  const onDemand = (dir: string) => () => makePrivateDir(dir);
  return Object.defineProperties(
    { home: paths.home },
    {
      cacheDir: { get: onDemand(join(paths.cacheDir, "plugins", safe)), enumerable: true },
      dataDir: { get: onDemand(join(paths.dataDir, "plugins", safe)), enumerable: true },
    },
  ) as PluginPaths;
}
