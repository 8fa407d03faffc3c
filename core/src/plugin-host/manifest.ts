import { z } from "zod";
import semver from "semver";
import type { PluginManifest } from "../spec/index.js";

/** The `switchyard` field of a plugin's package.json. */
export const PluginManifestSchema = z
  .object({
    specVersion: z.string().min(1),
    drivers: z.array(z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "driver kinds are lowercase [a-z0-9-]")).min(1),
    entry: z.string().min(1),
  })
  .strict();

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

/**
 * Validates a manifest and checks its spec range against the host's spec version. Pure: it
 * never imports plugin code.
 */
export function checkManifest(raw: unknown, hostSpecVersion: string): { manifest: PluginManifest } | { problem: ManifestProblem; wantedRange: string | null } {
  const parsed = PluginManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `switchyard.${issue.path.join(".")}` : "switchyard";
    const wantedRange = typeof (raw as { specVersion?: unknown })?.specVersion === "string" ? (raw as { specVersion: string }).specVersion : null;
    return { problem: { code: "manifest_invalid", message: `package.json field ${where}: ${issue.message}` }, wantedRange };
  }
  const manifest = parsed.data;
  if (semver.validRange(manifest.specVersion) === null) {
    return {
      problem: { code: "manifest_invalid", message: `package.json field switchyard.specVersion: "${manifest.specVersion}" is not a semver range` },
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
