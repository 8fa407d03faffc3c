import { randomBytes } from "node:crypto";
import { chmod, lstat, readdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Writes a file so readers see either the old or the new content, never a partial one. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, data, { flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Removes a directory tree so that nobody observes it half-deleted: it is first renamed to a
 * hidden sibling (atomic), then deleted. Archives may contain read-only directories, which
 * a non-root user cannot empty, so write permission is restored before retrying.
 */
export async function removeTree(path: string): Promise<boolean> {
  const trash = join(dirname(path), `.trash-${basename(path)}-${randomBytes(6).toString("hex")}`);
  try {
    await rename(path, trash);
  } catch (error) {
    if (isErrnoException(error) && error.code === "ENOENT") return false;
    throw error;
  }
  await removeForcefully(trash);
  return true;
}

/** `rm -rf` that also copes with read-only directories inside the tree. */
export async function removeForcefully(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (error) {
    if (!isErrnoException(error) || (error.code !== "EACCES" && error.code !== "EPERM")) throw error;
    await makeWritable(path);
    await rm(path, { recursive: true, force: true });
  }
}

async function makeWritable(path: string): Promise<void> {
  const info = await lstat(path).catch(() => null);
  if (info === null || !info.isDirectory()) return;
  await chmod(path, 0o700);
  for (const name of await readdir(path)) await makeWritable(join(path, name));
}

export function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === "string";
}
