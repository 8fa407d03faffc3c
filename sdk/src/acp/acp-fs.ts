import { mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import path from "node:path";
import { SwitchyardError } from "@switchyard/spec";

function inside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

function outsideError(requested: string, cwd: string): SwitchyardError {
  return new SwitchyardError(
    "invalid_input",
    `Path "${requested}" is outside the session's working directory "${cwd}".`,
    { path: requested, cwd },
  );
}

/** The nearest existing ancestor's real path, plus the rest of the path below it. */
async function realpathOfNearest(target: string): Promise<string> {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      const real = await realpath(current);
      return path.join(real, ...missing.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      const parent = path.dirname(current);
      if (parent === current) throw error;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/**
 * The file system an ACP agent reaches through `fs/read_text_file` and `fs/write_text_file`,
 * confined to one directory. Paths must be absolute (as ACP requires); every path is resolved
 * through `realpath`, so neither `..` nor a symlink can leave the root.
 * @public
 */
export class ConfinedFileSystem {
  private rootReal: Promise<string> | null = null;

  constructor(readonly root: string) {}

  private realRoot(): Promise<string> {
    this.rootReal ??= realpath(this.root);
    return this.rootReal;
  }

  /** The real path of `requested`, or an `invalid_input` error when it leaves the root. */
  async resolve(requested: string): Promise<string> {
    if (!path.isAbsolute(requested)) {
      throw new SwitchyardError(
        "invalid_input",
        `Path "${requested}" is not absolute; ACP file paths must be absolute.`,
        { path: requested },
      );
    }
    const root = await this.realRoot();
    const lexical = path.resolve(requested);
    if (!inside(path.resolve(this.root), lexical) && !inside(root, lexical)) throw outsideError(requested, this.root);
    const real = await realpathOfNearest(lexical);
    if (!inside(root, real)) throw outsideError(requested, this.root);
    return real;
  }

  /** Reads a text file; `line` is 1-based, `limit` counts lines. */
  async read(requested: string, line?: number | null, limit?: number | null): Promise<string> {
    const real = await this.resolve(requested);
    let content: string;
    try {
      content = await readFile(real, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        throw new SwitchyardError("not_found", `File "${requested}" does not exist.`, { path: requested });
      }
      throw error;
    }
    if ((line === undefined || line === null) && (limit === undefined || limit === null)) return content;
    const lines = content.split("\n");
    const start = Math.max(0, (line ?? 1) - 1);
    const end = limit === undefined || limit === null ? lines.length : start + Math.max(0, limit);
    return lines.slice(start, end).join("\n");
  }

  /** Writes a text file, creating it (and missing parent directories inside the root). */
  async write(requested: string, content: string): Promise<void> {
    const real = await this.resolve(requested);
    await mkdir(path.dirname(real), { recursive: true });
    await writeFile(real, content, "utf8");
  }
}
