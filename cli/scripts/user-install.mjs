// Installs Switchyard the way a user does, from this checkout's packed workspaces: every
// workspace is packed (`npm pack`), a registry on loopback serves the @switchyard packages from
// those tarballs (they are not published), and `npm install -g @switchyard/cli` runs into an
// empty prefix with that registry for the @switchyard scope only. Everything else comes from
// npm's cache (else the npm registry), as it would for a user. The packaging test and the
// footprint bench share this; nothing here is shipped.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:http";
import { homedir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import * as tar from "tar";

const run = promisify(execFile);

/** The checkout this file is in. */
export const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));

/** The workspace folders of the checkout, as the root package.json lists them (globs expanded). */
export function workspaceDirs(root = CHECKOUT) {
  const { workspaces } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return workspaces.flatMap((pattern) =>
    pattern.endsWith("/*")
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
      : [pattern],
  );
}

/**
 * Packs every workspace into `dest` (one `npm pack`, no lifecycle scripts: the checkout is
 * built first). Returns each package's name, version, tarball file and size, integrity and the
 * manifest it was packed with.
 */
export async function packWorkspaces(dest, root = CHECKOUT) {
  await mkdir(dest, { recursive: true });
  const dirs = workspaceDirs(root);
  const args = ["pack", "--json", "--ignore-scripts", "--pack-destination", dest, ...dirs.flatMap((dir) => ["--workspace", dir])];
  const { stdout } = await run("npm", args, { cwd: root, maxBuffer: 256 * 1024 * 1024 });
  const packed = JSON.parse(stdout);
  return packed.map((entry) => {
    const dir = dirs.find((candidate) => JSON.parse(readFileSync(join(root, candidate, "package.json"), "utf8")).name === entry.name);
    return {
      name: entry.name,
      version: entry.version,
      file: join(dest, entry.filename),
      integrity: entry.integrity,
      size: entry.size,
      files: entry.files.map((file) => file.path),
      manifest: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")),
    };
  });
}

/**
 * The prebuilt better-sqlite3 binary of the checkout, as a prebuild-install tarball (what a
 * user's install downloads from GitHub). This machine reaches no host but the npm registry, so
 * the loopback registry serves it in GitHub's place: the install still runs better-sqlite3's
 * install script, which downloads and unpacks it.
 */
async function betterSqlitePrebuild(root) {
  const fromCore = createRequire(join(root, "core", "package.json"));
  const dir = join(fromCore.resolve("better-sqlite3/package.json"), "..");
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const chunks = [];
  for await (const chunk of tar.create({ gzip: true, cwd: dir, portable: true }, ["build/Release/better_sqlite3.node"])) chunks.push(chunk);
  return { path: `/prebuilds/v${version}/${name}`, body: Buffer.concat(chunks) };
}

/**
 * A registry on 127.0.0.1 serving packuments and tarballs of `packages` (from
 * {@link packWorkspaces}) and the better-sqlite3 prebuild under `/prebuilds`.
 */
export async function startLocalRegistry(packages, root = CHECKOUT) {
  const prebuild = await betterSqlitePrebuild(root);
  const requests = [];
  let base = "";
  const packument = (pkg) => {
    const { scripts: _scripts, devDependencies: _dev, ...manifest } = pkg.manifest;
    return {
      name: pkg.name,
      "dist-tags": { latest: pkg.version },
      versions: {
        [pkg.version]: { ...manifest, _id: `${pkg.name}@${pkg.version}`, dist: { tarball: `${base}/tarballs/${encodeURIComponent(pkg.file.split("/").pop())}`, integrity: pkg.integrity } },
      },
    };
  };
  const server = createServer((request, response) => {
    const url = decodeURIComponent((request.url ?? "/").split("?")[0]);
    requests.push(url);
    if (url === prebuild.path) {
      response.writeHead(200, { "content-type": "application/gzip", "content-length": prebuild.body.length });
      response.end(prebuild.body);
      return;
    }
    if (url.startsWith("/tarballs/")) {
      const pkg = packages.find((candidate) => candidate.file.endsWith(`/${url.slice("/tarballs/".length)}`));
      if (pkg !== undefined) {
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": statSync(pkg.file).size });
        createReadStream(pkg.file).pipe(response);
        return;
      }
    }
    const pkg = packages.find((candidate) => `/${candidate.name}` === url);
    if (pkg !== undefined) {
      const body = JSON.stringify(packument(pkg));
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      response.end(body);
      return;
    }
    response.writeHead(404, { "content-type": "application/json" });
    response.end(JSON.stringify({ error: "not found" }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: base,
    prebuildHost: `${base}/prebuilds`,
    prebuildUrls: () => [`${base}${prebuild.path}`],
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Bytes under a folder (files only; links are not followed). */
export function folderBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(file);
    else if (entry.isFile()) total += statSync(file).size;
  }
  return total;
}

/**
 * `npm install -g @switchyard/cli` into `prefix`, with `registry` answering for @switchyard and
 * better-sqlite3's prebuild. `env` is the environment npm runs with (its HOME, its cache).
 * Returns npm's output and how long it took.
 */
export async function installCli({ prefix, registry, env, timeoutMs = 600_000 }) {
  const started = process.hrtime.bigint();
  const result = await run(
    "npm",
    [
      "install",
      "--global",
      "--prefix",
      prefix,
      `--@switchyard:registry=${registry.url}/`,
      "--allow-scripts=better-sqlite3",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel=warn",
      "@switchyard/cli",
    ],
    { cwd: prefix, env: { ...env, npm_config_better_sqlite3_binary_host: registry.prebuildHost }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  // prebuild-install keeps what it downloaded in npm's cache under a name made from the URL,
  // whose port changes every run: leave nothing of a run behind there.
  for (const url of registry.prebuildUrls()) rmSync(prebuildCacheFile(url, env), { force: true });
  return { stdout: result.stdout, stderr: result.stderr, seconds };
}

/** Where prebuild-install caches a download (its util.js `cachedPrebuild`). */
function prebuildCacheFile(url, env) {
  const cache = env.npm_config_cache ?? join(env.HOME ?? homedir(), ".npm");
  const digest = createHash("sha512").update(url).digest("hex").slice(0, 6);
  return join(cache, "_prebuilds", `${digest}-${url.split("/").pop().replace(/[^a-zA-Z0-9.]+/g, "-")}`);
}

/** Every package folder installed under a node_modules (scoped ones included), recursively. */
export function installedPackages(nodeModules) {
  const found = [];
  const visit = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      if (entry.name.startsWith("@")) {
        visit(join(dir, entry.name));
        continue;
      }
      const packageDir = join(dir, entry.name);
      try {
        const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
        found.push({ name: manifest.name, version: manifest.version, dir: packageDir });
      } catch {
        // not a package
      }
      visit(join(packageDir, "node_modules"));
    }
  };
  visit(nodeModules);
  return found;
}

/** Native modules (`.node` files) under a folder. */
export function nativeModules(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...nativeModules(file));
    else if (entry.isFile() && entry.name.endsWith(".node")) found.push(file);
  }
  return found;
}
