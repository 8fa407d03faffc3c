#!/usr/bin/env node
// The `switchyard` command. It runs @switchyard/core's command line with the built-in plugins
// this package depends on (every @switchyard/plugin-* in its dependencies), wherever npm put
// them. Harnesses (Codex, Pi, Claude Code…) are not among its dependencies: each plugin finds
// the one the user installed. npm links bins when it installs, before anything is built, and
// links none whose file is missing; in a checkout the CLI is compiled to core/dist, so this
// small committed file says how to build it when it is not built yet.
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

// Before anything else loads: an older Node fails later in ways that do not say why (a syntax or
// module error, or better-sqlite3 built for another ABI). The range is package.json's `engines`
// (">=22.19"); npm only warns about it at install time.
const wanted = /^>=(\d+)\.(\d+)/.exec(manifest.engines?.node ?? "");
const [major, minor] = process.versions.node.split(".").map(Number);
if (wanted !== null && (major < Number(wanted[1]) || (major === Number(wanted[1]) && minor < Number(wanted[2])))) {
  process.stderr.write(
    `error: Switchyard needs Node.js ${manifest.engines.node} (an LTS: 22 or 24); this is ${process.version} (${process.execPath}).\n` +
      `Install a newer Node.js (https://nodejs.org) and run it again; in a clone, \`npx switchyard …\` runs the clone's pinned Node.\n`,
  );
  process.exit(2);
}

/** The folder of a package this one depends on, as Node would resolve it from here. */
function packageDir(name) {
  return dirname(require.resolve(`${name}/package.json`));
}

const coreDir = packageDir("@switchyard/core");
const entry = join(coreDir, "dist", "cli", "run-cli.js");
if (!existsSync(entry)) {
  // Only a checkout is ever unbuilt: core is the workspace folder core/ beside this package.
  const checkout = dirname(realpathSync(coreDir));
  process.stderr.write(
    `error: Switchyard is not built yet (${join(realpathSync(coreDir), "dist", "cli", "run-cli.js")} is missing).\n` +
      `Run \`npm run build\` in ${checkout}, then run the command again.\n`,
  );
  process.exit(2);
}

const builtinPlugins = Object.keys(manifest.dependencies ?? {})
  .filter((name) => name.startsWith("@switchyard/plugin-"))
  .sort()
  .map(packageDir);

const { runCli } = await import(pathToFileURL(entry).href);
await runCli({ builtinPlugins });
