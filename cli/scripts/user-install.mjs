// Installs Switchyard the way a user does, from this checkout's packed workspaces: every
// workspace is packed (`npm pack`), and `npm install -g @switchyard/cli` runs into an empty
// prefix against a registry on loopback that answers for every package the install needs: the
// @switchyard packages from those tarballs (they are not published), every other package from
// this checkout's package-lock.json (packuments made from its entries, tarballs from npm's
// cache by integrity). npm runs with no configuration but ours and a proxy that refuses every
// host but loopback, so the install sends nothing off this machine. The packaging test and the
// footprint bench share this; nothing here is shipped.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import semver from "semver";
import * as tar from "tar";

const run = promisify(execFile);

/** The checkout this file is in. */
export const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The published workspace folders of the checkout, as the root package.json lists them (globs
 * expanded), without private ones (the web UI ships built inside core, not as a package).
 */
export function workspaceDirs(root = CHECKOUT) {
  const { workspaces } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return workspaces
    .flatMap((pattern) =>
      pattern.endsWith("/*")
        ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
            .filter((entry) => entry.isDirectory())
            .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
        : [pattern],
    )
    .filter((dir) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")).private !== true);
}

/**
 * Packs every workspace into `dest` (one `npm pack`, no lifecycle scripts: the checkout is
 * built first). Returns each package's name, version, tarball file and size, integrity and the
 * manifest it was packed with.
 */
export async function packWorkspaces(dest, root = CHECKOUT) {
  await mkdir(dest, { recursive: true });
  const dirs = workspaceDirs(root);
  const args = [
    "pack",
    "--json",
    "--ignore-scripts",
    "--pack-destination",
    dest,
    ...dirs.flatMap((dir) => ["--workspace", dir]),
  ];
  const { stdout } = await run("npm", args, { cwd: root, maxBuffer: 256 * 1024 * 1024 });
  const packed = JSON.parse(stdout);
  return packed.map((entry) => {
    const dir = dirs.find(
      (candidate) => JSON.parse(readFileSync(join(root, candidate, "package.json"), "utf8")).name === entry.name,
    );
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
  for await (const chunk of tar.create({ gzip: true, cwd: dir, portable: true }, ["build/Release/better_sqlite3.node"]))
    chunks.push(chunk);
  return { path: `/prebuilds/v${version}/${name}`, body: Buffer.concat(chunks) };
}

/** The fields of a package-lock.json entry that a packument's version carries. */
const LOCK_MANIFEST_FIELDS = [
  "dependencies",
  "optionalDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "bin",
  "engines",
  "os",
  "cpu",
  "libc",
  "hasInstallScript",
  "license",
  "deprecated",
];

/**
 * Every third-party package version of the lock, by name: what an install of the packed
 * workspaces can ask for (their dependency ranges are the ones the lock resolved). Aliased
 * entries (`"name"` in the entry) are filed under the real name.
 */
function lockedVersions(root) {
  const { packages } = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
  const byName = new Map();
  for (const [path, entry] of Object.entries(packages)) {
    const at = path.lastIndexOf("node_modules/");
    // This checkout's lock leaves `resolved` out (the registry is implied): the integrity names the tarball.
    if (at === -1 || entry.link === true || entry.integrity === undefined) continue;
    const name = entry.name ?? path.slice(at + "node_modules/".length);
    if (!byName.has(name)) byName.set(name, new Map());
    byName.get(name).set(entry.version, entry);
  }
  return byName;
}

/** npm's cache folder as `env` configures it (the cache the lock's tarballs are read from). */
async function npmCacheDir(env, cwd) {
  const { stdout } = await run("npm", ["config", "get", "cache"], { cwd, env });
  return stdout.trim();
}

/**
 * The bytes of a tarball in npm's cache (cacache's content-v2 store, addressed by integrity),
 * checked against that integrity; undefined when the cache does not hold it.
 */
function cachedTarball(cacheDir, integrity) {
  for (const hash of integrity.trim().split(/\s+/)) {
    const dash = hash.indexOf("-");
    const algorithm = hash.slice(0, dash);
    const hex = Buffer.from(hash.slice(dash + 1), "base64").toString("hex");
    let body;
    try {
      body = readFileSync(
        join(cacheDir, "_cacache", "content-v2", algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4)),
      );
    } catch {
      continue;
    }
    if (createHash(algorithm).update(body).digest("hex") === hex) return body;
  }
  return undefined;
}

/**
 * A registry on 127.0.0.1 serving packuments and tarballs of `packages` (from
 * {@link packWorkspaces}), of every other package in the checkout's package-lock.json (tarballs
 * from npm's cache), and the better-sqlite3 prebuild under `/prebuilds`. It records what it
 * served, what it could not answer, and the locked packages whose tarball npm's cache lacks.
 */
export async function startLocalRegistry(packages, root = CHECKOUT, env = process.env) {
  const prebuild = await betterSqlitePrebuild(root);
  const locked = lockedVersions(root);
  const cacheDir = await npmCacheDir(env, root);
  const requests = [];
  const served = [];
  const unanswered = [];
  const missingFromCache = [];
  // npm asks for the packument of an optional peer dependency even when nothing installs it;
  // the lock has no entry for such a name, and a 404 is the answer a public registry would not give.
  const optionalPeers = new Set(
    [
      ...packages.map((pkg) => pkg.manifest),
      ...[...locked.values()].flatMap((versions) => [...versions.values()]),
    ].flatMap((manifest) =>
      Object.entries(manifest.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta?.optional === true)
        .map(([name]) => name),
    ),
  );
  /** Tarball path -> the locked entry it serves. */
  const lockedTarballs = new Map();
  let base = "";
  const packument = (pkg) => {
    const { scripts: _scripts, devDependencies: _dev, ...manifest } = pkg.manifest;
    return {
      name: pkg.name,
      "dist-tags": { latest: pkg.version },
      versions: {
        [pkg.version]: {
          ...manifest,
          _id: `${pkg.name}@${pkg.version}`,
          dist: {
            tarball: `${base}/tarballs/${encodeURIComponent(pkg.file.split("/").pop())}`,
            integrity: pkg.integrity,
          },
        },
      },
    };
  };
  const lockedPackument = (name, versions) => {
    const documents = {};
    for (const [version, entry] of versions) {
      const path = `/${name}/-/${name.split("/").pop()}-${version}.tgz`;
      lockedTarballs.set(path, { name, version, integrity: entry.integrity });
      const fields = Object.fromEntries(
        LOCK_MANIFEST_FIELDS.filter((field) => entry[field] !== undefined).map((field) => [field, entry[field]]),
      );
      documents[version] = {
        name,
        version,
        ...fields,
        _id: `${name}@${version}`,
        dist: { tarball: `${base}${path}`, integrity: entry.integrity },
      };
    }
    const latest =
      semver.rsort(
        [...versions.keys()].filter((version) => semver.valid(version) !== null && semver.prerelease(version) === null),
      )[0] ?? [...versions.keys()][0];
    return { name, "dist-tags": { latest }, versions: documents };
  };
  const sendJson = (response, status, document) => {
    const body = JSON.stringify(document);
    response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    response.end(body);
  };
  const server = createServer((request, response) => {
    const url = decodeURIComponent((request.url ?? "/").split("?")[0]);
    requests.push(url);
    if (url === prebuild.path) {
      served.push({ kind: "prebuild", name: "better-sqlite3", path: url });
      response.writeHead(200, { "content-type": "application/gzip", "content-length": prebuild.body.length });
      response.end(prebuild.body);
      return;
    }
    if (url.startsWith("/tarballs/")) {
      const pkg = packages.find((candidate) => candidate.file.endsWith(`/${url.slice("/tarballs/".length)}`));
      if (pkg !== undefined) {
        served.push({ kind: "tarball", name: pkg.name, version: pkg.version });
        response.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": statSync(pkg.file).size,
        });
        createReadStream(pkg.file).pipe(response);
        return;
      }
    }
    const tarball = lockedTarballs.get(url);
    if (tarball !== undefined) {
      const body = cachedTarball(cacheDir, tarball.integrity);
      if (body === undefined) {
        missingFromCache.push(`${tarball.name}@${tarball.version}`);
        unanswered.push(url);
        sendJson(response, 404, {
          error: `${tarball.name}@${tarball.version} (${tarball.integrity}) is not in npm's cache at ${cacheDir}`,
        });
        return;
      }
      served.push({ kind: "tarball", name: tarball.name, version: tarball.version });
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
      response.end(body);
      return;
    }
    const pkg = packages.find((candidate) => `/${candidate.name}` === url);
    if (pkg !== undefined) {
      served.push({ kind: "packument", name: pkg.name });
      sendJson(response, 200, packument(pkg));
      return;
    }
    const versions = locked.get(url.slice(1));
    if (versions !== undefined) {
      served.push({ kind: "packument", name: url.slice(1) });
      sendJson(response, 200, lockedPackument(url.slice(1), versions));
      return;
    }
    unanswered.push(url);
    sendJson(response, 404, { error: "not found" });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: base,
    prebuildHost: `${base}/prebuilds`,
    prebuildUrls: () => [`${base}${prebuild.path}`],
    requests,
    served,
    unanswered,
    missingFromCache,
    optionalPeers,
    sourceCache: cacheDir,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/**
 * An HTTP proxy on 127.0.0.1 that passes requests and CONNECT tunnels to loopback hosts and
 * refuses (403) every other host, recording it: npm and better-sqlite3's install script use it,
 * so a request meant for the internet fails at once and names itself.
 */
export async function startLoopbackOnlyProxy() {
  const refused = [];
  const sockets = new Set();
  const server = createServer((request, response) => {
    let target;
    try {
      target = new URL(request.url ?? "");
    } catch {
      response.writeHead(400).end("absolute URL expected");
      return;
    }
    if (!LOOPBACK_HOSTS.has(target.hostname)) {
      refused.push(`${request.method} ${target.origin}${target.pathname}`);
      response.writeHead(403, { "content-type": "text/plain" }).end(`refused: ${target.host} is not loopback`);
      return;
    }
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port || 80,
        path: `${target.pathname}${target.search}`,
        method: request.method,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", () => response.destroy());
    request.pipe(upstream);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("connect", (request, socket, head) => {
    const authority = request.url ?? "";
    const colon = authority.lastIndexOf(":");
    const host = authority.slice(0, colon);
    if (!LOOPBACK_HOSTS.has(host)) {
      refused.push(`CONNECT ${authority}`);
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    const upstream = connect(Number(authority.slice(colon + 1)), host.replace(/^\[|\]$/g, ""), () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    refused,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
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

/** Environment variables that would point npm, or a script it runs, at other config or hosts. */
const LEAKY_ENV = /^(npm_config_|npm_package_|npm_lifecycle_|http_proxy$|https_proxy$|no_proxy$|all_proxy$)/i;

/**
 * `npm install -g @switchyard/cli` into `prefix`, with `registry` answering for every package and
 * better-sqlite3's prebuild. npm runs with a HOME of its own and empty user and global
 * configuration (nothing of this machine's .npmrc or npm_config_* reaches it), `cache` as its
 * cache (default: the cache `env` configures), and a proxy that refuses every host but loopback.
 * Returns npm's output, how long it took and the non-loopback requests the proxy refused.
 */
export async function installCli({ prefix, registry, env, cache, timeoutMs = 600_000 }) {
  const cacheDir = cache ?? (await npmCacheDir(env, prefix));
  const npmHome = mkdtempSync(join(tmpdir(), "switchyard-npm-home-"));
  const userConfig = join(npmHome, "user.npmrc");
  const globalConfig = join(npmHome, "global.npmrc");
  writeFileSync(userConfig, "");
  writeFileSync(globalConfig, "");
  const proxy = await startLoopbackOnlyProxy();
  const noProxy = "127.0.0.1,localhost,::1";
  const started = process.hrtime.bigint();
  const clean = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => value !== undefined && !LEAKY_ENV.test(key)),
  );
  try {
    const result = await run(
      "npm",
      [
        "install",
        "--global",
        "--prefix",
        prefix,
        `--registry=${registry.url}/`,
        `--userconfig=${userConfig}`,
        `--globalconfig=${globalConfig}`,
        `--cache=${cacheDir}`,
        `--proxy=${proxy.url}`,
        `--https-proxy=${proxy.url}`,
        `--noproxy=${noProxy}`,
        "--allow-scripts=better-sqlite3",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        "--loglevel=warn",
        "@switchyard/cli",
      ],
      {
        cwd: prefix,
        env: {
          ...clean,
          HOME: npmHome,
          HTTP_PROXY: proxy.url,
          HTTPS_PROXY: proxy.url,
          NO_PROXY: noProxy,
          npm_config_better_sqlite3_binary_host: registry.prebuildHost,
        },
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { stdout: result.stdout, stderr: result.stderr, seconds, refused: [...proxy.refused] };
  } catch (error) {
    const named = [
      registry.missingFromCache.length > 0
        ? `not in npm's cache (${registry.sourceCache}), so the loopback registry cannot serve them (run \`npm ci\` in the checkout): ${[...new Set(registry.missingFromCache)].join(", ")}`
        : "",
      registry.unanswered.length > 0
        ? `the loopback registry had no answer for: ${[...new Set(registry.unanswered)].join(", ")}`
        : "",
      proxy.refused.length > 0
        ? `requests to hosts other than loopback, refused: ${[...new Set(proxy.refused)].join(", ")}`
        : "",
    ].filter((line) => line !== "");
    if (named.length > 0) error.message = `${named.join("; ")}\n${error.message}`;
    throw error;
  } finally {
    await proxy.close();
    rmSync(npmHome, { recursive: true, force: true });
    // prebuild-install keeps what it downloaded in npm's cache under a name made from the URL,
    // whose port changes every run: leave nothing of a run behind there.
    for (const url of registry.prebuildUrls()) rmSync(prebuildCacheFile(url, cacheDir), { force: true });
  }
}

/** Where prebuild-install caches a download (its util.js `cachedPrebuild`). */
function prebuildCacheFile(url, cacheDir) {
  const digest = createHash("sha512").update(url).digest("hex").slice(0, 6);
  return join(
    cacheDir,
    "_prebuilds",
    `${digest}-${url
      .split("/")
      .pop()
      .replace(/[^a-zA-Z0-9.]+/g, "-")}`,
  );
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
