import { createHash } from "node:crypto";
import { join } from "node:path";
import type { PlatformKey } from "./platform.js";

/**
 * Every path under the cache directory, in one place. Layout:
 *
 * ```
 * <cacheDir>/
 *   registry.json                      last good index body (offline fallback)
 *   registry.meta.json                 {url, fetchedAt, sha256} of that body
 *   agents/<id>/<version>/<platform>/  one binary install, created by a single rename
 *     receipt.json                     what was installed, from where, with which hash
 *     files/                           the extracted archive; `cmd` resolves in here
 *   package-installs/<id>-<hash>.json  receipts of npx/uvx installs
 *   npm-global/                        npm prefix used when the global one is not writable
 *   uv/tools, uv/bin                   uv's tool and bin directories for uvx agents
 *   recorded-checksums/<hash>.json     first-seen SHA-256 of archives without a declared one
 *   <id>.install.lock                  present only while an install/uninstall of <id> runs
 *   .tmp-<id>-*                        present only while an install of <id> runs
 * ```
 *
 * Locks and temp directories sit directly in the cache root and vanish afterwards, so a failed
 * install leaves the tree exactly as it found it; those of a killed install are removed at the
 * next start (`RegistryCatalog.sweepAbandoned`).
 */
export class CacheLayout {
  constructor(readonly root: string) {}

  get indexFile(): string {
    return join(this.root, "registry.json");
  }

  get indexMetaFile(): string {
    return join(this.root, "registry.meta.json");
  }

  get agentsDir(): string {
    return join(this.root, "agents");
  }

  agentDir(agentId: string): string {
    return join(this.agentsDir, agentId);
  }

  binaryInstallDir(agentId: string, version: string, platform: PlatformKey): string {
    return join(this.agentsDir, agentId, version, platform);
  }

  get packageInstallsDir(): string {
    return join(this.root, "package-installs");
  }

  /** One receipt per (agent, runner, pinned package): a version bump gets a new receipt. */
  packageReceiptFile(agentId: string, kind: "npx" | "uvx", packageSpec: string): string {
    const key = createHash("sha256").update(`${kind}\0${packageSpec}`).digest("hex").slice(0, 16);
    return join(this.packageInstallsDir, `${agentId}-${key}.json`);
  }

  get npmFallbackPrefix(): string {
    return join(this.root, "npm-global");
  }

  get uvToolDir(): string {
    return join(this.root, "uv", "tools");
  }

  get uvBinDir(): string {
    return join(this.root, "uv", "bin");
  }

  get recordedChecksumsDir(): string {
    return join(this.root, "recorded-checksums");
  }

  recordedChecksumFile(archiveUrl: string): string {
    return join(
      this.recordedChecksumsDir,
      `${createHash("sha256").update(archiveUrl).digest("hex").slice(0, 32)}.json`,
    );
  }

  lockFile(agentId: string): string {
    return join(this.root, `${agentId}.install.lock`);
  }

  tempPrefix(agentId: string): string {
    return join(this.root, `.tmp-${agentId}-`);
  }
}

/** The files of a binary install directory. */
export function binaryInstallParts(installDir: string): { receiptFile: string; filesDir: string } {
  return { receiptFile: join(installDir, "receipt.json"), filesDir: join(installDir, "files") };
}
