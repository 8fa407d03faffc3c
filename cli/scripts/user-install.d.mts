// Types of user-install.mjs (plain JavaScript, so the bench runs it without a build).

/** A packed workspace. */
export interface PackedPackage {
  readonly name: string;
  readonly version: string;
  /** The tarball. */
  readonly file: string;
  readonly integrity: string;
  /** The tarball's bytes. */
  readonly size: number;
  /** The paths inside the tarball, as `npm pack` lists them. */
  readonly files: readonly string[];
  /** The workspace's package.json. */
  readonly manifest: Record<string, unknown>;
}

/** One answer of the loopback registry. */
export interface ServedEntry {
  readonly kind: "packument" | "tarball" | "prebuild";
  readonly name: string;
  /** For a tarball. */
  readonly version?: string;
  /** For the prebuild. */
  readonly path?: string;
}

/** The loopback-only proxy of {@link startLoopbackOnlyProxy}. */
export interface LoopbackOnlyProxy {
  readonly url: string;
  /** Each request to a host other than loopback, refused (`CONNECT host:port` or `METHOD url`). */
  readonly refused: readonly string[];
  close(): Promise<void>;
}

/** The loopback registry of {@link startLocalRegistry}. */
export interface LocalRegistry {
  readonly url: string;
  readonly prebuildHost: string;
  /** Every path asked for, in order. */
  readonly requests: readonly string[];
  /** What it answered with a packument, a tarball or the prebuild, in order. */
  readonly served: readonly ServedEntry[];
  /** Paths it answered 404. */
  readonly unanswered: readonly string[];
  /** Names some served manifest declares as an optional peer dependency (npm asks for them even when nothing installs them). */
  readonly optionalPeers: ReadonlySet<string>;
  /** The npm cache the locked packages' tarballs are read from. */
  readonly sourceCache: string;
  /** `name@version` of locked packages asked for whose tarball npm's cache does not hold. */
  readonly missingFromCache: readonly string[];
  prebuildUrls(): string[];
  close(): Promise<void>;
}

export const CHECKOUT: string;
export function workspaceDirs(root?: string): string[];
export function packWorkspaces(dest: string, root?: string): Promise<PackedPackage[]>;
export function startLocalRegistry(
  packages: readonly PackedPackage[],
  root?: string,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<LocalRegistry>;
export function startLoopbackOnlyProxy(): Promise<LoopbackOnlyProxy>;
export function folderBytes(dir: string): number;
export function installCli(input: {
  readonly prefix: string;
  readonly registry: LocalRegistry;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** npm's cache for this install; default: the cache `env` configures. */
  readonly cache?: string;
  readonly timeoutMs?: number;
}): Promise<{ stdout: string; stderr: string; seconds: number; refused: string[] }>;
export function installedPackages(nodeModules: string): { name: string; version: string; dir: string }[];
export function nativeModules(dir: string): string[];
