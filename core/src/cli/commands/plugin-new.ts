import { realpathSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import {
  DEFAULT_PLUGIN_TEMPLATE,
  PLUGIN_TEMPLATE_NAMES,
  SDK_PACKAGE_NAMES,
  scaffoldPlugin,
  type PluginTemplateName,
  type SdkPackageSpecs,
} from "../../plugin-host/plugin-scaffold.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { SDK_TARBALLS_DIR } from "../../util/package-paths.js";
import { CliError, EXIT } from "../output.js";
import { readSdkTarballs } from "./plugin-sdk-path.js";

/** Where a new plugin's `npm install` gets the Switchyard packages. */
type SdkSource = "tarballs" | "npm";

/**
 * The npm spec of each Switchyard package for a new plugin. From `tarballs`, this Switchyard's
 * own (`switchyard plugin sdk-path`), as absolute `file:` paths, so the install works from any
 * folder; a package without a tarball (core, in a Switchyard installed from npm) and every
 * package from `npm` are named by the host's exact version.
 */
function sdkPackageSpecs(source: SdkSource): SdkPackageSpecs {
  const tarballs = source === "tarballs" ? readSdkTarballs() : [];
  const spec = (name: string) => {
    const tarball = tarballs.find((entry) => entry.name === name);
    return tarball !== undefined ? `file:${join(SDK_TARBALLS_DIR, tarball.file)}` : HOST_VERSION;
  };
  return Object.fromEntries(SDK_PACKAGE_NAMES.map((name) => [name, spec(name)])) as SdkPackageSpecs;
}

/** `switchyard plugin new <id>`: a plugin package that builds and tests outside this repository. */
export function registerPluginNew(plugin: Command): void {
  plugin
    .command("new <id>")
    .description(
      "Scaffold a provider plugin from a template (same layout as the built-in plugins), ready to npm install, build and test anywhere",
    )
    .option("--template <name>", `the plugin's shape: ${PLUGIN_TEMPLATE_NAMES.join(" or ")}`, DEFAULT_PLUGIN_TEMPLATE)
    .option("--dir <dir>", "parent folder for the new plugin (default: the current folder)")
    .option("--name <package>", "npm package name (default: switchyard-plugin-<id>)")
    .option(
      "--sdk-source <source>",
      "where npm install gets @switchyard/*: this Switchyard's tarballs, or npm (once published)",
      "tarballs",
    )
    .action(async (id: string, options: { template: string; dir?: string; name?: string; sdkSource: string }) => {
      if (options.sdkSource !== "tarballs" && options.sdkSource !== "npm") {
        throw new CliError(`--sdk-source is "tarballs" or "npm", not "${options.sdkSource}".`, EXIT.usage);
      }
      const created = scaffoldPlugin({
        id,
        parentDir: options.dir ?? process.cwd(),
        template: options.template as PluginTemplateName,
        sdkPackages: sdkPackageSpecs(options.sdkSource),
        hostVersion: HOST_VERSION,
        ...(options.name ? { packageName: options.name } : {}),
      });
      const from =
        options.sdkSource === "tarballs"
          ? `this Switchyard's tarballs in ${SDK_TARBALLS_DIR}`
          : `npm, version ${HOST_VERSION}`;
      process.stdout.write(
        [
          `Created ${created.packageName} in ${created.dir} (template ${created.template})`,
          "Next:",
          `  cd ${created.dir}`,
          `  npm install       # @switchyard/spec, sdk, testkit and core from ${from}`,
          "  npm run build     # tsc, to dist/ (the manifest's entry)",
          "  npm test          # the conformance suite and the adapter tests",
          // The full path of the command running now (the @switchyard/cli launcher, or a
          // checkout's core/dist/cli/main.js) works from any folder; a bare `npx switchyard`
          // would fetch an unrelated npm package.
          `  node ${realpathSync(process.argv[1]!)} plugin install ${created.dir}`,
        ].join("\n") + "\n",
      );
    });
}
