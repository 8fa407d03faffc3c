import { createHash } from "node:crypto";
import { lstat, readFile, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";

/**
 * Every path under `root` with its kind, mode and content hash (symlinks: their target). Two
 * equal snapshots mean the directory is exactly as it was, apart from timestamps.
 */
export async function snapshotTree(root: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      const rel = prefix === "" ? name : `${prefix}/${name}`;
      const info = await lstat(path);
      const mode = (info.mode & 0o7777).toString(8);
      if (info.isSymbolicLink()) result[rel] = `symlink -> ${await readlink(path)}`;
      else if (info.isDirectory()) {
        result[rel] = `dir ${mode}`;
        await walk(path, rel);
      } else
        result[rel] = `file ${mode} ${createHash("sha256")
          .update(await readFile(path))
          .digest("hex")}`;
    }
  };
  await walk(root, "");
  return result;
}
