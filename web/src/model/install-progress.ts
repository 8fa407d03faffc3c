import type { InstallJob, RegistryAgent } from "../api/registry-types.js";

/** Where the registry's plugin routes live, below /api/v1. */
export const REGISTRY_API = "/plugins/acp-registry";

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** What an install job is doing, in words a person reads next to its progress bar. */
export function installStatusText(job: InstallJob): string {
  switch (job.phase) {
    case "waiting":
      return "Waiting to start (another install of this agent may be running)";
    case "download":
      return job.totalBytes !== null && job.percent !== null
        ? `Downloading ${job.percent}% (${size(job.receivedBytes)} of ${size(job.totalBytes)})`
        : `Downloading (${size(job.receivedBytes)})`;
    case "verify":
      return "Checking the archive's checksum";
    case "extract":
      return "Extracting";
    case "install_package":
      return "Installing the package";
    case "done":
      return job.alreadyInstalled === true
        ? `${job.agentId} ${job.version} was already installed`
        : `Installed ${job.agentId} ${job.version}`;
    case "failed":
      return `Install failed (${job.error?.code ?? "unknown"}): ${job.error?.message ?? "no reason given"}`;
  }
}

/** Whether a job has finished, well or not. */
export function jobFinished(job: InstallJob): boolean {
  return job.phase === "done" || job.phase === "failed";
}

/** The progress bar's value: by bytes while downloading, full afterwards, none while unknown. */
export function progressValue(job: InstallJob): number | null {
  if (job.phase === "done") return 100;
  if (job.phase === "failed" || job.phase === "waiting") return null;
  return job.percent;
}

/** Where an agent can run, in words: its binary platforms and package runners. */
export function platformsText(agent: RegistryAgent): string {
  const parts = [...agent.platforms, ...agent.packages.map((kind) => `${kind} (any platform)`)];
  return parts.length === 0 ? "no distributions" : parts.join(", ");
}

/** Why an agent cannot be installed here, or null when it can. */
export function unavailableText(agent: RegistryAgent): string | null {
  if (agent.available) return null;
  return agent.unavailableReason === "missing_runner"
    ? "Needs npm or uv, which this machine lacks"
    : "No build for this machine";
}
