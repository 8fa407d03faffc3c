import { constants as fsConstants, accessSync, existsSync } from "node:fs";
import { dirname } from "node:path";
import { SwitchyardError } from "../spec/index.js";

function writable(folder: string): boolean {
  try {
    accessSync(folder, fsConstants.W_OK | fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why this user cannot keep Switchyard's state in `home`, in one line that says what to do, or
 * null when it can: an existing home must be writable, a missing one creatable (its nearest
 * existing parent writable). `switchyard doctor` reports the same line.
 */
export function homeAccessProblem(home: string): string | null {
  if (existsSync(home)) {
    return writable(home)
      ? null
      : `${home} is not writable by this user: fix its permissions, or use another home (--home or SWITCHYARD_HOME).`;
  }
  let parent = dirname(home);
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  return writable(parent)
    ? null
    : `${home} does not exist and cannot be created (${parent} is not writable by this user): create it, or use another home (--home or SWITCHYARD_HOME).`;
}

/** Refuses, before anything opens the database or takes the lock, a home this user cannot write. */
export function requireUsableHome(home: string): void {
  const problem = homeAccessProblem(home);
  if (problem !== null) throw new SwitchyardError("invalid_input", problem, { home });
}
