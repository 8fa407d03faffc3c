import semver from "semver";
import type { HarnessReport, ProviderStatus } from "@switchyard/spec";
import type { HarnessSearch, HarnessSpec } from "./find-harness.js";
import { harnessNotFoundMessage } from "./find-harness.js";

/** How a harness version compares with what a plugin declares (see {@link HarnessSpec}). @public */
export type HarnessVersionVerdict =
  /** In `testedVersions` (or the plugin declares none). */
  | { readonly kind: "tested" }
  /** Outside `testedVersions` but not known to differ: usable, with a warning. */
  | { readonly kind: "untested"; readonly warning: string }
  /** Outside `supportedVersions`: its protocol is known to differ, so it is refused. */
  | { readonly kind: "unsupported"; readonly refusal: string }
  /** The version is not known (or not semver): nothing can be said. */
  | { readonly kind: "unknown" };

/** A version as semver, accepting what harnesses print (`2.1.332 (Claude Code)`, `v0.73.1`). */
function asSemver(version: string | undefined | null): string | null {
  if (version === undefined || version === null) return null;
  return semver.valid(version) ?? semver.valid(semver.coerce(version, { includePrerelease: true }));
}

/** Where the harness is, for a message. */
function whereFound(search: HarnessSearch): string {
  return search.found?.command ?? search.found?.packageDir ?? "the harness";
}

/**
 * Compares a harness version with the plugin's declared ranges. Prereleases count as their
 * version (`0.172.0-alpha.1` is in `>=0.171.0`).
 * @public
 */
export function harnessVersionVerdict(
  spec: HarnessSpec,
  version: string | undefined | null,
  location = "it",
): HarnessVersionVerdict {
  const parsed = asSemver(version);
  if (parsed === null) return { kind: "unknown" };
  const options = { includePrerelease: true };
  if (spec.supportedVersions !== undefined && !semver.satisfies(parsed, spec.supportedVersions.range, options)) {
    return {
      kind: "unsupported",
      refusal:
        `${spec.displayName} ${version} (${location}) is outside the versions this plugin supports (${spec.supportedVersions.range}): ${spec.supportedVersions.why} ` +
        `Install a supported one (${spec.install}${spec.option !== undefined ? `, or point the instance's ${spec.option} option at one` : ""}).`,
    };
  }
  if (spec.testedVersions !== undefined && !semver.satisfies(parsed, spec.testedVersions, options)) {
    return {
      kind: "untested",
      warning: `${spec.displayName} ${version} (${location}) is outside the versions this plugin was tested with (${spec.testedVersions}): it may work; if it misbehaves, install a tested version (${spec.install}, at a version in ${spec.testedVersions}).`,
    };
  }
  return { kind: "tested" };
}

/** What a probe reports about the search and the version it found. @public */
export function harnessReport(search: HarnessSearch, version?: string | null): HarnessReport {
  const { spec, found } = search;
  const known = version ?? found?.packageVersion ?? undefined;
  const verdict = harnessVersionVerdict(spec, known);
  return {
    displayName: spec.displayName,
    searched: search.searched,
    source: found?.source ?? null,
    location: found === null ? null : (found.command ?? found.packageDir),
    ...(found?.packageName ? { packageName: found.packageName } : {}),
    ...(known !== undefined && known !== null ? { version: known } : {}),
    ...(spec.testedVersions !== undefined ? { testedVersions: spec.testedVersions } : {}),
    inTestedRange: verdict.kind === "unknown" || spec.testedVersions === undefined ? null : verdict.kind === "tested",
    install: spec.install,
  };
}

/**
 * A probe's status with what the search and the version say added: where the harness is and
 * how it was looked for (`harness`), a warning for an untested version, and, for a version
 * whose protocol is known to differ, the refusal (`executable: false`, with why). A probe
 * builds its status as before and passes it through this last.
 * @public
 */
export function withHarnessVerdict(search: HarnessSearch, status: ProviderStatus): ProviderStatus {
  const version = status.version ?? search.found?.packageVersion ?? undefined;
  const harness = harnessReport(search, version);
  if (search.found === null) return { ...status, harness };
  const verdict = harnessVersionVerdict(search.spec, version, whereFound(search));
  if (verdict.kind === "unsupported") return { ...status, executable: false, message: verdict.refusal, harness };
  if (verdict.kind === "untested")
    return { ...status, warnings: [...(status.warnings ?? []), verdict.warning], harness };
  return { ...status, harness };
}

/** The status of a harness that was not found: not installed, with what was looked for and how to install it. @public */
export function harnessNotFoundStatus(search: HarnessSearch, models: ProviderStatus["models"] = []): ProviderStatus {
  return {
    installed: false,
    executable: false,
    authenticated: false,
    models,
    message: harnessNotFoundMessage(search),
    harness: harnessReport(search),
  };
}
