import { mkdir, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ArchiveEntryChecker, assertExtractedTreeIsContained, type ArchiveLimits } from "./archive-safety.js";
import { checkArchiveMagic, type ArchiveFormat } from "./archive-format.js";
import { decompressBzip2 } from "./bzip2.js";
import { RegistryError, describeError, isRegistryError } from "./errors.js";
import { extractTar, listTarEntries } from "./tar-archive.js";
import { extractZip, listZipEntries } from "./zip-archive.js";

export interface ExtractOptions {
  /** The verified download. */
  readonly archiveFile: string;
  readonly format: ArchiveFormat;
  /** An existing, empty directory inside the cache's temp area. */
  readonly destination: string;
  /** Scratch space for intermediate files (the decompressed .tar of a .tar.bz2). */
  readonly workDir: string;
  /** The registry's `cmd`; a raw binary is placed at this relative path. */
  readonly cmd: string;
  /** The archive URL as shown in messages. */
  readonly where: string;
  readonly limits: ArchiveLimits;
}

/**
 * Turns a downloaded archive into a directory tree, in three steps that each can refuse:
 * 1. the bytes must match the format the URL claims;
 * 2. the complete entry list is checked before the first byte is written;
 * 3. after extraction, the real file system is checked again (symlinks resolve inside, no
 *    special files).
 * Everything happens inside the caller's temp directory; the caller discards it on failure.
 */
export async function extractArchive(options: ExtractOptions): Promise<void> {
  const { format, where } = options;
  await checkArchiveMagic(options.archiveFile, format, where);
  try {
    switch (format) {
      case "raw":
        await placeRawBinary(options.archiveFile, options.destination, options.cmd);
        break;
      case "tar.gz":
        await listThenExtractTar(options.archiveFile, options);
        break;
      case "tar.bz2": {
        const plainTar = join(options.workDir, "archive.tar");
        await decompressBzip2(options.archiveFile, plainTar, options.limits.maxExtractedBytes, where);
        await listThenExtractTar(plainTar, options);
        break;
      }
      case "zip": {
        const checker = new ArchiveEntryChecker(where, options.limits);
        await listZipEntries(options.archiveFile, (entry) => checker.check(entry));
        checker.finish();
        await extractZip(options.archiveFile, options.destination);
        break;
      }
    }
  } catch (error) {
    if (isRegistryError(error)) throw error;
    throw new RegistryError(
      "broken_archive",
      `The archive ${where} could not be read (${describeError(error)}). Nothing was installed; retry, or report it to the agent's publisher.`,
      {
        details: { url: where, format },
        cause: error,
      },
    );
  }
  await assertExtractedTreeIsContained(options.destination, where);
}

async function listThenExtractTar(tarFile: string, options: ExtractOptions): Promise<void> {
  const checker = new ArchiveEntryChecker(options.where, options.limits);
  await listTarEntries(tarFile, (entry) => checker.check(entry));
  checker.finish();
  await extractTar(tarFile, options.destination);
}

// A raw binary is its own "archive": it lands at the declared cmd path.
async function placeRawBinary(file: string, destination: string, cmd: string): Promise<void> {
  const target = join(destination, ...cmd.split("/").filter((segment) => segment !== "" && segment !== "."));
  await mkdir(dirname(target), { recursive: true });
  await rename(file, target);
}
