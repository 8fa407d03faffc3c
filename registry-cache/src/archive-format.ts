import { open } from "node:fs/promises";
import { RegistryError } from "./errors.js";
import { describeUrl } from "./url-policy.js";

/** Archive formats the registry allows. */
export type ArchiveFormat = "tar.gz" | "tar.bz2" | "zip" | "raw";

// Installer packages that need an OS installer to run; the registry forbids them.
const REFUSED_EXTENSIONS = [".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage"];

/**
 * The format follows the registry's rule: decided by the URL's file extension, anything
 * without a known archive extension being a raw binary. The bytes are then checked against
 * that claim (see {@link checkArchiveMagic}) so a mislabelled file fails as `broken_archive`
 * instead of being, for example, installed as a "raw binary" that is really a zip.
 */
export function archiveFormatFor(archiveUrl: string): ArchiveFormat {
  const path = new URL(archiveUrl).pathname.toLowerCase();
  if (path.endsWith(".tar.gz") || path.endsWith(".tgz")) return "tar.gz";
  if (path.endsWith(".tar.bz2") || path.endsWith(".tbz2")) return "tar.bz2";
  if (path.endsWith(".zip")) return "zip";
  // Other archive extensions are refused too: installing one as a "raw binary" would be wrong.
  const refused = REFUSED_EXTENSIONS.some((extension) => path.endsWith(extension));
  if (refused || /\.(tar|txz|xz|zst|7z|rar|gz|bz2)$/.test(path)) {
    throw new RegistryError(
      "unsupported_archive",
      `The archive ${describeUrl(archiveUrl)} is not a supported format (tar.gz, tgz, tar.bz2, tbz2, zip or a raw binary). Ask the agent's publisher for one.`,
      { details: { url: describeUrl(archiveUrl) } },
    );
  }
  return "raw";
}

const MAGIC: Record<Exclude<ArchiveFormat, "raw">, { bytes: number[]; label: string }> = {
  "tar.gz": { bytes: [0x1f, 0x8b], label: "gzip" },
  "tar.bz2": { bytes: [0x42, 0x5a, 0x68], label: "bzip2" },
  zip: { bytes: [0x50, 0x4b], label: "zip" },
};

/** Refuses a file whose first bytes contradict its format. */
export async function checkArchiveMagic(path: string, format: ArchiveFormat, where: string): Promise<void> {
  if (format === "raw") return;
  const expected = MAGIC[format];
  const handle = await open(path, "r");
  try {
    const head = Buffer.alloc(expected.bytes.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead === head.length && expected.bytes.every((byte, i) => head[i] === byte)) return;
  } finally {
    await handle.close();
  }
  throw new RegistryError(
    "broken_archive",
    `The archive ${where} is not ${expected.label} data although its name says ${format}. Report it to the agent's publisher.`,
    {
      details: { url: where, format },
    },
  );
}
