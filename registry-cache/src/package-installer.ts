import { constants } from "node:fs";
import { access, mkdir, readFile, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { execa } from "execa";
import type { CacheLayout } from "./cache-layout.js";
import { RegistryError, describeError } from "./errors.js";
import type { NpmPackageSpec, PythonPackageSpec } from "./package-spec.js";
import type { ProgressListener } from "./progress.js";
import { readPackageReceipt, writeReceipt, type PackageReceipt } from "./receipts.js";
import { outputTail } from "./redact.js";
import type { PackageDistribution, RegistryAgent } from "./registry-schema.js";
import { isExecutableFile, type ProcessEnv } from "./runner-lookup.js";

/** A package install found (or just made): its receipt and the executable to launch. */
export interface PackageInstall {
  readonly receipt: PackageReceipt;
  readonly command: string;
}

export interface PackageInstallContext {
  readonly layout: CacheLayout;
  /** Environment npm/uv run with (PATH, npm_config_*, UV_* …). */
  readonly env: ProcessEnv;
  /** Absolute path of the runner, already looked up. */
  readonly runnerPath: string;
  /** npm only: install into this prefix instead of npm's global one. */
  readonly npmPrefix?: string;
  readonly timeoutMs: number;
  readonly onProgress?: ProgressListener;
  readonly signal?: AbortSignal;
}

const IS_WINDOWS = process.platform === "win32";

/**
 * The install recorded for this exact pinned package, if it is still there: the receipt's
 * executable exists and (for npm) the installed package.json still has the pinned version.
 */
export async function findPackageInstall(
  layout: CacheLayout,
  agentId: string,
  kind: "npx" | "uvx",
  distribution: PackageDistribution,
): Promise<PackageInstall | null> {
  const receipt = await readPackageReceipt(layout.packageReceiptFile(agentId, kind, distribution.package));
  if (receipt === null || receipt.package !== distribution.package) return null;
  if (!(await isExecutableFile(receipt.command))) return null;
  if (receipt.packageManager === "npm") {
    const installed = await readInstalledNpmVersion(receipt.location, receipt.packageName);
    if (installed !== receipt.packageVersion) return null;
  }
  return { receipt, command: receipt.command };
}

/**
 * `npm install --global <name>@<exact version>`, which is what `npx -y` would fetch, but done
 * once ahead of time and pinned. The global prefix is used when it is writable; otherwise (a
 * system Node owned by root) a prefix inside the cache, so installing never needs sudo.
 */
export async function installNpmPackage(
  agent: RegistryAgent,
  distribution: PackageDistribution,
  spec: NpmPackageSpec,
  context: PackageInstallContext,
): Promise<PackageInstall> {
  const prefix = context.npmPrefix ?? (await chooseNpmPrefix(context));
  context.onProgress?.({ phase: "installing_package", agentId: agent.id, packageManager: "npm", package: spec.spec });
  await mkdir(prefix, { recursive: true });
  await runPackageManager(
    agent.id,
    "npm",
    context,
    ["install", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", spec.spec],
    { npm_config_update_notifier: "false" },
  );

  const installedVersion = await readInstalledNpmVersion(prefix, spec.name);
  if (installedVersion !== spec.version) {
    throw new RegistryError(
      "package_install_failed",
      `npm reported success but ${spec.name}@${spec.version} is not in ${prefix} (found ${installedVersion ?? "nothing"}).`,
      {
        details: { agentId: agent.id, package: spec.spec, prefix },
      },
    );
  }
  const command = await npmBinPath(prefix, spec.name, agent.id);
  const receipt: PackageReceipt = {
    schemaVersion: 1,
    kind: "npx",
    agentId: agent.id,
    version: agent.version,
    package: distribution.package,
    packageName: spec.name,
    packageVersion: spec.version,
    packageManager: "npm",
    location: prefix,
    command,
    installedAt: new Date().toISOString(),
    args: [...(distribution.args ?? [])],
    env: { ...(distribution.env ?? {}) },
  };
  await writeReceipt(context.layout.packageReceiptFile(agent.id, "npx", distribution.package), receipt);
  return { receipt, command };
}

/**
 * `uv tool install --force <name>==<version>` with uv's tool and bin directories pointed into
 * the cache, so the install is ours to find and remove and never shadows the user's tools.
 */
export async function installUvPackage(
  agent: RegistryAgent,
  distribution: PackageDistribution,
  spec: PythonPackageSpec,
  context: PackageInstallContext,
): Promise<PackageInstall> {
  const { layout } = context;
  context.onProgress?.({ phase: "installing_package", agentId: agent.id, packageManager: "uv", package: spec.spec });
  await runPackageManager(agent.id, "uv", context, ["tool", "install", "--force", spec.spec], {
    UV_TOOL_DIR: layout.uvToolDir,
    UV_TOOL_BIN_DIR: layout.uvBinDir,
  });
  // `uvx <package>` runs the executable named like the package; do the same.
  const command = join(layout.uvBinDir, IS_WINDOWS ? `${spec.name}.exe` : spec.name);
  if (!(await isExecutableFile(command))) {
    const present = await readdir(layout.uvBinDir).catch(() => [] as string[]);
    throw new RegistryError(
      "package_install_failed",
      `uv installed ${spec.spec} but it provides no executable named "${spec.name}" (found: ${present.join(", ") || "none"}). Use a command override for this agent.`,
      { details: { agentId: agent.id, package: spec.spec } },
    );
  }
  const receipt: PackageReceipt = {
    schemaVersion: 1,
    kind: "uvx",
    agentId: agent.id,
    version: agent.version,
    package: distribution.package,
    packageName: spec.name,
    packageVersion: spec.version,
    packageManager: "uv",
    location: layout.uvToolDir,
    command,
    installedAt: new Date().toISOString(),
    args: [...(distribution.args ?? [])],
    env: { ...(distribution.env ?? {}) },
  };
  await writeReceipt(layout.packageReceiptFile(agent.id, "uvx", distribution.package), receipt);
  return { receipt, command };
}

/** Removes what a package receipt installed. Failures of the package manager are reported. */
export async function uninstallPackage(receipt: PackageReceipt, context: PackageInstallContext): Promise<void> {
  if (receipt.packageManager === "npm") {
    await runPackageManager(
      receipt.agentId,
      "npm",
      context,
      ["uninstall", "--global", "--prefix", receipt.location, "--loglevel=error", receipt.packageName],
      {
        npm_config_update_notifier: "false",
      },
    );
  } else {
    await runPackageManager(receipt.agentId, "uv", context, ["tool", "uninstall", receipt.packageName], {
      UV_TOOL_DIR: context.layout.uvToolDir,
      UV_TOOL_BIN_DIR: context.layout.uvBinDir,
    });
  }
}

async function runPackageManager(
  agentId: string,
  manager: "npm" | "uv",
  context: PackageInstallContext,
  args: string[],
  extraEnv: Record<string, string>,
): Promise<void> {
  const result = await execa(context.runnerPath, args, {
    env: { ...context.env, ...extraEnv },
    extendEnv: false,
    reject: false,
    all: true,
    stdin: "ignore",
    timeout: context.timeoutMs,
    ...(context.signal === undefined ? {} : { cancelSignal: context.signal }),
  });
  if (result.isCanceled)
    throw new RegistryError("aborted", `${manager} ${args[0] ?? ""} for ${agentId} was cancelled.`, {
      details: { agentId },
    });
  if (result.failed) {
    const why = result.timedOut
      ? `timed out after ${context.timeoutMs} ms`
      : result.exitCode === undefined
        ? describeError(result)
        : `exited with code ${result.exitCode}`;
    throw new RegistryError(
      "package_install_failed",
      `\`${manager} ${args.join(" ")}\` ${why}. Output:\n${outputTail(result.all)}\nFix the problem shown above (network, registry access, permissions) and retry.`,
      { details: { agentId, packageManager: manager, exitCode: result.exitCode } },
    );
  }
}

async function chooseNpmPrefix(context: PackageInstallContext): Promise<string> {
  const result = await execa(context.runnerPath, ["prefix", "--global"], {
    env: { ...context.env },
    extendEnv: false,
    reject: false,
    stdin: "ignore",
    timeout: 60_000,
  });
  const globalPrefix = result.failed ? "" : result.stdout.trim();
  if (globalPrefix !== "" && (await canInstallInto(globalPrefix))) return globalPrefix;
  return context.layout.npmFallbackPrefix;
}

// npm writes into <prefix>/lib/node_modules and <prefix>/bin (the prefix itself on Windows).
async function canInstallInto(prefix: string): Promise<boolean> {
  const targets = IS_WINDOWS ? [prefix] : [join(prefix, "lib"), join(prefix, "bin")];
  for (const target of targets) {
    const existing = await nearestExisting(target);
    try {
      await access(existing, constants.W_OK);
    } catch {
      return false;
    }
  }
  return true;
}

async function nearestExisting(path: string): Promise<string> {
  let current = path;
  for (;;) {
    try {
      await access(current);
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

function npmPackageDir(prefix: string, name: string): string {
  return IS_WINDOWS ? join(prefix, "node_modules", name) : join(prefix, "lib", "node_modules", name);
}

async function readInstalledNpmVersion(prefix: string, name: string): Promise<string | null> {
  try {
    const manifest = JSON.parse(await readFile(join(npmPackageDir(prefix, name), "package.json"), "utf8")) as {
      version?: unknown;
    };
    return typeof manifest.version === "string" ? manifest.version : null;
  } catch {
    return null;
  }
}

/**
 * The executable npx would run: the package's only bin, or the bin named like the package
 * (without scope). npm links it into <prefix>/bin.
 */
async function npmBinPath(prefix: string, name: string, agentId: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(npmPackageDir(prefix, name), "package.json"), "utf8")) as {
    bin?: unknown;
  };
  const unscoped = name.startsWith("@") ? name.slice(name.indexOf("/") + 1) : name;
  let binName: string | undefined;
  if (typeof manifest.bin === "string") binName = unscoped;
  else if (typeof manifest.bin === "object" && manifest.bin !== null) {
    const names = Object.keys(manifest.bin);
    binName = names.length === 1 ? names[0] : names.find((candidate) => candidate === unscoped);
    if (binName === undefined) {
      throw new RegistryError(
        "package_install_failed",
        `${name} declares several executables (${names.join(", ")}) and none is named "${unscoped}", so it is unclear which one npx would run. Use a command override for ${agentId}.`,
        { details: { agentId, package: name, bins: names } },
      );
    }
  }
  if (binName === undefined) {
    throw new RegistryError(
      "package_install_failed",
      `${name} declares no executable ("bin" in package.json), so npx could not run it.`,
      { details: { agentId, package: name } },
    );
  }
  const command = IS_WINDOWS ? join(prefix, `${binName}.cmd`) : join(prefix, "bin", binName);
  if (!(await isExecutableFile(command))) {
    throw new RegistryError(
      "package_install_failed",
      `npm installed ${name} but its executable ${command} is missing or not executable.`,
      { details: { agentId, package: name } },
    );
  }
  return command;
}
