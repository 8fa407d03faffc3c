import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { execa } from "execa";
import { SwitchyardError } from "../spec/index.js";
import type { Logger } from "../logging/logger.js";
import { PluginHost, type PluginRecord } from "./plugin-host.js";
import { makePrivateDir, PRIVATE_FILE_MODE } from "../util/private-files.js";

/** What was installed. */
export interface InstalledPlugin {
  readonly name: string;
  readonly version: string | null;
  readonly drivers: readonly string[];
  readonly source: "folder" | "tarball" | "npm";
  /** The tarball's SRI hash (sha512), as verified or computed. */
  readonly integrity: string | null;
  /** The packages whose npm install scripts ran, as the manifest's `installScripts` allowed (none by default). */
  readonly installScripts: readonly string[];
}

async function sri(file: string, algorithm: "sha512" | "sha256" | "sha384"): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `${algorithm}-${hash.digest("base64")}`;
}

/** A spec written as a path (npm would read it as one too), not as a package name. */
function looksLikePath(spec: string): boolean {
  return /^(\.{1,2}([/\\]|$)|[/\\~]|file:)/.test(spec) || isAbsolute(spec) || /\.(tgz|tar\.gz)$/.test(spec);
}

/**
 * Refuses, before npm is asked, a path that names nothing (npm would look for a package.json
 * there, or a package named like it) and a file that is not a tarball.
 */
function refuseWhatIsNoPackage(spec: string, path: string): void {
  if (!existsSync(path)) {
    if (looksLikePath(spec))
      throw new SwitchyardError(
        "not_found",
        `There is no folder or tarball at ${path}. A plugin installs from a folder with a package.json, a .tgz, or an npm package name.`,
        { path },
      );
    return;
  }
  if (!statSync(path).isDirectory() && !/\.(tgz|tar\.gz)$/.test(path)) {
    throw new SwitchyardError(
      "invalid_input",
      `${path} is a file but not a tarball (.tgz): a plugin installs from a folder with a package.json, a .tgz (npm pack makes one), or an npm package name.`,
      { path },
    );
  }
}

/** Where installed tarballs are kept, inside the managed directory. */
const TARBALLS_DIR = "tarballs";

