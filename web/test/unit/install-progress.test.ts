import { describe, expect, it } from "vitest";
import type { InstallJob, RegistryAgent } from "../../src/api/registry-types.js";
import {
  installStatusText,
  jobFinished,
  platformsText,
  progressValue,
  unavailableText,
} from "../../src/model/install-progress.js";

function job(overrides: Partial<InstallJob>): InstallJob {
  return {
    jobId: "install_1",
    agentId: "tiny",
    version: "1.0.0",
    phase: "waiting",
    receivedBytes: 0,
    totalBytes: null,
    percent: null,
    revision: 1,
    alreadyInstalled: null,
    error: null,
    ...overrides,
  };
}

describe("install progress, as the Registry page words it", () => {
  it("says how far a download is, and fills the bar by bytes", () => {
    const half = job({ phase: "download", receivedBytes: 1536, totalBytes: 3072, percent: 50 });
    expect(installStatusText(half)).toBe("Downloading 50% (1.5 kB of 3.0 kB)");
    expect(progressValue(half)).toBe(50);
    const unknownSize = job({ phase: "download", receivedBytes: 10 });
    expect(installStatusText(unknownSize)).toBe("Downloading (10 B)");
    expect(progressValue(unknownSize)).toBeNull();
  });

  it("names the typed reason of a failure and leaves the bar empty", () => {
    const failed = job({
      phase: "failed",
      error: { code: "checksum_mismatch", message: "The archive has SHA-256 b." },
    });
    expect(installStatusText(failed)).toBe("Install failed (checksum_mismatch): The archive has SHA-256 b.");
    expect(progressValue(failed)).toBeNull();
    expect(jobFinished(failed)).toBe(true);
    expect(jobFinished(job({ phase: "extract" }))).toBe(false);
  });

  it("tells an install from one that was already there", () => {
    expect(installStatusText(job({ phase: "done", alreadyInstalled: false }))).toBe("Installed tiny 1.0.0");
    expect(installStatusText(job({ phase: "done", alreadyInstalled: true }))).toBe("tiny 1.0.0 was already installed");
    expect(progressValue(job({ phase: "done" }))).toBe(100);
  });

  it("lists where an agent runs and why it cannot run here", () => {
    const agent: RegistryAgent = {
      id: "a",
      name: "A",
      description: "",
      version: "1",
      installedVersions: [],
      installed: false,
      platforms: ["linux-x86_64"],
      packages: ["npx"],
      available: false,
      distribution: null,
      unavailableReason: "missing_runner",
    };
    expect(platformsText(agent)).toBe("linux-x86_64, npx (any platform)");
    expect(unavailableText(agent)).toBe("Needs npm or uv, which this machine lacks");
    expect(unavailableText({ ...agent, available: true })).toBeNull();
    expect(platformsText({ ...agent, platforms: [], packages: [] })).toBe("no distributions");
  });
});
