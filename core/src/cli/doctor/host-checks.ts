import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import semver from "semver";
import type { SwitchyardConfig } from "../../config/config-schema.js";
import { homeAccessProblem } from "../../config/home-access.js";
import type { SwitchyardPaths } from "../../config/paths.js";
import { databaseFiles } from "../../config/private-home.js";
import { inspectHomeLock, type HomeLockState } from "../../host/home-lock.js";
import { MIGRATIONS } from "../../store/migrations.js";
import { probeSqliteDriver, readOfflineDatabase } from "../../store/offline-database.js";
import { CORE_PACKAGE_DIR } from "../../util/package-paths.js";
import { HOST_VERSION } from "../../util/host-version.js";
import type { DoctorFinding } from "./doctor-report.js";

/**
 * Doctor's checks of Switchyard itself: Node, the install, the home, its lock, the database and
 * the port. Each only looks: none takes the lock, creates a file in the home or opens a session.
 */

/** The Node versions core's package.json asks for. */
function wantedNode(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(CORE_PACKAGE_DIR, "package.json"), "utf8")) as {
      engines?: { node?: string };
    };
    return manifest.engines?.node ?? ">=22.19";
  } catch {
    return ">=22.19";
  }
}

export function checkNode(): DoctorFinding {
  const wanted = wantedNode();
  const ok = semver.satisfies(process.versions.node, wanted);
  return {
    area: "node",
    status: ok ? "ok" : "fail",
    subject: "Node.js",
    detail: ok
      ? `${process.version} (Switchyard needs ${wanted})`
      : `${process.version} is not ${wanted}: install a Node.js that is (https://nodejs.org), then run Switchyard with it.`,
    data: { version: process.versions.node, wanted, execPath: process.execPath },
  };
}

export function checkInstall(): DoctorFinding {
  return {
    area: "install",
    status: "ok",
    subject: "Switchyard",
    detail: `${HOST_VERSION} at ${CORE_PACKAGE_DIR}`,
    data: { version: HOST_VERSION, coreDir: CORE_PACKAGE_DIR },
  };
}

export function checkHome(paths: SwitchyardPaths): DoctorFinding {
  const exists = existsSync(paths.home);
  // The same line every command that needs the home fails with.
  const problem = homeAccessProblem(paths.home);
  if (problem !== null)
    return {
      area: "home",
      status: "fail",
      subject: "home",
      detail: problem,
      data: { home: paths.home, exists, writable: false },
    };
  if (!exists) {
    return {
      area: "home",
      status: "info",
      subject: "home",
      detail: `${paths.home} does not exist yet; the first command that needs it creates it.`,
      data: { home: paths.home, exists: false },
    };
  }
  return {
    area: "home",
    status: "ok",
    subject: "home",
    detail: paths.home,
    data: { home: paths.home, exists: true, writable: true },
  };
}