function npmEnv(): Record<string, string> {
  return { npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
}

/**
 * Installs plugins into the managed directory (`$SWITCHYARD_HOME/plugins`) with npm: an npm
 * spec, a tarball (checked against an SRI integrity when given) or a folder (packed first, so
 * the install is a copy, not a link). Tarballs are kept in `plugins/tarballs`, because npm
 * reinstalls every `file:` dependency from its recorded path. A plugin the host would refuse is
 * removed again, with the refusal as the error.
 *
 * npm runs no package's scripts here (`--ignore-scripts` on pack, install and uninstall): a
 * package is a plugin only once its manifest passed, and only then do the install scripts its
 * manifest names (`installScripts`: itself or its declared dependencies) run, with `npm rebuild`.
 * A package that is not a plugin, or is refused, never ran anything.
 */
export class PluginInstaller {
  constructor(
    private readonly managedDir: string,
    private readonly logger: Logger,
  ) {}

  private ensureManagedDir(): void {
    makePrivateDir(this.managedDir);
    const manifest = join(this.managedDir, "package.json");
    if (!existsSync(manifest))
      writeFileSync(
        manifest,
        `${JSON.stringify({ name: "switchyard-managed-plugins", private: true, dependencies: {} }, null, 2)}\n`,
        { mode: PRIVATE_FILE_MODE },
      );
  }

  /**
   * Plugins import the sdk (and through it the spec) as a peer: they must use the host's copy,
   * so the managed directory links to it instead of installing another.
   */
  private linkHostPackages(): void {
    const require = createRequire(import.meta.url);
    for (const name of ["@switchyard/sdk", "@switchyard/core"]) {
      let dir: string;
      try {
        dir = dirname(require.resolve(`${name}/package.json`));
      } catch {
        continue;
      }
      const link = join(this.managedDir, "node_modules", name);
      mkdirSync(dirname(link), { recursive: true });
      try {
        lstatSync(link);
        continue;
      } catch {
        // missing: create it
      }
      symlinkSync(dir, link, "dir");
    }
  }

  private async npm(args: string[]): Promise<void> {
    const result = await execa("npm", args, { cwd: this.managedDir, env: npmEnv(), reject: false, stdin: "ignore" });
    // npm prunes what its manifest does not list, the host links included: put them back.
    this.linkHostPackages();
    if (result.exitCode !== 0) {
      const stderr = String(result.stderr);
      // The registry has no such package: say so, rather than npm's page of 404 lines.
      if (args[0] === "install" && /\bE404\b/.test(stderr)) {
        const spec = args.at(-1)!;
        throw new SwitchyardError(
          "not_found",
          `npm has no package ${spec} (the registry answered 404). Check the name, or install the plugin from a folder or a .tgz.`,
          { spec },
        );
      }
      const detail =
        stderr
          .split("\n")
          .filter((line) => /ERR!|^npm error/.test(line))
          .slice(0, 6)
          .join("\n") || stderr.slice(-800);
      throw new SwitchyardError("provider_error", `npm ${args[0]} failed:\n${detail}`, { exitCode: result.exitCode });
    }
  }

  /** Packs a folder into a tarball in `into`. */
  private async pack(folder: string, into: string): Promise<string> {
    // prepack/prepare/postpack are the folder's code: nothing runs before its manifest is checked.
    const result = await execa("npm", ["pack", folder, "--ignore-scripts", "--pack-destination", into, "--json"], {
      env: npmEnv(),
      reject: false,
      stdin: "ignore",
    });
    if (result.exitCode !== 0)
      throw new SwitchyardError("invalid_input", `npm pack ${folder} failed: ${String(result.stderr).slice(-600)}`);
    const file = readdirSync(into).find((f) => f.endsWith(".tgz"));
    if (file === undefined) throw new SwitchyardError("internal", `npm pack ${folder} produced no tarball`);
    return join(into, file);
  }

  private get tarballsDir(): string {
    return join(this.managedDir, TARBALLS_DIR);
  }

  /**
   * Keeps the tarball npm installs from under the managed directory, named by its content: the
   * manifest records it (`file:tarballs/…`) and npm reinstalls it whenever it reifies the
   * directory, so it must outlive any temporary folder and the user's own copy.
   */
  private keepTarball(file: string, integrity: string): string {
    makePrivateDir(this.tarballsDir);
    const stem = basename(file).replace(/\.(tgz|tar\.gz)$/, "");
    const digest = createHash("sha256").update(integrity).digest("hex").slice(0, 12);
    const kept = join(this.tarballsDir, `${stem}-${digest}.tgz`);
    if (!existsSync(kept)) {
      // Copy next to the final name, then rename: a crash never leaves a truncated tarball there.
      const partial = `${kept}.partial`;
      copyFileSync(file, partial);
      chmodSync(partial, PRIVATE_FILE_MODE);
      renameSync(partial, kept);
    }
    return kept;
  }

  /** Deletes kept tarballs the manifest no longer refers to (replaced, removed or refused plugins). */
  private sweepTarballs(): void {
    if (!existsSync(this.tarballsDir)) return;
    const referenced = new Set(Object.values(this.dependencies()).map((spec) => basename(spec)));
    for (const file of readdirSync(this.tarballsDir)) {
      if (!referenced.has(file)) rmSync(join(this.tarballsDir, file), { force: true });
    }
  }

  /** Installs from an npm spec, a tarball path or a folder path. */
  async install(spec: string, options: { integrity?: string } = {}): Promise<InstalledPlugin> {
    this.ensureManagedDir();
    // Packing happens under the home, not the system temp folder, and is always cleaned up.
    const staging = mkdtempSync(join(this.managedDir, ".staging-"));
    try {
      return await this.installFrom(spec, options, staging);
    } finally {
      rmSync(staging, { recursive: true, force: true });
      this.sweepTarballs();
    }
  }

  private async installFrom(spec: string, options: { integrity?: string }, staging: string): Promise<InstalledPlugin> {
    const path = resolve(spec);
    refuseWhatIsNoPackage(spec, path);
    let source: InstalledPlugin["source"] = "npm";
    let target = spec;
    let integrity: string | null = null;
    if (existsSync(path) && statSync(path).isDirectory()) {
      if (!existsSync(join(path, "package.json")))
        throw new SwitchyardError("invalid_input", `${path} has no package.json, so it is not a plugin folder.`);
      source = "folder";
      target = await this.pack(path, staging);
    } else if (existsSync(path) && /\.(tgz|tar\.gz)$/.test(path)) {
      source = "tarball";
      target = path;
    } else if (options.integrity !== undefined) {
      throw new SwitchyardError(
        "invalid_input",
        "--integrity applies to tarballs (and packed folders); npm checks registry packages itself.",
      );
    }
    if (source !== "npm") {
      if (options.integrity !== undefined) {
        const algorithm = options.integrity.split("-")[0] as "sha512" | "sha256" | "sha384";
        if (!["sha512", "sha256", "sha384"].includes(algorithm))
          throw new SwitchyardError(
            "invalid_input",
            `Integrity "${options.integrity}" is not an SRI hash (sha512-…, sha384-… or sha256-…).`,
          );
        const actual = await sri(target, algorithm);
        if (actual !== options.integrity) {
          throw new SwitchyardError(
            "invalid_input",
            `Integrity check failed for ${spec}: expected ${options.integrity}, got ${actual}. Nothing was installed.`,
            { expected: options.integrity, actual },
          );
        }
        integrity = actual;
      } else {
        integrity = await sri(target, "sha512");
      }
      target = this.keepTarball(target, integrity);
    }
    const before = new Set(Object.keys(this.dependencies()));
    // Peers (the sdk) come from the host, never from the registry. Scripts off: see the class.
    await this.npm(["install", "--ignore-scripts", "--legacy-peer-deps", "--omit=dev", "--no-package-lock", target]);
    const name = this.installedName(target, source, before);
    const installScripts = await this.allowedInstallScripts(name);
    await this.runAllowedInstallScripts();
    const record = await this.check(name);
    if (record === null || record.status === "refused") {
      await this.uninstall(name);
      throw new SwitchyardError(
        "plugin_invalid",
        record?.refusal?.message ??
          `The installed package ${name} is not a Switchyard plugin (no "switchyard" manifest). It was removed again.`,
        { plugin: name },
      );
    }
    this.logger.info("plugin installed", { plugin: name, source, integrity, installScripts });
    return { name, version: record.version, drivers: record.drivers, source, integrity, installScripts };
  }

  /**
   * The packages whose install scripts may run for `name`, from its manifest alone (no plugin
   * code runs to decide): none when the manifest does not name any. A package whose manifest is
   * refused, or that names a package it does not depend on, is removed again.
   */
  private async allowedInstallScripts(name: string): Promise<string[]> {
    const host = new PluginHost(
      { builtinDir: null, managedDir: this.managedDir, configEntries: [], configBaseDir: this.managedDir },
      this.logger,
    );
    const verdict = host.manifestOf(name);
    if (verdict === null || "refusal" in verdict) {
      await this.uninstall(name);
      throw new SwitchyardError(
        "plugin_invalid",
        `${verdict?.refusal.message ?? `The installed package ${name} is not a Switchyard plugin (no "switchyard" manifest).`} It was removed again; none of its scripts ran.`,
        { plugin: name, ...(verdict !== null ? { code: verdict.refusal.code } : {}) },
      );
    }
    const wanted = verdict.manifest.installScripts ?? [];
    const stray = this.strayInstallScript(name, wanted);
    if (stray !== undefined) {
      await this.uninstall(name);
      throw new SwitchyardError(
        "plugin_invalid",
        `Plugin "${name}" names "${stray}" in switchyard.installScripts, which is neither the plugin nor one of its dependencies, so its scripts are not the plugin's to allow. It was removed again; none of its scripts ran.`,
        { plugin: name, installScript: stray },
      );
    }
    return [...new Set(wanted)];
  }

  /** What a managed plugin's manifest allows to run on install; empty when it allows nothing or is refused. */
  private allowedBy(host: PluginHost, name: string): string[] {
    const verdict = host.manifestOf(name);
    if (verdict === null || "refusal" in verdict) return [];
    const wanted = verdict.manifest.installScripts ?? [];
    return wanted.length === 0 || this.strayInstallScript(name, wanted) !== undefined ? [] : [...wanted];
  }

  /** A package `installScripts` names that is neither the plugin nor one of its dependencies. */
  private strayInstallScript(name: string, wanted: readonly string[]): string | undefined {
    const pkg = JSON.parse(readFileSync(join(this.managedDir, "node_modules", name, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const own = new Set([name, ...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]);
    return wanted.find((candidate) => !own.has(candidate));
  }

  /**
   * Runs the install scripts every managed plugin's manifest allows. Again after each install and
   * removal: npm re-extracts the directory's packages when it changes it, which drops what their
   * scripts built, and with scripts off it would not build them again itself.
   */
  private async runAllowedInstallScripts(): Promise<void> {
    const host = new PluginHost(
      { builtinDir: null, managedDir: this.managedDir, configEntries: [], configBaseDir: this.managedDir },
      this.logger,
    );
    const allowed = [...new Set(Object.keys(this.dependencies()).flatMap((name) => this.allowedBy(host, name)))];
    if (allowed.length > 0) await this.npm(["rebuild", ...allowed]);
  }

  private async uninstall(name: string): Promise<void> {
    await this.npm(["uninstall", "--ignore-scripts", "--legacy-peer-deps", "--no-package-lock", name]).catch(
      () => undefined,
    );
    await this.runAllowedInstallScripts().catch(() => undefined);
  }

  /** The package name npm installed `target` under. */
  private installedName(target: string, source: InstalledPlugin["source"], before: ReadonlySet<string>): string {
    const dependencies = this.dependencies();
    if (source !== "npm") {
      // A kept tarball is referenced by exactly one dependency, also when it replaced an older one.
      const file = basename(target);
      const owner = Object.entries(dependencies).find(([, spec]) => basename(spec) === file);
      if (owner !== undefined) return owner[0];
    }
    const added = Object.keys(dependencies).find((name) => !before.has(name));
    if (added !== undefined) return added;
    return target.startsWith("@") ? `@${target.slice(1).split("@")[0]}` : target.split("@")[0]!;
  }

  private dependencies(): Record<string, string> {
    try {
      return (
        (
          JSON.parse(readFileSync(join(this.managedDir, "package.json"), "utf8")) as {
            dependencies?: Record<string, string>;
          }
        ).dependencies ?? {}
      );
    } catch {
      return {};
    }
  }

  /** Loads the managed plugins (and only them) to see what the host would make of one. */
  private async check(name: string): Promise<PluginRecord | null> {
    const host = new PluginHost(
      { builtinDir: null, managedDir: this.managedDir, configEntries: [], configBaseDir: this.managedDir },
      this.logger,
    );
    await host.load();
    return host.list().find((record) => record.name === name) ?? null;
  }

  /** Removes a managed plugin. */
  async remove(name: string): Promise<void> {
    if (!(name in this.dependencies()))
      throw new SwitchyardError(
        "not_found",
        `Plugin ${name} is not installed in ${this.managedDir}. Run \`switchyard plugins list\` to see installed plugins.`,
      );
    await this.npm(["uninstall", "--ignore-scripts", "--legacy-peer-deps", "--no-package-lock", name]);
    const leftover = join(this.managedDir, "node_modules", name);
    if (existsSync(leftover)) rmSync(leftover, { recursive: true, force: true });
    this.sweepTarballs();
    await this.runAllowedInstallScripts();
  }
}
