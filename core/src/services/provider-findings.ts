import type { ProviderAvailability } from "../engine/provider-catalog.js";
import type { HarnessReport } from "../spec/index.js";

/**
 * What doctor says about each provider instance, from its availability (an `inspect` probe for
 * `switchyard doctor`, the provider snapshot for the API's `GET /providers/doctor`): where its
 * harness was found, whether it is logged in, how it reaches Switchyard's tools, and, when it
 * cannot run work, why and what fixes it. Shared code reads only the probe's data; nothing here
 * knows a provider.
 */

/** How one check came out. A `fail` is something configured that cannot work; `warn` works but is worth knowing. */
export type FindingStatus = "ok" | "info" | "warn" | "fail";

/** Doctor's finding about one provider instance. */
export interface ProviderFinding {
  readonly area: "provider";
  readonly status: FindingStatus;
  /** `provider <instance id>`. */
  readonly subject: string;
  /** What was found, in words a person can act on (a `fail` says what to do). */
  readonly detail: string;
  readonly data: ProviderFindingData;
}

/** The same finding as data (`doctor --json`, the API). A type, not an interface, so it is a record of values too. */
export type ProviderFindingData = {
  readonly id: string;
  readonly driver: string;
  readonly enabled: boolean;
  readonly available: boolean;
  /** Why it cannot run work, in words that say what to do; null when it can. */
  readonly reason: string | null;
  readonly version: string | null;
  readonly authenticated: boolean | "unknown" | null;
  readonly harness: HarnessReport | null;
  /** The command that installs its harness, when the harness was not found (null when the plugin does not say). */
  readonly install: string | null;
  readonly mcp: "http" | "stdio" | "none";
  readonly warnings: readonly string[];
};

/** How the harness reaches Switchyard's tools, from the instance's capabilities. */
function mcpInjection(availability: ProviderAvailability): "http" | "stdio" | "none" {
  const { mcp } = availability.capabilities.tools;
  return mcp.http ? "http" : mcp.stdio ? "stdio" : "none";
}

/** Where a harness was found, for people: `Codex 0.171.0, \`codex\` on PATH (/usr/bin/codex)`. */
function harnessLine(harness: HarnessReport | undefined, version: string | undefined): string | null {
  if (harness === undefined) return version !== undefined ? `version ${version}` : null;
  if (harness.source === null) return null;
  const lookup = harness.searched.at(-1);
  const where =
    lookup !== undefined
      ? `${lookup.what}${lookup.found !== null && !lookup.what.includes(lookup.found) ? ` (${lookup.found})` : ""}`
      : (harness.location ?? "");
  const tested =
    harness.testedVersions === undefined
      ? ""
      : harness.inTestedRange === true
        ? `, in the tested range ${harness.testedVersions}`
        : harness.inTestedRange === false
          ? `, outside the tested range ${harness.testedVersions}`
          : `, tested with ${harness.testedVersions}`;
  return `${harness.displayName} ${harness.version ?? version ?? "(version unknown)"} from ${where}${tested}`;
}

/** The install command, for a harness that was looked for and not found (or reported not installed). */
function installCommand(availability: ProviderAvailability): string | null {
  const harness = availability.status?.harness;
  if (harness === undefined) return null;
  return harness.source === null || availability.status?.installed === false ? harness.install : null;
}

export function providerFindings(availabilities: readonly ProviderAvailability[]): ProviderFinding[] {
  return availabilities.map((availability): ProviderFinding => {
    const subject = `provider ${availability.instanceId}`;
    const status = availability.status;
    const harness = status?.harness;
    const mcp = mcpInjection(availability);
    const warnings = status?.warnings ?? [];
    const data: ProviderFindingData = {
      id: availability.instanceId,
      driver: availability.driver,
      enabled: availability.enabled,
      available: availability.available,
      reason: availability.reason,
      version: status?.version ?? harness?.version ?? null,
      authenticated: status?.authenticated ?? null,
      harness: harness ?? null,
      install: installCommand(availability),
      mcp,
      warnings,
    };
    if (!availability.enabled)
      return {
        area: "provider",
        status: "info",
        subject,
        detail: `${availability.driver}: disabled in the config`,
        data,
      };
    if (!availability.available)
      return {
        area: "provider",
        status: "fail",
        subject,
        detail: `${availability.driver}: ${availability.reason ?? "unavailable"}`,
        data,
      };
    const parts = [
      harnessLine(harness, status?.version),
      `authenticated: ${status?.authenticated === true ? "yes" : status?.authenticated === false ? "no" : "unknown until a session opens"}`,
      mcp === "none"
        ? "MCP: none (it cannot call Switchyard's tools; it can still take delegated work)"
        : `MCP: ${mcp === "http" ? "over HTTP" : "over stdio (switchyard mcp-bridge)"}`,
      ...warnings.map((warning) => `warning: ${warning}`),
    ].filter((part): part is string => part !== null);
    return {
      area: "provider",
      status: warnings.length > 0 || mcp === "none" ? "warn" : "ok",
      subject,
      detail: `${availability.driver}: ${parts.join("; ")}`,
      data,
    };
  });
}
