import type { ProviderAvailability } from "../../engine/provider-catalog.js";
import type { PluginRecord } from "../../plugin-host/ports.js";
import type { HarnessReport } from "../../spec/index.js";
import type { DoctorFinding } from "./doctor-report.js";

/**
 * Doctor's checks of plugins and provider instances, from what the plugin host loaded and an
 * `inspect` probe of every instance (the probe `switchyard providers` runs: it finds the
 * harness and reads its version and login files, and starts no session and writes nothing into
 * a harness's home). Shared code reads only the probe's data; nothing here knows a provider.
 */

/** A refused plugin fails when the user asked for it (config or `plugin install`); a refused built-in only warns. */
export function pluginFindings(plugins: readonly PluginRecord[]): DoctorFinding[] {
  return plugins.map((plugin): DoctorFinding => {
    const subject = `plugin ${plugin.name}`;
    const data = { name: plugin.name, version: plugin.version, source: plugin.source, status: plugin.status, drivers: plugin.drivers, dir: plugin.dir };
    if (plugin.status === "refused") {
      return { area: "plugin", status: plugin.source === "builtin" ? "warn" : "fail", subject, detail: plugin.refusal?.message ?? "refused", data: { ...data, refusal: plugin.refusal } };
    }
    const drivers = plugin.drivers.length > 0 ? `drivers ${plugin.drivers.join(", ")}` : "no drivers";
    return { area: "plugin", status: plugin.warning !== null ? "warn" : "ok", subject, detail: `${plugin.version ?? "?"} (${plugin.source}): ${drivers}${plugin.warning !== null ? `; ${plugin.warning}` : ""}`, data };
  });
}

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
  const where = lookup !== undefined ? `${lookup.what}${lookup.found !== null && !lookup.what.includes(lookup.found) ? ` (${lookup.found})` : ""}` : (harness.location ?? "");
  const tested = harness.testedVersions === undefined ? "" : harness.inTestedRange === true ? `, in the tested range ${harness.testedVersions}` : harness.inTestedRange === false ? `, outside the tested range ${harness.testedVersions}` : `, tested with ${harness.testedVersions}`;
  return `${harness.displayName} ${harness.version ?? version ?? "(version unknown)"} from ${where}${tested}`;
}

export function providerFindings(availabilities: readonly ProviderAvailability[]): DoctorFinding[] {
  return availabilities.map((availability): DoctorFinding => {
    const subject = `provider ${availability.instanceId}`;
    const status = availability.status;
    const harness = status?.harness;
    const mcp = mcpInjection(availability);
    const warnings = status?.warnings ?? [];
    const data = {
      id: availability.instanceId,
      driver: availability.driver,
      enabled: availability.enabled,
      available: availability.available,
      reason: availability.reason,
      version: status?.version ?? harness?.version ?? null,
      authenticated: status?.authenticated ?? null,
      harness: harness ?? null,
      mcp,
      warnings,
    };
    if (!availability.enabled) return { area: "provider", status: "info", subject, detail: `${availability.driver}: disabled in the config`, data };
    if (!availability.available) return { area: "provider", status: "fail", subject, detail: `${availability.driver}: ${availability.reason ?? "unavailable"}`, data };
    const parts = [
      harnessLine(harness, status?.version),
      `authenticated: ${status?.authenticated === true ? "yes" : status?.authenticated === false ? "no" : "unknown until a session opens"}`,
      mcp === "none" ? "MCP: none (it cannot call Switchyard's tools; it can still take delegated work)" : `MCP: ${mcp === "http" ? "over HTTP" : "over stdio (switchyard mcp-bridge)"}`,
      ...warnings.map((warning) => `warning: ${warning}`),
    ].filter((part): part is string => part !== null);
    return { area: "provider", status: warnings.length > 0 || mcp === "none" ? "warn" : "ok", subject, detail: `${availability.driver}: ${parts.join("; ")}`, data };
  });
}
