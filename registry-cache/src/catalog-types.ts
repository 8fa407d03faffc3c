import type { DistributionKind, RunnerName } from "./distribution.js";
import type { RegistryErrorReason } from "./errors.js";
import type { FetchLike } from "./fetch-like.js";
import type { RegistryLogger } from "./logger.js";
import type { PlatformKey } from "./platform.js";
import type { ProgressListener } from "./progress.js";
import type { Integrity } from "./receipts.js";
import type { RegistryAgent } from "./registry-schema.js";
import type { ProcessEnv } from "./runner-lookup.js";

/** The public ACP Registry index. */
export const DEFAULT_REGISTRY_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";

/** Sizes and durations; every one has a default (see {@link DEFAULT_CATALOG_LIMITS}). */
export interface RegistryCatalogLimits {
  /** Largest accepted index body. */
  readonly maxIndexBytes: number;
  readonly indexTimeoutMs: number;
  /** How long a fetched index is reused before the next network refresh. */
  readonly indexTtlMs: number;
  readonly maxArchiveBytes: number;
  /** Sum of the uncompressed sizes of all archive entries. */
  readonly maxExtractedBytes: number;
  readonly maxArchiveEntries: number;
  readonly downloadTimeoutMs: number;
  readonly packageInstallTimeoutMs: number;
  /** An install lock untouched for this long is taken over (holders refresh it continuously). */
  readonly lockStaleMs: number;
  /** How long `prepare` waits for another install of the same agent. */
  readonly lockTimeoutMs: number;
  /** After `prepare`, `uninstall` of that agent is refused this long: a session is about to start. */
  readonly postPrepareReservationMs: number;
}

export const DEFAULT_CATALOG_LIMITS: RegistryCatalogLimits = {
  maxIndexBytes: 1024 * 1024,
  indexTimeoutMs: 30_000,
  indexTtlMs: 15 * 60_000,
  maxArchiveBytes: 1024 * 1024 * 1024,
  maxExtractedBytes: 4 * 1024 * 1024 * 1024,
  maxArchiveEntries: 200_000,
  downloadTimeoutMs: 20 * 60_000,
  packageInstallTimeoutMs: 10 * 60_000,
  lockStaleMs: 2 * 60_000,
  lockTimeoutMs: 30 * 60_000,
  postPrepareReservationMs: 30_000,
};

/** Answers whether a running provider instance currently uses an agent. */
export type InUseCheck = (agentId: string) => boolean | Promise<boolean>;

export interface RegistryCatalogOptions {
  /** Root of the cache (e.g. `$SWITCHYARD_HOME/acp-registry`). Created on first write. */
  readonly cacheDir: string;
  /** Index URL; https, or http for 127.0.0.1/localhost. Defaults to {@link DEFAULT_REGISTRY_URL}. */
  readonly registryUrl?: string;
  /** Registry platform key; defaults to this machine's. `null` means "no binaries here". */
  readonly platform?: PlatformKey | null;
  /** Defaults to the global `fetch`. */
  readonly fetch?: FetchLike;
  readonly logger?: RegistryLogger;
  /** npm executable (name on PATH or path). Default `npm`. */
  readonly npmCommand?: string;
  /** uv executable (name on PATH or path). Default `uv`. */
  readonly uvCommand?: string;
  /**
   * Install npx agents into this npm prefix instead of npm's global prefix (which is used when
   * writable, else `<cacheDir>/npm-global`).
   */
  readonly npmPrefix?: string;
  /** Environment for runner lookup and for npm/uv (registry config, proxies). Default `process.env`. */
  readonly env?: ProcessEnv;
  /** Consulted by `uninstall`; a per-call `isInUse` takes precedence. */
  readonly isInUse?: InUseCheck;
  readonly limits?: Partial<RegistryCatalogLimits>;
}

/** Where the index in use came from. */
export interface IndexInfo {
  readonly url: string;
  readonly source: "network" | "cache";
  /** True when the network refresh failed and the cached copy is in use. */
  readonly stale: boolean;
  readonly fetchedAt: string;
  readonly refreshError?: string;
  /** How many entries were dropped as invalid (each was logged). */
  readonly droppedAgents: number;
}

