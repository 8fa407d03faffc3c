/**
 * The registry names platforms `{os}-{arch}` with its own spelling (`windows`, `aarch64`,
 * `x86_64`), not Node's (`win32`, `arm64`, `x64`).
 */
export const PLATFORM_KEYS = [
  "darwin-aarch64",
  "darwin-x86_64",
  "linux-aarch64",
  "linux-x86_64",
  "windows-aarch64",
  "windows-x86_64",
] as const;

/** A registry platform key, e.g. `linux-x86_64`. */
export type PlatformKey = (typeof PLATFORM_KEYS)[number];

export function isPlatformKey(value: string): value is PlatformKey {
  return (PLATFORM_KEYS as readonly string[]).includes(value);
}

/**
 * The registry key for a Node `process.platform`/`process.arch` pair, or `null` when the
 * registry publishes no binaries for it (e.g. FreeBSD, 32-bit ARM). npx/uvx agents still work
 * on such hosts.
 */
export function platformKeyFor(nodePlatform: string, nodeArch: string): PlatformKey | null {
  const os =
    nodePlatform === "darwin"
      ? "darwin"
      : nodePlatform === "linux"
        ? "linux"
        : nodePlatform === "win32"
          ? "windows"
          : null;
  const arch = nodeArch === "arm64" ? "aarch64" : nodeArch === "x64" ? "x86_64" : null;
  if (os === null || arch === null) return null;
  const key = `${os}-${arch}`;
  return isPlatformKey(key) ? key : null;
}

/** The registry key of the machine this process runs on. */
export function detectPlatform(): PlatformKey | null {
  return platformKeyFor(process.platform, process.arch);
}
