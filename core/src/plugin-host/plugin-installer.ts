import { createHash } from "node:crypto";
import { createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { execa } from "execa";
import { SwitchyardError } from "../spec/index.js";
import type { Logger } from "../logging/logger.js";
import { PluginHost, type PluginRecord } from "./plugin-host.js";

/** What was installed. */
export interface InstalledPlugin {
  readonly name: string;
  readonly version: string | null;
  readonly drivers: readonly string[];
  readonly source: "folder" | "tarball" | "npm";
  /** The tarball's SRI hash (sha512), as verified or computed. */
  readonly integrity: string | null;
}

async function sri(file: string, algorithm: "sha512" | "sha256" | "sha384"): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `${algorithm}-${hash.digest("base64")}`;
}

function npmEnv(): Record<string, string> {
  return { npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
}

/**
 * Installs plugins into the managed directory (`$SWITCHYARD_HOME/plugins`) with npm: an npm
 * spec, a tarball (checked against an SRI integrity when given) or a folder (packed first, so
 * the install is a copy, not a link). A plugin the host would refuse is removed again, with
 * the refusal as the error.
 */
export class PluginInstaller {
  constructor(
    private readonly managedDir: string,
    private readonly logger: Logger,
  ) {}

  private ensureManagedDir(): void {
    mkdirSync(this.managedDir, { recursive: true });
    const manifest = join(this.managedDir, "package.json");
    if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: "switchyard-managed-plugins", private: true, dependencies: {} }, null, 2)}\n`);
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
      const detail = String(result.stderr).split("\n").filter((line) => /ERR!/.test(line)).slice(0, 6).join("\n") || String(result.stderr).slice(-800);
      throw new SwitchyardError("provider_error", `npm ${args[0]} failed:\n${detail}`, { exitCode: result.exitCode });
    }
  }

  /** Packs a folder into a tarball in a temporary directory. */
  private async pack(folder: string): Promise<string> {
    const out = mkdtempSync(join(tmpdir(), "switchyard-pack-"));
    const result = await execa("npm", ["pack", folder, "--pack-destination", out, "--json"], { env: npmEnv(), reject: false, stdin: "ignore" });
    if (result.exitCode !== 0) throw new SwitchyardError("invalid_input", `npm pack ${folder} failed: ${String(result.stderr).slice(-600)}`);
    const file = readdirSync(out).find((f) => f.endsWith(".tgz"));
    if (file === undefined) throw new SwitchyardError("internal", `npm pack ${folder} produced no tarball`);
    return join(out, file);
  }

  /** Installs from an npm spec, a tarball path or a folder path. */
  async install(spec: string, options: { integrity?: string } = {}): Promise<InstalledPlugin> {
    this.ensureManagedDir();
    const path = resolve(spec);
    let source: InstalledPlugin["source"] = "npm";
    let target = spec;
    let integrity: string | null = null;
    if (existsSync(path) && statSync(path).isDirectory()) {
      if (!existsSync(join(path, "package.json"))) throw new SwitchyardError("invalid_input", `${path} has no package.json, so it is not a plugin folder.`);
      source = "folder";
      target = await this.pack(path);
    } else if (existsSync(path) && /\.(tgz|tar\.gz)$/.test(path)) {
      source = "tarball";
      target = path;
    } else if (options.integrity !== undefined) {
      throw new SwitchyardError("invalid_input", "--integrity applies to tarballs (and packed folders); npm checks registry packages itself.");
    }
    if (source !== "npm") {
      if (options.integrity !== undefined) {
        const algorithm = options.integrity.split("-")[0] as "sha512" | "sha256" | "sha384";
        if (!["sha512", "sha256", "sha384"].includes(algorithm)) throw new SwitchyardError("invalid_input", `Integrity "${options.integrity}" is not an SRI hash (sha512-…, sha384-… or sha256-…).`);
        const actual = await sri(target, algorithm);
        if (actual !== options.integrity) {
          throw new SwitchyardError("invalid_input", `Integrity check failed for ${spec}: expected ${options.integrity}, got ${actual}. Nothing was installed.`, { expected: options.integrity, actual });
        }
        integrity = actual;
      } else {
        integrity = await sri(target, "sha512");
      }
    }
    const before = new Set(Object.keys(this.dependencies()));
    // Peers (the sdk) come from the host, never from the registry.
    await this.npm(["install", "--legacy-peer-deps", "--omit=dev", "--no-package-lock", target]);
    const added = Object.keys(this.dependencies()).filter((name) => !before.has(name));
    const name = added[0] ?? this.nameOf(target, source);
    const record = await this.check(name);
    if (record === null || record.status === "refused") {
      await this.npm(["uninstall", "--legacy-peer-deps", "--no-package-lock", name]).catch(() => undefined);
      throw new SwitchyardError("plugin_invalid", record?.refusal?.message ?? `The installed package ${name} is not a Switchyard plugin (no "switchyard" manifest). It was removed again.`, { plugin: name });
    }
    this.logger.info("plugin installed", { plugin: name, source, integrity });
    return { name, version: record.version, drivers: record.drivers, source, integrity };
  }

  private nameOf(target: string, source: InstalledPlugin["source"]): string {
    if (source === "npm") return target.startsWith("@") ? `@${target.slice(1).split("@")[0]}` : target.split("@")[0]!;
    return target;
  }

  private dependencies(): Record<string, string> {
    try {
      return (JSON.parse(readFileSync(join(this.managedDir, "package.json"), "utf8")) as { dependencies?: Record<string, string> }).dependencies ?? {};
    } catch {
      return {};
    }
  }

  /** Loads the managed plugins (and only them) to see what the host would make of one. */
  private async check(name: string): Promise<PluginRecord | null> {
    const host = new PluginHost({ builtinDir: null, managedDir: this.managedDir, configEntries: [], configBaseDir: this.managedDir }, this.logger);
    await host.load();
    return host.list().find((record) => record.name === name) ?? null;
  }

  /** Removes a managed plugin. */
  async remove(name: string): Promise<void> {
    if (!(name in this.dependencies())) throw new SwitchyardError("not_found", `Plugin ${name} is not installed in ${this.managedDir}. Run \`switchyard plugins list\` to see installed plugins.`);
    await this.npm(["uninstall", "--legacy-peer-deps", "--no-package-lock", name]);
    const leftover = join(this.managedDir, "node_modules", name);
    if (existsSync(leftover)) rmSync(leftover, { recursive: true, force: true });
  }
}
