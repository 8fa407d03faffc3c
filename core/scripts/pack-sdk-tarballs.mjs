#!/usr/bin/env node
// Packs @switchyard/spec, sdk, testkit and core with `npm pack` into core/dist/sdk-tarballs,
// the folder `switchyard plugin sdk-path` prints: a plugin author outside the checkout installs
// exactly the packages this Switchyard was built from, with no registry involved. Runs after
// `tsc -b` in `npm run build`; a package whose files did not change since its tarball is skipped.
// The core tarball leaves itself out (its package.json `files`), so core ships the other three,
// and the plugin templates.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const destination = process.argv[2] ?? join(root, "core", "dist", "sdk-tarballs");
const indexFile = join(destination, "index.json");
/** Packed in this order: core last, so its tarball carries the other three. */
const PACKAGES = ["spec", "sdk", "testkit", "core"];

function walk(path, out) {
  if (!existsSync(path)) return;
  const stat = statSync(path);
  if (stat.isDirectory()) {
    for (const name of readdirSync(path).sort()) walk(join(path, name), out);
    return;
  }
  out.push([path, stat.size, Math.round(stat.mtimeMs)]);
}

/** Changes whenever a file npm would pack changes (path, size or mtime). */
function fingerprint(dir, pkg) {
  const files = [];
  for (const entry of ["package.json", "README.md", ...(pkg.files ?? [])]) {
    if (!entry.startsWith("!")) walk(join(dir, entry), files);
  }
  const hash = createHash("sha256");
  for (const [path, size, mtime] of files) {
    if (path === indexFile || (path.startsWith(destination) && path.endsWith(`${tarballName(pkg)}`))) continue;
    hash.update(`${relative(dir, path)}\0${size}\0${mtime}\n`);
  }
  return hash.digest("hex");
}

function tarballName(pkg) {
  return `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.version}.tgz`;
}

function readIndex() {
  try {
    return JSON.parse(readFileSync(indexFile, "utf8"));
  } catch {
    return { packages: [] };
  }
}

function writeIndex(entries) {
  writeFileSync(
    indexFile,
    `${JSON.stringify({ packages: entries.map(({ fingerprint: _f, ...entry }) => entry), fingerprints: Object.fromEntries(entries.map((e) => [e.name, e.fingerprint])) }, null, 2)}\n`,
  );
}

// Core also ships the plugin templates (dist/templates), so `switchyard plugin new` works in a
// Switchyard installed from npm. Copied with their timestamps: an unchanged template leaves the
// fingerprint, and so the core tarball, as it was.
const templates = join(root, "templates");
const shippedTemplates = join(root, "core", "dist", "templates");
rmSync(shippedTemplates, { recursive: true, force: true });
cpSync(templates, shippedTemplates, {
  recursive: true,
  preserveTimestamps: true,
  filter: (source) => !/(^|\/)(dist|node_modules)(\/|$)/.test(relative(templates, source)),
});

mkdirSync(destination, { recursive: true });
const previous = readIndex();
const entries = [];
for (const folder of PACKAGES) {
  const dir = join(root, folder);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = tarballName(pkg);
  const print = fingerprint(dir, pkg);
  const known = previous.packages.find((entry) => entry.name === pkg.name && entry.file === file);
  if (known !== undefined && previous.fingerprints?.[pkg.name] === print && existsSync(join(destination, file))) {
    entries.push({ ...known, fingerprint: print });
  } else {
    const [packed] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", destination], {
        cwd: dir,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    if (packed.filename !== file) throw new Error(`npm pack wrote ${packed.filename}, expected ${file}`);
    entries.push({
      name: pkg.name,
      version: pkg.version,
      file,
      integrity: packed.integrity,
      shasum: packed.shasum,
      size: packed.size,
      fingerprint: print,
    });
    process.stdout.write(`packed ${file}\n`);
  }
  // An older version's tarball would only confuse an author picking files by hand.
  const prefix = file.slice(0, file.length - `${pkg.version}.tgz`.length);
  for (const name of readdirSync(destination)) {
    if (name.startsWith(prefix) && name.endsWith(".tgz") && name !== file && /^\d/.test(name.slice(prefix.length)))
      rmSync(join(destination, name));
  }
  // Core packs the index as it stands now: the three packages it ships, not itself.
  if (folder !== "core") writeIndex(entries);
}
writeIndex(entries);
