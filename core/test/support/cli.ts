import { fileURLToPath } from "node:url";
import { execa } from "execa";

export const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/**
 * The command line that runs `command` under `umask` (octal, e.g. "0000"): through a shell, as a
 * user's own umask reaches what they start. Without one, the command as is.
 */
export function underUmask(command: readonly string[], umask: string | undefined): [string, string[]] {
  if (umask === undefined) return [command[0]!, command.slice(1)];
  return ["/bin/sh", ["-c", 'umask "$0" && exec "$@"', umask, ...command]];
}

/**
 * Runs the built `switchyard` CLI and returns its outcome (never throws on a non-zero exit);
 * `user` runs it as another user (a root test's way to meet permissions root ignores).
 */
export async function runCli(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    timeoutMs?: number;
    input?: string;
    user?: { uid: number; gid: number };
    umask?: string;
  } = {},
) {
  const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...inherited } = process.env;
  const [file, argv] = underUmask([process.execPath, CLI, ...args], options.umask);
  const result = await execa(file, argv, {
    reject: false,
    extendEnv: false,
    env: { ...inherited, ...options.env },
    cwd: options.cwd ?? process.cwd(),
    timeout: options.timeoutMs ?? 60_000,
    ...(options.user !== undefined ? { uid: options.user.uid, gid: options.user.gid } : {}),
    ...(options.input !== undefined ? { input: options.input } : { stdin: "ignore" as const }),
  });
  return { code: result.exitCode ?? null, stdout: String(result.stdout), stderr: String(result.stderr) };
}