/** A path quoted for a POSIX shell. */
function shellQuote(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * Whether other users on this machine can read the home or its database (transcripts, prompts,
 * webhook bodies): a warning with the exact command that makes them private. Switchyard makes
 * them private itself the next time it opens the database; doctor only looks.
 */
export function checkHomeAccess(paths: SwitchyardPaths): DoctorFinding | null {
  if (!existsSync(paths.home)) return null;
  const candidates: { path: string; mode: number; folder: boolean }[] = [];
  for (const [path, folder] of [
    [paths.home, true],
    ...databaseFiles(paths).map((file) => [file, false] as const),
  ] as const) {
    try {
      candidates.push({ path, mode: statSync(path).mode & 0o777, folder });
    } catch {
      // not there: nothing to read
    }
  }
  const open = candidates.filter((candidate) => (candidate.mode & 0o077) !== 0);
  if (open.length === 0) {
    return {
      area: "home",
      status: "ok",
      subject: "home access",
      detail: "only this user can read the home and its database",
      data: { open: [] },
    };
  }
  const folders = open.filter((entry) => entry.folder).map((entry) => shellQuote(entry.path));
  const files = open.filter((entry) => !entry.folder).map((entry) => shellQuote(entry.path));
  const command = [
    ...(folders.length > 0 ? [`chmod 700 ${folders.join(" ")}`] : []),
    ...(files.length > 0 ? [`chmod 600 ${files.join(" ")}`] : []),
  ].join(" && ");
  const named = open.map((entry) => `${entry.path} (mode ${entry.mode.toString(8)})`).join(", ");
  return {
    area: "home",
    status: "warn",
    subject: "home access",
    detail: `other users on this machine can read ${named}: transcripts, prompts and webhook bodies. Make them private:\n${command}\n(Switchyard also does this the next time it opens the database.)`,
    data: { open: open.map((entry) => ({ path: entry.path, mode: entry.mode.toString(8) })), command },
  };
}

/**
 * Why a config that holds provider `environment` values (API keys, by design: docs/models.md)
 * should not be readable by other users, or null when it is not or holds none.
 */
function exposedEnvironment(file: string, config: SwitchyardConfig): { detail: string; mode: string } | null {
  const instances = config.providers
    .filter((provider) => Object.keys(provider.environment).length > 0)
    .map((provider) => provider.id);
  if (instances.length === 0) return null;
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return null;
  const octal = mode.toString(8).padStart(3, "0");
  return {
    mode: octal,
    detail: `; but it sets the environment (API keys) of ${instances.join(", ")} and other users can read it (mode ${octal}): run \`chmod 600 ${file}\``,
  };
}

/** The config's own finding; a broken config stops the checks that need it. */
export function checkConfig(
  paths: SwitchyardPaths,
  load: () => SwitchyardConfig,
): { finding: DoctorFinding; config: SwitchyardConfig | null } {
  try {
    const config = load();
    const exists = existsSync(paths.configFile);
    const exposed = exists ? exposedEnvironment(paths.configFile, config) : null;
    return {
      finding: {
        area: "config",
        status: exposed === null ? "ok" : "warn",
        subject: "config",
        detail:
          (exists
            ? `${paths.configFile}: ${config.providers.length} provider instance${config.providers.length === 1 ? "" : "s"}, ${config.plugins.length} extra plugin entr${config.plugins.length === 1 ? "y" : "ies"}`
            : `no ${paths.configFile}: the embedded defaults (no providers)`) + (exposed?.detail ?? ""),
        data: {
          file: paths.configFile,
          exists,
          providers: config.providers.length,
          plugins: config.plugins.length,
          ...(exposed !== null ? { mode: exposed.mode, readableByOthers: true } : {}),
        },
      },
      config,
    };
  } catch (error) {
    return {
      finding: {
        area: "config",
        status: "fail",
        subject: "config",
        detail: (error as Error).message,
        data: { file: paths.configFile },
      },
      config: null,
    };
  }
}

export function checkLock(paths: SwitchyardPaths): { finding: DoctorFinding; lock: HomeLockState } {
  const lock = existsSync(paths.home) ? inspectHomeLock(paths.home) : ({ state: "free" } as const);
  const detail =
    lock.state === "free"
      ? "free: no server runs on this home"
      : lock.state === "held"
        ? `held by a running Switchyard server (pid ${lock.holder.pid}, since ${lock.holder.since}); another \`serve\` on this home would be refused`
        : `left by a server that is gone${lock.holder !== null ? ` (pid ${lock.holder.pid})` : ""}; the next \`serve\` takes it over`;
  return {
    finding: {
      area: "lock",
      status: lock.state === "stale" ? "info" : "ok",
      subject: "lock",
      detail,
      data: { ...lock },
    },
    lock,
  };
}

/**
 * The database: whether the SQLite driver's native module loads for this Node, and the schema
 * version of an existing database (read without adding a file to the home: `readOfflineDatabase`).
 */
export async function checkDatabase(paths: SwitchyardPaths): Promise<DoctorFinding> {
  const newest = MIGRATIONS.reduce((max, migration) => Math.max(max, migration.version), 0);
  const driver = await probeSqliteDriver();
  if (!driver.loads) {
    return {
      area: "database",
      status: "fail",
      subject: "database",
      detail: `better-sqlite3 cannot load for Node ${process.version} (${driver.reason}). Reinstall Switchyard with this Node so npm installs the binary for it (npm i -g @switchyard/cli --allow-scripts=better-sqlite3; in a checkout, npm rebuild better-sqlite3).`,
      data: { file: paths.databaseFile, sqlite: false },
    };
  }
  if (!existsSync(paths.databaseFile)) {
    return {
      area: "database",
      status: "ok",
      subject: "database",
      detail: `${paths.databaseFile} is not created yet; \`serve\` creates it (schema ${newest})`,
      data: { file: paths.databaseFile, exists: false, newest },
    };
  }
  try {
    const version = await readOfflineDatabase(paths.databaseFile, (db) => db.schemaVersion());
    const size = statSync(paths.databaseFile).size;
    const data = { file: paths.databaseFile, exists: true, schema: version, newest, bytes: size };
    if (version > newest) {
      return {
        area: "database",
        status: "fail",
        subject: "database",
        detail: `${paths.databaseFile} has schema ${version}, newer than this Switchyard knows (${newest}): upgrade Switchyard, or use another home.`,
        data,
      };
    }
    const behind = version < newest ? `; \`serve\` migrates it to ${newest}` : "";
    return {
      area: "database",
      status: "ok",
      subject: "database",
      detail: `${paths.databaseFile} (schema ${version}${behind}, ${(size / 1024 / 1024).toFixed(1)} MB)`,
      data,
    };
  } catch (error) {
    return {
      area: "database",
      status: "fail",
      subject: "database",
      detail: `${paths.databaseFile} cannot be read: ${(error as Error).message}. Move it aside to start afresh, or use another home.`,
      data: { file: paths.databaseFile, exists: true },
    };
  }
}

/** Whether 127.0.0.1:`port` can be bound now (the socket is closed at once). */
function canBind(port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(null)));
  });
}

export async function checkPort(config: SwitchyardConfig, lock: HomeLockState): Promise<DoctorFinding> {
  const { port } = config.server;
  if (port === 0)
    return {
      area: "port",
      status: "ok",
      subject: "port",
      detail: "server.port is 0: `serve` picks a free port",
      data: { port },
    };
  if (lock.state === "held") {
    return {
      area: "port",
      status: "ok",
      subject: "port",
      detail: `${port}: this home's server (pid ${lock.holder.pid}) is running; not checked`,
      data: { port, checked: false },
    };
  }
  const problem = await canBind(port);
  if (problem === null)
    return {
      area: "port",
      status: "ok",
      subject: "port",
      detail: `127.0.0.1:${port} is free`,
      data: { port, free: true },
    };
  const taken = problem.code === "EADDRINUSE";
  return {
    area: "port",
    status: "fail",
    subject: "port",
    detail: taken
      ? `127.0.0.1:${port} is taken by another program, so \`serve\` would fail: stop it, or set server.port in the config (or pass --port; 0 picks a free one).`
      : `127.0.0.1:${port} cannot be bound (${problem.code ?? problem.message}): set server.port in the config, or pass --port.`,
    data: { port, free: false, error: problem.code ?? problem.message },
  };
}
