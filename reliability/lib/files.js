// Every file and folder below a root, as the secrets figure reads them: symbolic links are
// listed, never followed, so a walk stays inside the folder it was given.
import { lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

/** `{ path, relativePath, stat }` of `root` itself and everything below it (nothing when it does not exist). */
export function* walk(root) {
  let stat;
  try {
    stat = lstatSync(root);
  } catch {
    return;
  }
  const pending = [{ path: root, stat }];
  while (pending.length > 0) {
    const entry = pending.pop();
    yield { ...entry, relativePath: relative(root, entry.path) };
    if (!entry.stat.isDirectory()) continue;
    let names = [];
    try {
      names = readdirSync(entry.path);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(entry.path, name);
      try {
        pending.push({ path, stat: lstatSync(path) });
      } catch {
        // gone meanwhile
      }
    }
  }
}

/** The permission bits as `0600`. */
export function octalMode(stat) {
  return `0${(stat.mode & 0o777).toString(8)}`;
}
