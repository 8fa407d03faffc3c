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

/** The loopback registry of {@link startLocalRegistry}. */
export interface LocalRegistry {
  readonly url: string;
  readonly prebuildHost: string;
  /** Every path asked for, in order. */
  readonly requests: readonly string[];
  prebuildUrls(): string[];
  close(): Promise<void>;
}

export const CHECKOUT: string;
export function workspaceDirs(root?: string): string[];
export function packWorkspaces(dest: string, root?: string): Promise<PackedPackage[]>;
export function startLocalRegistry(packages: readonly PackedPackage[], root?: string): Promise<LocalRegistry>;
export function folderBytes(dir: string): number;
export function installCli(input: {
  readonly prefix: string;
  readonly registry: LocalRegistry;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number;
}): Promise<{ stdout: string; stderr: string; seconds: number }>;
export function installedPackages(nodeModules: string): { name: string; version: string; dir: string }[];
export function nativeModules(dir: string): string[];
