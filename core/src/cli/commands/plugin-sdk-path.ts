import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { SDK_TARBALLS_DIR } from "../../util/package-paths.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { CliError, EXIT, printJson } from "../output.js";

/** One tarball of the folder, as the build's index.json lists it. */
interface SdkTarball {
  readonly name: string;
  readonly version: string;
  readonly file: string;
  readonly integrity: string;
}

/** The tarballs present in the folder (a published core ships all but its own). */
export function readSdkTarballs(dir: string = SDK_TARBALLS_DIR): SdkTarball[] {
  const index = join(dir, "index.json");
  if (!existsSync(index)) {
    throw new CliError(
      `This Switchyard was built without its sdk tarballs (${index} is missing). Run \`npm run build\` in ${dirname(dirname(dirname(dir)))}, then run the command again.`,
      EXIT.failed,
    );
  }
  const { packages } = JSON.parse(readFileSync(index, "utf8")) as { packages: SdkTarball[] };
  return packages.filter((entry) => existsSync(join(dir, entry.file)));
}

/**
 * `switchyard plugin sdk-path`: where this Switchyard keeps @switchyard/spec, sdk and testkit as
 * npm tarballs, so a plugin author outside the checkout installs exactly the versions it runs.
 */
export function registerPluginSdkPath(plugin: Command): void {
  plugin
    .command("sdk-path")
    .description(
      "Print the folder with this Switchyard's @switchyard/spec, sdk and testkit tarballs (npm install <folder>/<tarball>)",
    )
    .option("--json", "print the folder, each tarball (name, version, path, integrity) and an npm install command")
    .action((options: { json?: boolean }) => {
      const tarballs = readSdkTarballs();
      if (!options.json) {
        process.stdout.write(`${SDK_TARBALLS_DIR}\n`);
        return;
      }
      const path = (file: string) => join(SDK_TARBALLS_DIR, file);
      const byName = new Map(tarballs.map((entry) => [entry.name, entry]));
      // The testkit runs your plugin in a real host: @switchyard/core of the same version.
      const core = byName.get("@switchyard/core");
      const install = [
        ...["@switchyard/spec", "@switchyard/sdk"].flatMap((name) =>
          byName.has(name) ? [path(byName.get(name)!.file)] : [],
        ),
      ];
      const installDev = [
        ...(byName.has("@switchyard/testkit") ? [path(byName.get("@switchyard/testkit")!.file)] : []),
        core !== undefined ? path(core.file) : `@switchyard/core@${HOST_VERSION}`,
      ];
      printJson({
        dir: SDK_TARBALLS_DIR,
        hostVersion: HOST_VERSION,
        packages: tarballs.map((entry) => ({
          name: entry.name,
          version: entry.version,
          path: path(entry.file),
          integrity: entry.integrity,
        })),
        install: `npm install ${install.join(" ")}`,
        installDev: `npm install --save-dev ${installDev.join(" ")}`,
      });
    });
}
