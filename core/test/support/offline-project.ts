import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as tar from "tar";

// A project outside the checkout that installs Switchyard's own tarballs (spec, sdk, testkit,
// core), and packages the checkout uses too, with `npm install --offline`. npm's cache on this
// machine holds every dependency's tarball (npm ci put them there) but no registry metadata,
// and npm needs metadata to resolve a version range when there is no lockfile. So the project
// gets a lockfile: the tarballs as `file:` dependencies, and every package they need at run
// time, at the version and integrity the checkout's own package-lock.json pins. Nothing else is
// invented; npm still checks each tarball against its integrity.

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

/** The fields of a project's package.json that its lockfile's root entry repeats. */
interface ProjectManifest {
  readonly name: string;
  readonly version: string;
  readonly license?: string;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly bundleDependencies?: readonly string[];
  readonly engines?: Record<string, string>;
}

/**
 * Writes package-lock.json for the project in `dir`, as its package.json stands, ready for
 * `npm install --offline`: a `file:` tarball dependency as it is, every other dependency at the
 * exact version it pins, which must be the one the checkout's lockfile has (that is what npm's
 * cache holds), and everything they need at run time from the checkout's lockfile.
 */
export async function writeOfflineLockfile(dir: string): Promise<void> {
  const lock = (JSON.parse(readFileSync(REPO_LOCK, "utf8")) as { packages: Record<string, LockEntry> }).packages;
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as ProjectManifest;
  const own = new Map<string, { file: string; manifest: LockEntry & { name: string; version: string } }>();
  const queue: [string, string][] = [];
  for (const [name, spec] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
    if (spec.startsWith("file:") && spec.endsWith(".tgz")) {
      const file = spec.slice("file:".length);
      const packed = await tarballPackageJson(file);
      if (packed.name !== name) throw new Error(`${file} holds ${packed.name}, not ${name}`);
      own.set(name, { file, manifest: packed });
      continue;
    }
    const pinned = lock[`node_modules/${name}`]?.version;
    if (pinned !== spec)
      throw new Error(
        `${dir}/package.json wants ${name}@${spec}, but the checkout's package-lock.json has ${pinned ?? "none"}: npm's cache has only that one`,
      );
    queue.push(["", name]);
  }
  const packages: Record<string, unknown> = {};
  for (const [name, { file, manifest: packed }] of own) {
    const { dependencies, peerDependencies, peerDependenciesMeta, engines, bin, license } = packed;
    packages[`node_modules/${name}`] = {
      version: packed.version,
      resolved: `file:${file}`,
      license,
      dependencies,
      peerDependencies,
      peerDependenciesMeta,
      engines,
      bin,
    };
    for (const dependency of runtimeDependencies(packed)) if (!own.has(dependency)) queue.push(["", dependency]);
  }
  while (queue.length > 0) {
    const [from, name] = queue.pop()!;
    const location = resolveIn(lock, from, name);
    if (location === null)
      throw new Error(`the checkout's package-lock.json has no ${name} (needed by ${from || "the project"})`);
    if (location in packages) continue;
    // Flags describe the checkout's tree, not this one; npm works them out again.
    const { dev: _dev, devOptional: _devOptional, peer: _peer, optional: _optional, ...entry } = lock[location]!;
    packages[location] = entry;
    for (const dependency of runtimeDependencies(entry)) queue.push([location, dependency]);
  }
  const { name, version, license, dependencies, devDependencies, peerDependencies, bundleDependencies, engines } =
    manifest;
  const root = { name, version, license, dependencies, devDependencies, peerDependencies, bundleDependencies, engines };
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(
    join(dir, "package-lock.json"),
    `${JSON.stringify({ name, version, lockfileVersion: 3, requires: true, packages: { "": root, ...sorted } }, null, 2)}\n`,
  );
}

/**
 * Writes package.json and package-lock.json for a project in `dir` that depends on the given
 * tarballs (`devDependencies` too), ready for `npm install --offline`.
 */
export async function writeOfflineProject(
  dir: string,
  tarballs: { dependencies: readonly string[]; devDependencies: readonly string[] },
): Promise<void> {
  const specs = async (files: readonly string[]) =>
    Object.fromEntries(
      await Promise.all(files.map(async (file) => [(await tarballPackageJson(file)).name, `file:${file}`] as const)),
    );
  const manifest = {
    name: "acme-plugin",
    version: "1.0.0",
    private: true,
    type: "module",
    dependencies: await specs(tarballs.dependencies),
    devDependencies: await specs(tarballs.devDependencies),
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeOfflineLockfile(dir);
}
