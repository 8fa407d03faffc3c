import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "./fs-atomic.js";
import { PLATFORM_KEYS } from "./platform.js";

/**
 * Receipts are the install's own record of what it is. `inspect`, `list` and `resolveLaunch`
 * read them instead of trusting the current index, so an installed agent still launches
 * offline and a changed index never silently re-labels an old install.
 */

/** How the bytes of an install were vouched for. */
export type Integrity =
  /** The registry declared a SHA-256 and the download matched it. */
  | "sha256"
  /** The registry declared none; the SHA-256 seen at first install was recorded (trust on first use). */
  | "recorded"
  /** npx/uvx: an exact package version, whose hashes npm or uv check against their registry. */
  | "package_version";

const launchFields = {
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
};

const binaryReceiptSchema = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal("binary"),
  agentId: z.string(),
  version: z.string(),
  platform: z.enum(PLATFORM_KEYS),
  archiveUrl: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  integrity: z.enum(["sha256", "recorded"]),
  sizeBytes: z.number(),
  installedAt: z.string(),
  /** Relative to the install's `files/` directory. */
  cmd: z.string(),
  ...launchFields,
});

/** Receipt of a binary install, stored as `receipt.json` next to `files/`. */
export type BinaryReceipt = z.infer<typeof binaryReceiptSchema>;

const packageReceiptSchema = z.object({
  schemaVersion: z.literal(1),
  kind: z.enum(["npx", "uvx"]),
  agentId: z.string(),
  version: z.string(),
  /** The package string exactly as the registry declared it. */
  package: z.string(),
  packageName: z.string(),
  packageVersion: z.string(),
  packageManager: z.enum(["npm", "uv"]),
  /** npm: the prefix installed into; uv: the tool directory. */
  location: z.string(),
  /** Absolute path of the installed executable. */
  command: z.string(),
  installedAt: z.string(),
  ...launchFields,
});

/** Receipt of an npx/uvx install, stored under `package-installs/`. */
export type PackageReceipt = z.infer<typeof packageReceiptSchema>;

const recordedChecksumSchema = z.object({
  url: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  firstSeenAt: z.string(),
});

/** The first SHA-256 seen for an archive URL without a declared checksum. */
export type RecordedChecksum = z.infer<typeof recordedChecksumSchema>;

export async function readBinaryReceipt(path: string): Promise<BinaryReceipt | null> {
  return readJson(path, binaryReceiptSchema);
}

export async function readPackageReceipt(path: string): Promise<PackageReceipt | null> {
  return readJson(path, packageReceiptSchema);
}

export async function readRecordedChecksum(path: string): Promise<RecordedChecksum | null> {
  return readJson(path, recordedChecksumSchema);
}

export async function writeReceipt(
  path: string,
  receipt: BinaryReceipt | PackageReceipt | RecordedChecksum,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, JSON.stringify(receipt, null, 2) + "\n");
}

async function readJson<T>(path: string, schema: z.ZodType<T>): Promise<T | null> {
  try {
    const parsed = schema.safeParse(JSON.parse(await readFile(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
