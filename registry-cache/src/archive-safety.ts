import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import { dirname, join, posix, relative, resolve, sep, isAbsolute } from "node:path";
import { RegistryError } from "./errors.js";
import { isErrnoException } from "./fs-atomic.js";

/** What an archive entry is, independent of the archive format. */
export type ArchiveEntryKind = "file" | "directory" | "symlink" | "hardlink" | "special";

/** One entry as listed from an archive, before anything is written. */
export interface ArchiveEntry {
  /** The entry name exactly as stored in the archive. */
  readonly name: string;
  readonly kind: ArchiveEntryKind;
  /** Link target for symlinks (relative to the link's directory) and hardlinks (relative to the root). */
  readonly linkTarget?: string;
  /** Uncompressed size in bytes (0 for non-files). */
  readonly size: number;
  /** Format-specific type name, for messages about special entries (e.g. `CharacterDevice`). */
  readonly rawType?: string;
}

export interface ArchiveLimits {
  readonly maxExtractedBytes: number;
  readonly maxEntries: number;
}

/**
 * Checks every entry of an archive before it is extracted (a streamed .tar.gz: each entry before
 * it is written, the cross-entry checks before the install is renamed into place), so a hostile
 * or broken archive is refused as a whole and never half-installed. Refused:
 * - absolute names (`/x`, `C:\x`), names with a `..` segment, backslashes or NUL bytes;
 * - device files, FIFOs and other special entries;
 * - symlinks whose target is absolute or resolves outside the root;
 * - hardlinks whose target is absolute or contains `..`;
 * - any name or link target that passes THROUGH a symlink of the same archive: lexical checks
 *   cannot see where such a path really lands (`a/b -> ..` then `c -> a/b/..` escapes), so
 *   those are refused outright; real agent archives never need them.
 * Call {@link check} for each listed entry, then {@link finish} once the listing is complete.
 */
export class ArchiveEntryChecker {
  private readonly symlinks = new Set<string>();
  private readonly paths: { name: string; normalized: string; linkSegments?: string[]; kind: ArchiveEntryKind }[] = [];
  private totalBytes = 0;

  constructor(
    private readonly where: string,
    private readonly limits: ArchiveLimits,
  ) {}

  check(entry: ArchiveEntry): void {
    const segments = this.safeSegments(entry.name);
    const normalized = segments.join("/");
    if (entry.kind === "special") {
      throw this.unsafe(
        entry.name,
        `it is a ${entry.rawType ?? "special file"} (device files, FIFOs and sockets are not allowed)`,
      );
    }
    if (this.paths.length + 1 > this.limits.maxEntries) {
      throw this.tooLarge(`more than ${this.limits.maxEntries} entries`);
    }
    this.totalBytes += entry.size;
    if (this.totalBytes > this.limits.maxExtractedBytes) {
      throw this.tooLarge(`more than ${this.limits.maxExtractedBytes} bytes once extracted`);
    }
    let linkSegments: string[] | undefined;
    if (entry.kind === "symlink" || entry.kind === "hardlink") {
      const target = entry.linkTarget ?? "";
      if (target.length === 0) throw this.unsafe(entry.name, "it is a link without a target");
      if (target.includes("\0") || target.includes("\\"))
        throw this.unsafe(entry.name, `its link target "${target}" contains a NUL byte or backslash`);
      if (target.startsWith("/") || /^[A-Za-z]:/.test(target))
        throw this.unsafe(entry.name, `its link target "${target}" is absolute`);
      // node-tar refuses any '..' in a hardlink target; refusing it here names the entry.
      if (entry.kind === "hardlink" && target.split("/").includes(".."))
        throw this.unsafe(entry.name, `its hardlink target "${target}" contains '..'`);
      // Symlink targets are relative to the link's own directory; hardlink targets to the root.
      const base = entry.kind === "symlink" ? segments.slice(0, -1) : [];
      linkSegments = [...base, ...target.split("/")];
      if (escapesRoot(linkSegments))
        throw this.unsafe(entry.name, `its link target "${target}" points outside the install directory`);
      if (entry.kind === "symlink") this.symlinks.add(normalized);
    }
    const path = {
      name: entry.name,
      normalized,
      kind: entry.kind,
      ...(linkSegments === undefined ? {} : { linkSegments }),
    };
    // Against the symbolic links seen so far, so an extraction that streams refuses the entry
    // before writing it; finish() repeats this against all of them.
    this.checkLinksOnPath(path);
    this.paths.push(path);
  }

