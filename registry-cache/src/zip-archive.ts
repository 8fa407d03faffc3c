import { createWriteStream } from "node:fs";
import { mkdir, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import type { ArchiveEntry } from "./archive-safety.js";
import { RegistryError } from "./errors.js";

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const MADE_BY_UNIX = 3;
const MAX_SYMLINK_TARGET_BYTES = 4096;

/**
 * Lists a zip without writing anything. yauzl's own name validation is bypassed
 * (`decodeStrings: false`, then decoding with its low-level helper) so that a bad name reaches
 * our checker and is refused as `unsafe_archive_entry` naming the entry, rather than as an
 * anonymous parse error.
 */
export async function listZipEntries(file: string, onEntry: (entry: ArchiveEntry) => void): Promise<void> {
  await forEachZipEntry(file, async (zip, entry) => {
    onEntry(await describeZipEntry(zip, entry));
  });
}

/** Extracts a zip that {@link listZipEntries} already approved. */
export async function extractZip(file: string, destination: string): Promise<void> {
  await forEachZipEntry(file, async (zip, entry) => {
    const described = await describeZipEntry(zip, entry);
    const segments = described.name.split("/").filter((segment) => segment !== "" && segment !== ".");
    if (segments.length === 0) return;
    const target = join(destination, ...segments);
    switch (described.kind) {
      case "directory":
        await mkdir(target, { recursive: true, mode: 0o755 });
        return;
      case "symlink":
        await mkdir(dirname(target), { recursive: true, mode: 0o755 });
        await symlink(described.linkTarget ?? "", target);
        return;
      case "file": {
        await mkdir(dirname(target), { recursive: true, mode: 0o755 });
        // Permission bits only: set-uid/set-gid/sticky bits from an archive are never honoured.
        const mode = unixMode(entry) & 0o777 || 0o644;
        const content = await zip.openReadStreamPromise(entry);
        await pipeline(content, createWriteStream(target, { flags: "wx", mode }));
        return;
      }
      default:
        // Unreachable after listing; refusing keeps extraction safe on its own.
        throw new Error(`refusing zip entry ${described.name} of kind ${described.kind}`);
    }
  });
}

async function forEachZipEntry(file: string, visit: (zip: ZipFile, entry: Entry) => Promise<void>): Promise<void> {
  const zip = await yauzl.openPromise(file, {
    lazyEntries: true,
    autoClose: false,
    decodeStrings: false,
    validateEntrySizes: true,
  });
  try {
    for await (const entry of zip.eachEntry()) await visit(zip, entry);
  } finally {
    zip.close();
  }
}

function unixMode(entry: Entry): number {
  return entry.versionMadeBy >> 8 === MADE_BY_UNIX ? (entry.externalFileAttributes >>> 16) & 0xffff : 0;
}

async function describeZipEntry(zip: ZipFile, entry: Entry): Promise<ArchiveEntry> {
  const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false);
  if (entry.isEncrypted()) {
    throw new RegistryError(
      "broken_archive",
      `The zip entry "${name}" is encrypted; encrypted archives cannot be installed.`,
      { details: { entry: name } },
    );
  }
  if (!entry.canDecodeFileData()) {
    throw new RegistryError(
      "unsupported_archive",
      `The zip entry "${name}" uses compression method ${entry.compressionMethod}, which is not supported (only stored and deflate).`,
      {
        details: { entry: name, compressionMethod: entry.compressionMethod },
      },
    );
  }
  const mode = unixMode(entry);
  const type = mode & S_IFMT;
  if (name.endsWith("/") || type === S_IFDIR) return { name, kind: "directory", size: 0 };
  if (type === S_IFLNK) {
    if (entry.uncompressedSize > MAX_SYMLINK_TARGET_BYTES)
      return { name, kind: "special", size: 0, rawType: "oversized symbolic link" };
    const content = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    return { name, kind: "symlink", size: 0, linkTarget: Buffer.concat(chunks).toString("utf8") };
  }
  if (type === 0 || type === S_IFREG) return { name, kind: "file", size: entry.uncompressedSize };
  return { name, kind: "special", size: 0, rawType: `special file (mode ${type.toString(8)})` };
}
