import { chmod, mkdir, mkdtemp, realpath, rename, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { archiveFormatFor } from "./archive-format.js";
import { isInside, type ArchiveLimits } from "./archive-safety.js";
import { binaryInstallParts, type CacheLayout } from "./cache-layout.js";
import { downloadArchive } from "./download.js";
import { RegistryError } from "./errors.js";
import { extractArchive } from "./extract.js";
import type { FetchLike } from "./fetch-like.js";
import { removeForcefully, removeTree } from "./fs-atomic.js";
import { TarGzStreamExtraction } from "./tar-gz-stream-extraction.js";
import type { PlatformKey } from "./platform.js";
import type { ProgressListener } from "./progress.js";
import { readBinaryReceipt, readRecordedChecksum, writeReceipt, type BinaryReceipt } from "./receipts.js";
import type { BinaryTarget, RegistryAgent } from "./registry-schema.js";
import { isExecutableFile } from "./runner-lookup.js";
import { describeUrl } from "./url-policy.js";

export interface BinaryInstallLimits extends ArchiveLimits {
  readonly maxArchiveBytes: number;
  readonly downloadTimeoutMs: number;
}

export interface BinaryInstallContext {
  readonly layout: CacheLayout;
  readonly fetch: FetchLike;
  readonly limits: BinaryInstallLimits;
  readonly onProgress?: ProgressListener;
  readonly signal?: AbortSignal;
}

/** A binary install found (or just made) in the cache. */
export interface BinaryInstall {
  readonly receipt: BinaryReceipt;
  readonly installDir: string;
  /** Absolute path of the agent's executable. */
  readonly command: string;
}

/** The install of exactly this agent version for this platform, if it is present and runnable. */
export async function findBinaryInstall(
  layout: CacheLayout,
  agentId: string,
  version: string,
  platform: PlatformKey,
): Promise<BinaryInstall | null> {
  return readBinaryInstall(layout.binaryInstallDir(agentId, version, platform));
}

/** Reads an install directory; null when its receipt is missing/invalid or its command is gone. */
export async function readBinaryInstall(installDir: string): Promise<BinaryInstall | null> {
  const { receiptFile, filesDir } = binaryInstallParts(installDir);
  const receipt = await readBinaryReceipt(receiptFile);
  if (receipt === null) return null;
  const command = commandPath(filesDir, receipt.cmd);
  if (!(await isExecutableFile(command))) return null;
  return { receipt, installDir, command };
}

/**
 * Downloads, verifies, checks and extracts one binary archive (a .tar.gz in one streaming pass),
 * then moves it into place with a single rename. Everything before that rename happens in a temp directory inside the cache
 * (same file system, so the rename is atomic), and the temp directory is always removed: a
 * failed install leaves the cache exactly as it was. The caller holds the agent's install lock.
 */
export async function installBinary(
  agent: RegistryAgent,
  platform: PlatformKey,
  target: BinaryTarget,
  context: BinaryInstallContext,
): Promise<BinaryInstall> {
  const { layout, limits } = context;
  const where = describeUrl(target.archive);
  const format = archiveFormatFor(target.archive);
  await mkdir(layout.root, { recursive: true });
  const temp = await mkdtemp(layout.tempPrefix(agent.id));
  try {
    const archiveFile = join(temp, "download");
    const stage = join(temp, "install");
    const { receiptFile, filesDir } = binaryInstallParts(stage);
    await mkdir(filesDir, { recursive: true });
    // A .tar.gz is hashed, checked and extracted into the staging folder in one pass as it
    // arrives; other formats need the whole file first (zip's directory is at its end).
    const streaming = format === "tar.gz" ? new TarGzStreamExtraction(filesDir, where, limits) : null;
    const downloaded = await downloadArchive({
      url: target.archive,
      destination: streaming?.input ?? archiveFile,
      fetch: context.fetch,
      maxBytes: limits.maxArchiveBytes,
      timeoutMs: limits.downloadTimeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
      onProgress: (receivedBytes, totalBytes) =>
        context.onProgress?.({
          phase: "downloading",
          agentId: agent.id,
          receivedBytes,
          ...(totalBytes === undefined ? {} : { totalBytes }),
        }),
    }).catch(async (error: unknown) => {
      // Stop the extraction (a download can fail before its first byte) and wait for it, so
      // nothing writes into the staging folder once the finally removes it.
      streaming?.input.destroy();
      await streaming?.settled();
      throw error;
    });
    context.onProgress?.({ phase: "verifying", agentId: agent.id });
    context.onProgress?.({ phase: "extracting", agentId: agent.id });
    const refused = (await streaming?.settled()) ?? null;
    const recordedFile = layout.recordedChecksumFile(target.archive);
    const recorded = target.sha256 === undefined ? await readRecordedChecksum(recordedFile) : null;
    // The checksum speaks first: a tampered archive is a mismatch, whatever its entries are.
    verifyChecksum(
      where,
      downloaded.sha256,
      target.sha256,
      recorded === null
        ? undefined
        : { sha256: recorded.sha256, firstSeenAt: recorded.firstSeenAt, file: recordedFile },
    );
    if (refused !== null) throw refused;
    if (streaming === null)
      await extractArchive({
        archiveFile,
        format,
        destination: filesDir,
        workDir: temp,
        cmd: target.cmd,
        where,
        limits,
      });
    await makeCommandExecutable(filesDir, target.cmd, agent.id, where);

    const receipt: BinaryReceipt = {
      schemaVersion: 1,
      kind: "binary",
      agentId: agent.id,
      version: agent.version,
      platform,
      archiveUrl: target.archive,
      sha256: downloaded.sha256,
      integrity: target.sha256 === undefined ? "recorded" : "sha256",
      sizeBytes: downloaded.bytes,
      installedAt: new Date().toISOString(),
      cmd: target.cmd,
      args: [...(target.args ?? [])],
      env: { ...(target.env ?? {}) },
    };
    await writeReceipt(receiptFile, receipt);

    const installDir = layout.binaryInstallDir(agent.id, agent.version, platform);
    await mkdir(dirname(installDir), { recursive: true });
    // A directory without a valid receipt (e.g. a file deleted by hand) is replaced.
    await removeTree(installDir);
    await rename(stage, installDir);
    if (target.sha256 === undefined && recorded === null) {
      await writeReceipt(recordedFile, {
        url: target.archive,
        sha256: downloaded.sha256,
        firstSeenAt: receipt.installedAt,
      });
    }
    return { receipt, installDir, command: commandPath(binaryInstallParts(installDir).filesDir, target.cmd) };
  } finally {
    await removeForcefully(temp);
  }
}

function verifyChecksum(
  where: string,
  actual: string,
  declared: string | undefined,
  recorded: { sha256: string; firstSeenAt: string; file: string } | undefined,
): void {
  if (declared !== undefined && actual !== declared) {
    throw new RegistryError(
      "checksum_mismatch",
      `The archive ${where} has SHA-256 ${actual}, but the registry declares ${declared}. Nothing was installed. ` +
        "The download may be corrupt or tampered with; retry, and report it to the agent's publisher if it persists.",
      { details: { url: where, expected: declared, actual } },
    );
  }
  if (declared === undefined && recorded !== undefined && actual !== recorded.sha256) {
    throw new RegistryError(
      "checksum_mismatch",
      `The archive ${where} has SHA-256 ${actual}, but ${recorded.sha256} was recorded when it was first installed (${recorded.firstSeenAt}). ` +
        `Nothing was installed. The publisher may have replaced the file; if you trust the new one, delete ${recorded.file} and retry.`,
      { details: { url: where, expected: recorded.sha256, actual, recordedAt: recorded.firstSeenAt } },
    );
  }
}

function commandPath(filesDir: string, cmd: string): string {
  return join(filesDir, ...cmd.split("/").filter((segment) => segment !== "" && segment !== "."));
}

// The declared command must be a regular file whose REAL path (symlinks followed) is inside
// the install; it is then made executable, since zip archives often lose the mode bits.
async function makeCommandExecutable(filesDir: string, cmd: string, agentId: string, where: string): Promise<void> {
  const notFound = (problem: string): RegistryError =>
    new RegistryError(
      "command_not_found",
      `The archive ${where} for ${agentId} ${problem}. Nothing was installed; report it to the agent's publisher.`,
      {
        details: { url: where, cmd },
      },
    );
  let real: string;
  try {
    real = await realpath(commandPath(filesDir, cmd));
  } catch {
    throw notFound(`does not contain its declared command "${cmd}"`);
  }
  if (!isInside(await realpath(filesDir), real))
    throw notFound(`declares a command "${cmd}" that resolves outside the install directory`);
  if (!(await stat(real)).isFile()) throw notFound(`declares a command "${cmd}" that is not a regular file`);
  await chmod(real, 0o755);
}
