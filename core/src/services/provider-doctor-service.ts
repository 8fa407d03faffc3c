import { inject, injectable } from "tsyringe";
import { type SwitchyardPaths, PathsToken } from "../config/paths.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../engine/provider-catalog.js";
import type { Caller } from "./caller.js";
import { providerFindings } from "./provider-findings.js";
import { token } from "../util/di-token.js";

/** What the plugin host offers here: the driver kinds a config may name. */
export interface DriverKinds {
  driverKinds(): string[];
}

/** DI token: the driver kinds (the plugin host, which the composition root hands in). */
export const DriverKindsToken = token<DriverKinds>("DriverKinds");

/**
 * `switchyard doctor`'s provider findings for a person's client (the web UI's first-hour
 * screen): each configured instance, whether it can run work, and when not, why and what fixes
 * it (the install command of a harness that was not found, the login or option its reason
 * names), with the config file that lists instances and the drivers it may name. Read from the
 * provider snapshot, so it never waits on a harness and never changes anything.
 */
@injectable()
export class ProviderDoctorService {
  constructor(
    @inject(ProviderCatalogToken) private readonly catalog: ProviderCatalog,
    @inject(DriverKindsToken) private readonly plugins: DriverKinds,
    @inject(PathsToken) private readonly paths: SwitchyardPaths,
  ) {}

  /**
   * The findings, for a client (a token or a web UI session): they name files and executables
   * of this machine, which an agent or another environment has no use for.
   */
  async describe(caller: Caller) {
    if (caller.kind !== "client") {
      throw new OrchestratorFailure(
        "capability_denied",
        `The provider doctor is for a person's client (a token from switchyard token issue, or the web UI), not ${caller.kind === "agent" ? "an agent" : "a linked environment"}: it names this machine's files. Call orchestrator_capabilities for which providers can run work.`,
        { callerKind: caller.kind, reason: "clients_only" },
      );
    }
    const availabilities = await this.catalog.snapshotAll();
    const findings = providerFindings(availabilities);
    return {
      configFile: this.paths.configFile,
      drivers: [...this.plugins.driverKinds()].sort(),
      ready: availabilities.some((availability) => availability.available),
      providers: availabilities.map((availability, index) => {
        const finding = findings[index]!;
        return {
          providerInstanceId: availability.instanceId,
          driverKind: availability.driver,
          displayName: availability.displayName,
          status: finding.status,
          detail: finding.detail,
          canRunWork: availability.available,
          checking: availability.state === "checking",
          enabled: availability.enabled,
          problem: availability.reason,
          install: finding.data.install,
          version: finding.data.version,
          authenticated: finding.data.authenticated,
          mcp: finding.data.mcp,
          warnings: [...finding.data.warnings],
          checkedAt: availability.checkedAt,
        };
      }),
    };
  }
}
