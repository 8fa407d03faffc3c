import type { PluginRecord } from "../../plugin-host/ports.js";
import type { DoctorFinding } from "./doctor-report.js";

// What doctor says about provider instances is shared with the API (GET /providers/doctor).
export { providerFindings } from "../../services/provider-findings.js";

/**
 * Doctor's checks of plugins and provider instances, from what the plugin host loaded and an
 * `inspect` probe of every instance (the probe `switchyard providers` runs: it finds the
 * harness and reads its version and login files, and starts no session and writes nothing into
 * a harness's home). Shared code reads only the probe's data; nothing here knows a provider.
 * The provider findings live in services/provider-findings.ts, which the API uses too.
 */

/** A refused plugin fails when the user asked for it (config or `plugin install`); a refused built-in only warns. */
export function pluginFindings(plugins: readonly PluginRecord[]): DoctorFinding[] {
  return plugins.map((plugin): DoctorFinding => {
    const subject = `plugin ${plugin.name}`;
    const data = {
      name: plugin.name,
      version: plugin.version,
      source: plugin.source,
      status: plugin.status,
      drivers: plugin.drivers,
      dir: plugin.dir,
    };
    if (plugin.status === "refused") {
      return {
        area: "plugin",
        status: plugin.source === "builtin" ? "warn" : "fail",
        subject,
        detail: plugin.refusal?.message ?? "refused",
        data: { ...data, refusal: plugin.refusal },
      };
    }
    const drivers = plugin.drivers.length > 0 ? `drivers ${plugin.drivers.join(", ")}` : "no drivers";
    return {
      area: "plugin",
      status: plugin.warning !== null ? "warn" : "ok",
      subject,
      detail: `${plugin.version ?? "?"} (${plugin.source}): ${drivers}${plugin.warning !== null ? `; ${plugin.warning}` : ""}`,
      data,
    };
  });
}
