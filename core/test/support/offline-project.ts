import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as tar from "tar";

// A project outside the checkout that installs Switchyard's own tarballs (spec, sdk, testkit,
// core) with `npm install --offline`. npm's cache on this machine holds every dependency's
// tarball (npm ci put them there) but no registry metadata, and npm needs metadata to resolve
// a version range when there is no lockfile. So the project gets a lockfile: the tarballs as
// `file:` dependencies, and every package they need at run time, at the version and integrity
// the checkout's own package-lock.json pins. Nothing else is invented; npm still checks each
// tarball against its integrity.

const REPO_LOCK = fileURLToPath(new URL("../../../package-lock.json", import.meta.url));

interface LockEntry {
  readonly version?: string;
  readonly link?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly [field: string]: unknown;
}

/** The package.json fields of a tarball, read without unpacking it. */
export async function tarballPackageJson(file: string): Promise<LockEntry & { name: string; version: string }> {
  let text = "";
  await tar.t({
    file,
    filter: (path) => path === "package/package.json",
    onReadEntry: (entry) => entry.on("data", (chunk: Buffer) => void (text += chunk.toString("utf8"))),
  });
  return JSON.parse(text) as LockEntry & { name: string; version: string };
}

/** What a package needs installed next to it: dependencies, optional ones, required peers. */
function runtimeDependencies(entry: LockEntry): string[] {
  const optionalPeers = entry.peerDependenciesMeta ?? {};
  return [
    ...Object.keys(entry.dependencies ?? {}),
    ...Object.keys(entry.optionalDependencies ?? {}),
    ...Object.keys(entry.peerDependencies ?? {}).filter((name) => optionalPeers[name]?.optional !== true),
  ];
}

/** Where node would find `name` from a package at `location`, in the checkout's lockfile. */
function resolveIn(lock: Record<string, LockEntry>, location: string, name: string): string | null {
  let base = location;
  for (;;) {
    const candidate = base === "" ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    const entry = lock[candidate];
    if (entry !== undefined && entry.link !== true) return candidate;
    if (base === "") return null;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut === -1 ? "" : base.slice(0, cut);
  }
}

/**
 * Writes package.json and package-lock.json for a project in `dir` that depends on the given
 * tarballs (`devDependencies` too), ready for `npm install --offline`.
 */
export async function writeOfflineProject(dir: string, tarballs: { dependencies: readonly string[]; devDependencies: readonly string[] }): Promise<void> {
  const lock = (JSON.parse(readFileSync(REPO_LOCK, "utf8")) as { packages: Record<string, LockEntry> }).packages;
  const own = new Map<string, { file: string; manifest: LockEntry & { name: string; version: string }; dev: boolean }>();
  for (const [files, dev] of [[tarballs.dependencies, false], [tarballs.devDependencies, true]] as const) {
    for (const file of files) {
      const manifest = await tarballPackageJson(file);
      own.set(manifest.name, { file, manifest, dev });
    }
  }
  const packages: Record<string, unknown> = {};
  const queue: [string, string][] = [];
  for (const [name, { file, manifest }] of own) {
    const { dependencies, peerDependencies, peerDependenciesMeta, engines, bin, license } = manifest;
    packages[`node_modules/${name}`] = { version: manifest.version, resolved: `file:${file}`, license, dependencies, peerDependencies, peerDependenciesMeta, engines, bin };
    for (const dependency of runtimeDependencies(manifest)) if (!own.has(dependency)) queue.push(["", dependency]);
  }
  while (queue.length > 0) {
    const [from, name] = queue.pop()!;
    const location = resolveIn(lock, from, name);
    if (location === null) throw new Error(`the checkout's package-lock.json has no ${name} (needed by ${from || "the project"})`);
    if (location in packages) continue;
    // Flags describe the checkout's tree, not this one; npm works them out again.
    const { dev: _dev, devOptional: _devOptional, peer: _peer, optional: _optional, ...entry } = lock[location]!;
    packages[location] = entry;
    for (const dependency of runtimeDependencies(entry)) queue.push([location, dependency]);
  }
  const specs = (dev: boolean) => Object.fromEntries([...own].filter(([, value]) => value.dev === dev).map(([name, { file }]) => [name, `file:${file}`]));
  const root = { name: "acme-plugin", version: "1.0.0", dependencies: specs(false), devDependencies: specs(true) };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ ...root, private: true, type: "module" }, null, 2)}\n`);
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify({ name: root.name, version: root.version, lockfileVersion: 3, requires: true, packages: { "": root, ...sorted } }, null, 2)}\n`);
}