  /** Cross-entry checks, once every entry has been seen. */
  finish(): void {
    for (const path of this.paths) this.checkLinksOnPath(path);
  }

  private checkLinksOnPath(path: {
    name: string;
    normalized: string;
    linkSegments?: string[];
    kind: ArchiveEntryKind;
  }): void {
    const parents = path.normalized.split("/").slice(0, -1);
    const through = this.firstSymlinkOnPath(parents, true);
    if (through !== null) throw this.unsafe(path.name, `it would be written through the symbolic link "${through}"`);
    if (path.linkSegments !== undefined) {
      const viaLink = this.firstSymlinkOnPath(path.linkSegments, path.kind === "hardlink");
      if (viaLink !== null)
        throw this.unsafe(path.name, `its link target passes through the symbolic link "${viaLink}"`);
    }
  }

  // Walks a path segment by segment; a symlink met before the last segment (or at it, for
  // hardlinks, which would otherwise be created through the link) is reported.
  private firstSymlinkOnPath(segments: readonly string[], includeLast: boolean): string | null {
    const current: string[] = [];
    for (let i = 0; i < segments.length; i += 1) {
      const segment = segments[i];
      if (segment === undefined || segment === "" || segment === ".") continue;
      if (segment === "..") {
        current.pop();
        continue;
      }
      current.push(segment);
      const isLast = segments.slice(i + 1).every((rest) => rest === "" || rest === ".");
      const joined = current.join("/");
      if (this.symlinks.has(joined) && (!isLast || includeLast)) return joined;
    }
    return null;
  }

  private safeSegments(name: string): string[] {
    if (name.length === 0) throw this.unsafe(name, "it has an empty name");
    if (name.includes("\0")) throw this.unsafe(name, "its name contains a NUL byte");
    if (name.includes("\\")) throw this.unsafe(name, "its name contains a backslash");
    if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) throw this.unsafe(name, "it has an absolute path");
    const segments = name.split("/").filter((segment) => segment !== "" && segment !== ".");
    if (segments.includes("..")) throw this.unsafe(name, "its path contains '..'");
    if (segments.length === 0) return ["."];
    return segments;
  }

  private unsafe(entry: string, problem: string): RegistryError {
    return new RegistryError(
      "unsafe_archive_entry",
      `The archive ${this.where} was refused: entry "${entry}" is unsafe because ${problem}. Nothing was installed; report this to the agent's publisher.`,
      { details: { url: this.where, entry, problem } },
    );
  }

  private tooLarge(problem: string): RegistryError {
    return new RegistryError(
      "archive_too_large",
      `The archive ${this.where} expands to ${problem}. Nothing was installed.`,
      {
        details: { url: this.where, ...this.limits },
      },
    );
  }
}

function escapesRoot(segments: readonly string[]): boolean {
  let depth = 0;
  for (const segment of segments) {
    if (segment === "" || segment === ".") continue;
    depth += segment === ".." ? -1 : 1;
    if (depth < 0) return true;
  }
  return false;
}

/** True when `child` is `root` or below it (both absolute, already resolved). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * After extraction (still in the temp directory): every symlink must really resolve inside the
 * root, following the file system this time, and no special file may exist. This backs up the
 * lexical listing checks with what the disk actually says.
 */
export async function assertExtractedTreeIsContained(root: string, where: string): Promise<void> {
  const realRoot = await realpath(root);
  const refuse = (path: string, problem: string): RegistryError => {
    const entry = posix.normalize(relative(realRoot, path).split(sep).join("/"));
    return new RegistryError(
      "unsafe_archive_entry",
      `The archive ${where} was refused: entry "${entry}" is unsafe because ${problem}. Nothing was installed; report this to the agent's publisher.`,
      { details: { url: where, entry, problem } },
    );
  };
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      const info = await lstat(path);
      if (info.isDirectory()) {
        await walk(path);
      } else if (info.isSymbolicLink()) {
        let target: string;
        try {
          target = await realpath(path);
        } catch (error) {
          if (!isErrnoException(error) || (error.code !== "ENOENT" && error.code !== "ELOOP")) throw error;
          if (error.code === "ELOOP") throw refuse(path, "it is a symbolic link loop");
          // Dangling: judge where it would point from its real parent directory.
          target = resolve(await realpath(dirname(path)), await readlink(path));
        }
        if (!isInside(realRoot, target))
          throw refuse(path, "it is a symbolic link that resolves outside the install directory");
      } else if (!info.isFile()) {
        throw refuse(path, "it is a special file");
      }
    }
  };
  await walk(realRoot);
}
