import { z } from "zod";
import semver from "semver";
import type { PluginManifest } from "../spec/index.js";
import { HOST_COMMAND_NAMES } from "./host-command-names.js";

const NAME = /^[a-z][a-z0-9-]*$/;
/** An npm package name, optionally scoped (`@scope/name`). */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** A command group as the manifest lists it: a name, or a name with a line for help. */
const ManifestCommandSchema = z.union([
  z.string().regex(NAME, "command names are lowercase [a-z0-9-], starting with a letter"),
  z
    .object({
      name: z.string().regex(NAME, "command names are lowercase [a-z0-9-], starting with a letter"),
      description: z.string().min(1),
    })
    .strict(),
]);

/** The `switchyard` field of a plugin's package.json. */
export const PluginManifestSchema = z
  .object({
    specVersion: z.string().min(1),
    drivers: z.array(z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "driver kinds are lowercase [a-z0-9-]")),
    commands: z.array(ManifestCommandSchema).optional(),
    routes: z.boolean().optional(),
    entry: z.string().min(1),
    installScripts: z
      .array(
        z
          .string()
          .regex(PACKAGE_NAME, "installScripts lists npm package names (the plugin's own or its dependencies')"),
      )
      .max(20)
      .optional(),
  })
  .strict()
  .refine(
    (manifest) => manifest.drivers.length > 0 || (manifest.commands?.length ?? 0) > 0 || manifest.routes === true,
    {
      message: "a plugin must provide at least one driver, command or API routes",
      path: ["drivers"],
    },
  );

/** The parts of package.json the host reads. */
export const PluginPackageSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  switchyard: z.unknown(),
});

/** Why a manifest is refused, before any code runs. */
export type ManifestProblem =
  | { readonly code: "manifest_invalid"; readonly message: string }
  | { readonly code: "spec_incompatible"; readonly message: string; readonly wantedRange: string };

/** A command group a manifest lists, with its line for help when it gives one. */
export interface ManifestCommand {
  readonly name: string;
  readonly description: string | null;
}

/** The manifest's command groups, names and descriptions apart. */
export function manifestCommands(manifest: PluginManifest): ManifestCommand[] {
  return (manifest.commands ?? []).map((entry) =>
    typeof entry === "string"
      ? { name: entry, description: null }
      : { name: entry.name, description: entry.description },
  );
}

/**
 * True when every version `range` admits has one major: `^1.0.0`, `~1.2`, `>=1.1 <2`, `1.x`.
 * A range like `*`, `>=1` or `^1 || ^2` would let a plugin claim a spec major that did not
 * exist when it was written, and a new major changes the interfaces.
 */
export function pinsOneMajor(range: string): boolean {
  const lowest = semver.minVersion(range);
  if (lowest === null) return false;
  // Prereleases of the next major (`2.0.0-rc.1`) stay outside, as `<2.0.0` keeps them for npm.
  return semver.subset(range, `>=${lowest.major}.0.0-0 <${lowest.major + 1}.0.0`);
}

/**
 * Validates a manifest and checks its spec range against the host's spec version. Pure: it
 * never imports plugin code.
 */
export function checkManifest(
  raw: unknown,
  hostSpecVersion: string,
): { manifest: PluginManifest } | { problem: ManifestProblem; wantedRange: string | null } {
  const parsed = PluginManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `switchyard.${issue.path.join(".")}` : "switchyard";
    const wantedRange =
      typeof (raw as { specVersion?: unknown })?.specVersion === "string"
        ? (raw as { specVersion: string }).specVersion
        : null;
    return {
      problem: { code: "manifest_invalid", message: `package.json field ${where}: ${issue.message}` },
      wantedRange,
    };
  }
  const manifest = parsed.data;
  if (semver.validRange(manifest.specVersion) === null) {
    return {
      problem: {
        code: "manifest_invalid",
        message: `package.json field switchyard.specVersion: "${manifest.specVersion}" is not a semver range`,
      },
      wantedRange: manifest.specVersion,
    };
  }
  if (!pinsOneMajor(manifest.specVersion)) {
    return {
      problem: {
        code: "manifest_invalid",
        message: `package.json field switchyard.specVersion: "${manifest.specVersion}" spans more than one spec major; pin the major the plugin was written for (for example "^${semver.major(hostSpecVersion)}.0.0")`,
      },
      wantedRange: manifest.specVersion,
    };
  }
  const commands = manifestCommands(manifest).map((command) => command.name);
  const taken = commands.find((name) => HOST_COMMAND_NAMES.includes(name));
  if (taken !== undefined) {
    return {
      problem: {
        code: "manifest_invalid",
        message: `package.json field switchyard.commands: "${taken}" is one of switchyard's own commands; pick another name`,
      },
      wantedRange: manifest.specVersion,
    };
  }
  const repeated = commands.find((name, index) => commands.indexOf(name) !== index);
  if (repeated !== undefined) {
    return {
      problem: {
        code: "manifest_invalid",
        message: `package.json field switchyard.commands: "${repeated}" is listed twice`,
      },
      wantedRange: manifest.specVersion,
    };
  }
  if (!semver.satisfies(hostSpecVersion, manifest.specVersion)) {
    return {
      problem: {
        code: "spec_incompatible",
        message: `it supports spec ${manifest.specVersion}, which does not include this host's spec ${hostSpecVersion}`,
        wantedRange: manifest.specVersion,
      },
      wantedRange: manifest.specVersion,
    };
  }
  return { manifest };
}
