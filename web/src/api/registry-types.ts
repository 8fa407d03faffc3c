/**
 * The ACP Registry plugin's answers (`/api/v1/plugins/acp-registry/…`), read by the Registry page.
 * Written here because a plugin's routes declare request schemas only: the OpenAPI document
 * gives their answers no shape (`unknown` in generated/switchyard-api.ts). Only the fields the
 * page uses.
 */

/** One agent of GET /plugins/acp-registry/agents (the ACP Registry plugin's search). */
export interface RegistryAgent {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** The registry's current version. */
  readonly version: string;
  /** Versions installed on this machine. */
  readonly installedVersions: readonly string[];
  /** The registry's current version is installed and runnable. */
  readonly installed: boolean;
  /** Platforms with a binary build (`linux-x86_64`…). */
  readonly platforms: readonly string[];
  /** Package distributions that run anywhere their runner is (`npx`, `uvx`). */
  readonly packages: readonly string[];
  readonly available: boolean;
  readonly distribution: string | null;
  readonly unavailableReason: "unsupported" | "missing_runner" | null;
}

export interface RegistrySearch {
  readonly query: string;
  readonly agents: readonly RegistryAgent[];
  readonly total: number;
  readonly hiddenUnavailable: number;
  readonly index: { readonly url: string; readonly stale: boolean; readonly fetchedAt: string };
}

/** One installed agent version (GET /plugins/acp-registry/installed). */
export interface InstalledRegistryAgent {
  readonly agentId: string;
  readonly version: string;
  readonly distribution: string;
  readonly platform: string | null;
  readonly integrity: string;
  readonly installedAt: string;
}

export type InstallPhase = "waiting" | "download" | "verify" | "extract" | "install_package" | "done" | "failed";

/** An install job (POST /plugins/acp-registry/install-jobs, GET …/install-jobs/{jobId}). */
export interface InstallJob {
  readonly jobId: string;
  readonly agentId: string;
  readonly version: string;
  readonly phase: InstallPhase;
  readonly receivedBytes: number;
  readonly totalBytes: number | null;
  readonly percent: number | null;
  readonly revision: number;
  readonly alreadyInstalled: boolean | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}
