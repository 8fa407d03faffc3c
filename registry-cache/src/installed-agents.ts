import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { findBinaryInstall, readBinaryInstall, type BinaryInstall } from "./binary-installer.js";
import type { CacheLayout } from "./cache-layout.js";
import type { AgentLaunchSpec, InstalledAgent } from "./catalog-types.js";
import type { SelectedDistribution } from "./distribution.js";
import { findPackageInstall, type PackageInstall } from "./package-installer.js";
import { readPackageReceipt, type Integrity, type PackageReceipt } from "./receipts.js";
import { isValidAgentId, type RegistryAgent } from "./registry-schema.js";
import { describeUrl } from "./url-policy.js";

/**
 * What the cache holds, told by the install receipts alone (no index needed), in the shapes
 * the catalog reports and launches from.
 */

/** An install found in the cache, whatever its kind. */
export interface FoundInstall {
  readonly launch: AgentLaunchSpec;
  readonly integrity: Integrity;
  readonly sha256?: string;
  /** Install directory (binary) or npm prefix / uv tool directory (packages). */
  readonly location: string;
}

/** An install with everything needed to report, launch or remove it. */
export interface InstallRecord {
  readonly installed: InstalledAgent;
  readonly found: FoundInstall;
  /** Package installs only: the receipt and its file. */
  readonly packageReceipt?: { readonly file: string; readonly receipt: PackageReceipt };
}

/** The runnable install of exactly the selected distribution of this agent version, if any. */
export async function findInstall(
  layout: CacheLayout,
  agent: RegistryAgent,
  selected: SelectedDistribution,
): Promise<FoundInstall | null> {
  if (selected.kind === "binary") {
    const install = await findBinaryInstall(layout, agent.id, agent.version, selected.platform);
    return install === null ? null : binaryFound(install);
  }
  const install = await findPackageInstall(layout, agent.id, selected.kind, selected.distribution);
  return install === null ? null : packageFound(install);
}

/**
 * Every install with a valid receipt. Binary installs live in `agents/<id>/<version>/<platform>/`
 * (and must still have their command); package installs are the receipts in `package-installs/`.
 */
export async function collectInstalls(layout: CacheLayout): Promise<InstallRecord[]> {
  const records: InstallRecord[] = [];
  for (const agentId of await readdirOrEmpty(layout.agentsDir)) {
    if (!isValidAgentId(agentId)) continue;
    for (const version of await readdirOrEmpty(layout.agentDir(agentId))) {
      for (const platform of await readdirOrEmpty(join(layout.agentDir(agentId), version))) {
        const install = await readBinaryInstall(join(layout.agentDir(agentId), version, platform));
        if (install !== null) records.push({ installed: binaryInstalledAgent(install), found: binaryFound(install) });
      }
    }
  }
  for (const file of await readdirOrEmpty(layout.packageInstallsDir)) {
    if (!file.endsWith(".json")) continue;
    const receiptFile = join(layout.packageInstallsDir, file);
    const receipt = await readPackageReceipt(receiptFile);
    if (receipt === null) continue;
    records.push({
      installed: {
        agentId: receipt.agentId,
        version: receipt.version,
        distribution: receipt.kind,
        location: receipt.location,
        integrity: "package_version",
        source: receipt.package,
        installedAt: receipt.installedAt,
        command: receipt.command,
      },
      found: packageFound({ receipt, command: receipt.command }),
      packageReceipt: { file: receiptFile, receipt },
    });
  }
  return records.sort(
    (a, b) =>
      a.installed.agentId.localeCompare(b.installed.agentId) || a.installed.version.localeCompare(b.installed.version),
  );
}

export function binaryFound(install: BinaryInstall): FoundInstall {
  const { receipt } = install;
  return {
    integrity: receipt.integrity,
    sha256: receipt.sha256,
    location: install.installDir,
    launch: {
      agentId: receipt.agentId,
      version: receipt.version,
      distribution: "binary",
      command: install.command,
      args: receipt.args,
      env: receipt.env,
      commandOverridden: false,
    },
  };
}

export function packageFound(install: PackageInstall): FoundInstall {
  const { receipt } = install;
  return {
    integrity: "package_version",
    location: receipt.location,
    launch: {
      agentId: receipt.agentId,
      version: receipt.version,
      distribution: receipt.kind,
      command: install.command,
      args: receipt.args,
      env: receipt.env,
      commandOverridden: false,
    },
  };
}

function binaryInstalledAgent(install: BinaryInstall): InstalledAgent {
  const { receipt } = install;
  return {
    agentId: receipt.agentId,
    version: receipt.version,
    distribution: "binary",
    platform: receipt.platform,
    location: install.installDir,
    integrity: receipt.integrity,
    sha256: receipt.sha256,
    source: describeUrl(receipt.archiveUrl),
    installedAt: receipt.installedAt,
    command: install.command,
  };
}

export async function readdirOrEmpty(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).sort();
  } catch {
    return [];
  }
}
