import { existsSync, realpathSync, statSync } from "node:fs";
import { relative, resolve, isAbsolute } from "node:path";
import type { SwitchyardHost } from "../host/switchyard-host.js";
import { runningServer } from "../connect/running-server.js";
import { isOrchestratorFailure } from "../engine/orchestrator-failure.js";
import { threadIdOfReference } from "../services/thread-reference.js";
import { environmentId } from "../store/settings.js";
import { CliError, EXIT } from "./output.js";

/**
 * The thread a command argument names: its id, its link, or its page in the web UI of this home's
 * server (`server.webUrl`, or the address the running server listens on). A link of another
 * environment (a linked machine's thread), or a page of another server, is refused here: that
 * thread lives in that environment's server.
 */
export function threadIdOf(host: SwitchyardHost, value: string): string {
  const webBases = [host.config.server.webUrl, runningServer(host.paths.home)?.url].filter(
    (url): url is string => url !== undefined,
  );
  const here = environmentId(host.store);
  try {
    return threadIdOfReference(value, "thread", { environmentId: here, webBases });
  } catch (error) {
    if (!isOrchestratorFailure(error)) throw error;
    const { reason, environmentId: there, origin } = error.details;
    const next = "run the command against that environment's server (its --home, or on its machine)";
    if (reason === "other_environment")
      throw new CliError(
        `${value} is a thread of environment ${String(there)}, not of this server (${here}); ${next}.`,
        EXIT.notFound,
      );
    if (reason === "other_origin")
      throw new CliError(
        `${value} is a page of ${String(origin)}, not of this server's web UI (${webBases.join(", ") || "no server runs"}); ${next}, or pass the thread id.`,
        EXIT.notFound,
      );
    throw new CliError(error.message, EXIT.usage);
  }
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
export async function projectIdOf(
  host: SwitchyardHost,
  value: string | undefined,
  cwd: string = process.cwd(),
): Promise<string> {
  if (value !== undefined) {
    const project = await host.projects.find(value);
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
  const holding = (await host.projects.list())
    .filter((project) => !project.scratch && contains(project.rootPath, here))
    .sort((a, b) => b.rootPath.length - a.rootPath.length)[0];
  if (holding !== undefined) return holding.id;
  throw new CliError(
    `${here} is in no Switchyard project. Add it with: switchyard project add ${here} (or pass --project <dir|id>).`,
    EXIT.notFound,
  );
}
