import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** The environment runners are looked up in and package managers run with. */
export type ProcessEnv = Readonly<Record<string, string | undefined>>;

/**
 * Finds an executable the way a shell would (PATH, and PATHEXT on Windows) WITHOUT spawning it:
 * `inspect` and `search` must never start a process, yet they report whether npm or uv exist.
 * Returns the absolute path, or null when it is not installed.
 */
export async function findExecutable(command: string, env: ProcessEnv): Promise<string | null> {
  if (command.length === 0) return null;
  if (isAbsolute(command) || command.includes("/") || command.includes("\\")) {
    const candidate = resolve(command);
    return (await isExecutableFile(candidate)) ? candidate : null;
  }
  const pathValue = env.PATH ?? env.Path ?? "";
  const extensions = process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT;.COM").split(";")] : [""];
  for (const dir of pathValue.split(delimiter)) {
    if (dir.length === 0) continue;
    for (const extension of extensions) {
      const candidate = join(dir, command + extension);
      if (await isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

/** True for a regular file (following symlinks) the current user may execute. */
export async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
