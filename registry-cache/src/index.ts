/**
 * @switchyard/registry-cache: the ACP Registry catalog and checksummed installer.
 * The core CLI (`switchyard registry …`) and the ACP Registry provider plugin use
 * {@link RegistryCatalog}; everything else here is its vocabulary.
 */
export { RegistryCatalog, type AbandonedSweep } from "./catalog.js";
export {
  DEFAULT_CATALOG_LIMITS,
  DEFAULT_REGISTRY_URL,
  type AgentDetails,
  type AgentLaunchSpec,
  type AgentReadiness,
  type AgentState,
  type AgentSummary,
  type IndexInfo,
  type InstalledAgent,
  type InUseCheck,
  type PrepareOptions,
  type PreparedAgent,
  type RegistryCatalogLimits,
  type RegistryCatalogOptions,
  type ResolveLaunchOptions,
  type SearchOptions,
  type SearchResult,
  type UninstallOptions,
  type UninstallResult,
} from "./catalog-types.js";
export {
  REGISTRY_ERROR_REASONS,
  RegistryError,
  isRegistryError,
  type RegistryErrorDetails,
  type RegistryErrorReason,
} from "./errors.js";
export type { DistributionKind, RunnerName } from "./distribution.js";
export type { FetchLike } from "./fetch-like.js";
export type { LoadedRegistryIndex } from "./index-fetcher.js";
export type { RegistryLogger } from "./logger.js";
export { PLATFORM_KEYS, detectPlatform, platformKeyFor, type PlatformKey } from "./platform.js";
export {
  createProgressBar,
  renderProgressBar,
  type InstallProgress,
  type ProgressListener,
  type ProgressStream,
} from "./progress.js";
export type { Integrity } from "./receipts.js";
export {
  decodeRegistryIndex,
  type AgentDistribution,
  type BinaryTarget,
  type DroppedAgent,
  type PackageDistribution,
  type RegistryAgent,
  type RegistryIndex,
} from "./registry-schema.js";
export type { ProcessEnv } from "./runner-lookup.js";
export { acpRegistryCacheDir, ACP_REGISTRY_URL_ENV, resolveRegistryUrl } from "./home-layout.js";
