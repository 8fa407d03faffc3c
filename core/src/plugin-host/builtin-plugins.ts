import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Which plugins are built in. Installed from npm, Switchyard is the `@switchyard/cli` package:
 * its launcher names the plugin packages it depends on before any command runs
 * ({@link useBuiltinPlugins}), since only the launcher knows what it was installed with. Run
 * without one (a checkout's `core/dist/cli/main.js`, tests, a host embedded in another
 * program), the built-ins are the checkout's `plugins/` folders, when there is a checkout.
 * Either way they load through the same path as every other plugin.
 */

/** Where built-in plugins are: a folder of plugin folders, and plugin package folders. */
export interface BuiltinPlugins {
  /** A folder whose subfolders are plugins (a checkout's `plugins/`), or null. */
  readonly builtinDir: string | null;
  /** Plugin package folders (the launcher's dependencies). */
  readonly builtinPackageDirs: readonly string[];
}

let launched: readonly string[] | null = null;

/**
 * Names the built-in plugin packages of this process (the `@switchyard/cli` launcher does,
 * once, before running a command). A process that never calls it uses a checkout's `plugins/`.
 */
export function useBuiltinPlugins(packageDirs: readonly string[]): void {
  launched = [...packageDirs];
}

/** The repository's `plugins/` folder, when this core runs from a checkout. */
export function checkoutPluginsDir(): string | null {
  // core/{src,dist}/plugin-host → the repository root (for an installed core, node_modules/@switchyard, which has no plugins/).
  const candidate = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "plugins");
  return existsSync(candidate) ? candidate : null;
}

/** The built-in plugins of this process: the launcher's packages, else a checkout's `plugins/`. */
export function defaultBuiltinPlugins(): BuiltinPlugins {
  return launched !== null
    ? { builtinDir: null, builtinPackageDirs: launched }
    : { builtinDir: checkoutPluginsDir(), builtinPackageDirs: [] };
}
