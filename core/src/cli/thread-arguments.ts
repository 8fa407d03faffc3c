import { existsSync, realpathSync, statSync } from "node:fs";
import { relative, resolve, isAbsolute } from "node:path";
import type { SwitchyardHost } from "../host/switchyard-host.js";
import { environmentId } from "../store/settings.js";
import { CliError, EXIT } from "./output.js";

/** `switchyard-thread://v2/<environmentId>/<threadId>`: how agents and people mention a thread. */
const THREAD_LINK = /^switchyard-thread:\/\/v2\/([^/]+)\/(.+)$/;

/**
 * The thread a command argument names: its id, or its link. A link of another environment (a
 * linked machine's thread) is refused here: that thread lives in that environment's server.
 */
export function threadIdOf(host: SwitchyardHost, value: string): string {
  if (!value.startsWith("switchyard-thread:")) return value;
  const match = THREAD_LINK.exec(value);
  if (match === null)
    throw new CliError(
      `${value} is not a thread link; a link reads switchyard-thread://v2/<environmentId>/<threadId> (or pass the thread id).`,
      EXIT.usage,
    );
  const here = environmentId(host.store);
  if (match[1] !== here) {
    throw new CliError(
      `${value} is a thread of environment ${match[1]}, not of this server (${here}); run the command against that environment's server (its --home, or on its machine).`,
      EXIT.notFound,
    );
  }
  return match[2]!;
}

function realFolder(path: string): string | null {
  try {
    return statSync(path).isDirectory() ? realpathSync(path) : null;
  } catch {
    return null;
  }
}

function contains(root: string, folder: string): boolean {
  const path = relative(root, folder);
  return path === "" || (!path.startsWith("..") && !isAbsolute(path));
}

/**
 * The project a command argument names: a project id or a folder (the registered project's).
 * Without one, the project whose folder holds the working directory (the innermost). A folder
 * that is no project is refused with the command that adds it.
 */
export function projectIdOf(host: SwitchyardHost, value: string | undefined, cwd: string = process.cwd()): string {
  if (value !== undefined) {
    const project = host.projects.find(value);
    if (project !== null) return project.id;
    const folder = realFolder(resolve(value));
    if (folder !== null)
      throw new CliError(
        `${folder} is not a Switchyard project. Add it with: switchyard project add ${folder}`,
        EXIT.notFound,
      );
    const what = existsSync(resolve(value))
      ? `${resolve(value)} is a file, not a project folder`
      : `No project has the id or folder ${value}`;
    throw new CliError(
      `${what}. \`switchyard project list\` shows the projects; \`switchyard project add <dir>\` adds one.`,
      EXIT.notFound,
    );
  }
  const here = realFolder(cwd) ?? resolve(cwd);
  const holding = host.projects
    .list()
    .filter((project) => !project.scratch && contains(project.rootPath, here))
    .sort((a, b) => b.rootPath.length - a.rootPath.length)[0];
  if (holding !== undefined) return holding.id;
  throw new CliError(
    `${here} is in no Switchyard project. Add it with: switchyard project add ${here} (or pass --project <dir|id>).`,
    EXIT.notFound,
  );
}
