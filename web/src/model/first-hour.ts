import type { Project, ProviderDoctor, ProviderFinding } from "../api/types.js";
import { startableProjects } from "./new-thread.js";

/** The three steps of the first hour, each done or not. */
export interface FirstHourSteps {
  readonly project: boolean;
  /** Null while the doctor has not answered. */
  readonly provider: boolean | null;
  readonly thread: boolean;
}

export function firstHourSteps(
  projects: readonly Project[],
  doctor: ProviderDoctor | null,
  threadCount: number,
): FirstHourSteps {
  return {
    project: startableProjects(projects).length > 0,
    provider: doctor === null ? null : doctor.ready,
    thread: threadCount > 0,
  };
}

/** What a provider's badge says, from doctor's verdict. */
export function findingLabel(
  finding: ProviderFinding,
): "ready" | "ready, with a warning" | "disabled" | "checking" | "needs setup" {
  if (finding.checking) return "checking";
  if (!finding.enabled) return "disabled";
  if (!finding.canRunWork) return "needs setup";
  return finding.status === "warn" ? "ready, with a warning" : "ready";
}

/**
 * The config lines that add an instance of a driver (`providers` in config.json), as the
 * person would paste them: the id defaults to the driver's name, made unique among the ids
 * already configured.
 */
export function providerConfigSnippet(driver: string, takenIds: readonly string[]): string {
  let id = driver;
  for (let n = 2; takenIds.includes(id); n++) id = `${driver}-${n}`;
  return JSON.stringify({ providers: [{ id, driver }] }, null, 2);
}