/** One search result. */
export interface AgentSummary {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly license?: string;
  readonly website?: string;
  readonly repository?: string;
  readonly authors?: readonly string[];
  /** The distribution that would be used here, or null when none is usable. */
  readonly distribution: DistributionKind | null;
  /** Every distribution declared that applies to this platform, in preference order. */
  readonly declaredDistributions: readonly DistributionKind[];
  readonly available: boolean;
  readonly unavailableReason?: "unsupported" | "missing_runner";
  /**
   * How the install is (or will be) vouched for: `sha256` declared by the registry, `recorded`
   * on first install, or `package_version` for npx/uvx. Null when unavailable.
   */
  readonly integrity: Integrity | null;
  /** True when this exact version is installed and runnable. */
  readonly installed: boolean;
}

export interface SearchOptions {
  /** At most this many results (default 20). */
  readonly limit?: number;
  /** Also list agents that cannot run here (no platform build, missing npm/uv). Default false. */
  readonly includeUnavailable?: boolean;
  /** Bypass the in-memory index cache. */
  readonly refresh?: boolean;
}

export interface SearchResult {
  readonly query: string;
  readonly agents: readonly AgentSummary[];
  /** Matches before `limit` was applied (not counting hidden ones). */
  readonly total: number;
  /** Matches hidden because they cannot run here (0 with `includeUnavailable`). */
  readonly hiddenUnavailable: number;
  readonly index: IndexInfo;
}

/** Readiness of one agent, as shown in status views and checked at session start. */
export type AgentState = "unconfigured" | "not_found" | "unsupported" | "missing_runner" | "unprepared" | "ready";

export interface AgentReadiness {
  readonly agentId: string;
  readonly state: AgentState;
  /** A sentence a person can act on. */
  readonly message: string;
  readonly version?: string;
  readonly distribution?: DistributionKind;
  /** For `missing_runner`: what to install. */
  readonly missingRunners?: readonly RunnerName[];
  /** For `unconfigured` caused by an index failure: the typed reason. */
  readonly reason?: RegistryErrorReason;
  /** For `ready`: how to start it. */
  readonly launch?: AgentLaunchSpec;
  readonly index?: IndexInfo;
}

/** How to spawn an agent (stdio, NDJSON). The host merges `env` over its own environment. */
export interface AgentLaunchSpec {
  readonly agentId: string;
  readonly version: string;
  readonly distribution: DistributionKind;
  /** Absolute path of the executable. */
  readonly command: string;
  readonly args: readonly string[];
  /** Variables the registry declares for this agent (not the whole environment). */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory; left unset so the host uses the session's project directory. */
  readonly cwd?: string;
  /** True when a local command override replaced the registry's executable. */
  readonly commandOverridden: boolean;
}

export interface PrepareOptions {
  readonly onProgress?: ProgressListener;
  readonly signal?: AbortSignal;
}

export interface PreparedAgent {
  readonly agentId: string;
  readonly version: string;
  readonly distribution: DistributionKind;
  /** True when the install already existed (possibly made by a concurrent caller). */
  readonly alreadyInstalled: boolean;
  readonly integrity: Integrity;
  /** SHA-256 of the archive for binary installs. */
  readonly sha256?: string;
  /** Install directory (binary) or npm prefix / uv tool directory (packages). */
  readonly location: string;
  readonly launch: AgentLaunchSpec;
}

/** One installed agent version, from its receipt. */
export interface InstalledAgent {
  readonly agentId: string;
  readonly version: string;
  readonly distribution: DistributionKind;
  readonly platform?: PlatformKey;
  readonly location: string;
  readonly integrity: Integrity;
  readonly sha256?: string;
  /** Archive URL (without query) or the package spec. */
  readonly source: string;
  readonly installedAt: string;
  readonly command: string;
}

export interface UninstallOptions {
  /** Overrides the catalog's `isInUse` for this call. */
  readonly isInUse?: InUseCheck;
  /** Remove only this version (default: every installed version). */
  readonly version?: string;
}

export interface UninstallResult {
  readonly agentId: string;
  readonly removed: readonly InstalledAgent[];
}

export interface ResolveLaunchOptions {
  /**
   * A local executable (path, or name on PATH) to run instead of the registry's. The
   * registry-declared args and env are kept.
   */
  readonly commandOverride?: string;
  /** Use the cached index only, never the network (a provider listing). */
  readonly offline?: boolean;
}

/** Details for `registry show`. */
export interface AgentDetails {
  readonly agent: RegistryAgent;
  readonly summary: AgentSummary;
  readonly readiness: AgentReadiness;
  readonly installed: readonly InstalledAgent[];
  readonly index: IndexInfo;
}

/** Re-exported so callers can type their own progress handling. */
export type { ProgressListener };
