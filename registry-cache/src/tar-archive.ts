import { createReadStream } from "node:fs";
import { Parser, extract, type ReadEntry } from "tar";
import type { ArchiveEntry } from "./archive-safety.js";

/**
 * Lists a tar (plain or gzip-compressed) without writing anything. The `onEntry` callback may
 * throw to refuse the archive; listing stops there and that error is what rejects.
 */
export async function listTarEntries(file: string, onEntry: (entry: ArchiveEntry) => void): Promise<void> {
  let refusal: unknown;
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      if (refusal === undefined) {
        try {
          onEntry(toArchiveEntry(entry));
        } catch (error) {
          refusal = error;
          // node-tar decorates the abort error (Object.assign(error, {code, …})); hand it a
          // throwaway error and keep ours intact for the caller.
          parser.abort(new Error("listing stopped: entry refused"));
        }
      }
      entry.resume();
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      parser.on("error", reject);
      parser.on("end", () => resolve());
      const input = createReadStream(file);
      input.on("error", reject);
      input.pipe(parser);
    });
  } catch (error) {
    throw refusal ?? error;
  }
  if (refusal !== undefined) throw refusal;
}

/**
 * Extracts a tar that {@link listTarEntries} already approved. node-tar's own protections stay
 * on (no absolute paths, no `..`, no writing through symlinks) and `strict` turns every
 * warning into a failure, so anything unexpected aborts the install. Owners are never
 * preserved: running as root must not hand files to arbitrary uids from the archive.
 */
export async function extractTar(file: string, destination: string): Promise<void> {
  await extract({
    file,
    cwd: destination,
    strict: true,
    preserveOwner: false,
    preservePaths: false,
    // Permission bits only: a set-uid binary from an archive, installed by root, would be a
    // privilege escalation for whoever can run it.
    filter: (_path, entry) => {
      if (typeof entry.mode === "number") entry.mode &= 0o777;
      return true;
    },
  });
}

/** An entry as node-tar reads it, in the format-independent shape the checks take. */
export function toArchiveEntry(entry: ReadEntry): ArchiveEntry {
  const base = { name: entry.path, size: entry.size ?? 0, rawType: entry.type };
  switch (entry.type) {
    case "File":
    case "OldFile":
    case "ContiguousFile":
      return { ...base, kind: "file" };
    case "Directory":
    case "GNUDumpDir":
      return { ...base, kind: "directory", size: 0 };
    case "SymbolicLink":
      return { ...base, kind: "symlink", size: 0, linkTarget: entry.linkpath ?? "" };
    case "Link":
      return { ...base, kind: "hardlink", size: 0, linkTarget: entry.linkpath ?? "" };
    default:
      return { ...base, kind: "special", size: 0 };
  }
}
