// The footprint of installing Switchyard as a user does: every workspace packed, then
// `npm install -g @switchyard/cli` into an empty prefix (the @switchyard packages from a
// loopback registry serving the tarballs, every other package from this checkout's npm cache
// through the same loopback registry).
// Measures the installed size, the package count and the install time; the goal is under
// 60 MB with no harness and no native module but better-sqlite3's. A second install into
// another empty prefix shows the time with npm's cache warm (what a reinstall costs).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  folderBytes,
  installCli,
  installedPackages,
  nativeModules,
  packWorkspaces,
  startLocalRegistry,
} from "../cli/scripts/user-install.mjs";

const MB = 1024 * 1024;

export default async function run() {
  const work = mkdtempSync(join(tmpdir(), "switchyard-bench-install-"));
  try {
    const packed = await packWorkspaces(join(work, "tarballs"));
    const registry = await startLocalRegistry(packed);
    const times = [];
    let prefix;
    try {
      for (const name of ["first", "second"]) {
        prefix = join(work, name);
        mkdirSync(prefix);
        times.push((await installCli({ prefix, registry, env: process.env })).seconds);
      }
    } finally {
      await registry.close();
    }
    const packages = installedPackages(join(prefix, "lib", "node_modules"));
    const natives = nativeModules(prefix);
    const tarballBytes = packed.reduce((sum, pkg) => sum + pkg.size, 0);
    return {
      name: "install footprint (npm install -g @switchyard/cli from packed tarballs)",
      rows: [
        { metric: "installed size", value: folderBytes(prefix) / MB, unit: "MiB", note: "goal < 60 MB, no harness" },
        { metric: "packages installed", value: packages.length, unit: "" },
        {
          metric: "native modules",
          value: natives.length,
          unit: "",
          note: natives.map((file) => file.slice(prefix.length)).join(", "),
        },
        { metric: "install time", value: times[0], unit: "s", note: "npm cache as this machine has it" },
        { metric: "install time, again", value: times[1], unit: "s", note: "npm cache warm" },
        { metric: "@switchyard tarballs", value: tarballBytes / MB, unit: "MiB", note: `${packed.length} packages` },
      ],
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
