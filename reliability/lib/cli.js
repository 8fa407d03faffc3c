// The `switchyard` CLI as an operator runs it (token issue/revoke, project add), against a home
// whose server may be running.
import { execa } from "execa";
import { CLI } from "./paths.js";

/** Runs the CLI (with `env` added to this process's environment); throws with its stderr when it fails. */
export async function switchyard(args, { timeoutMs = 60_000, env = {} } = {}) {
  const result = await execa(process.execPath, [CLI, ...args], { reject: false, timeout: timeoutMs, stdin: "ignore", env: { NO_COLOR: "1", ...env } });
  if (result.exitCode !== 0) throw new Error(`switchyard ${args.join(" ")} exited ${result.exitCode}: ${result.stderr}`);
  return String(result.stdout);
}

/** Adds a project folder and returns its id. */
export async function addProject(home, path) {
  return JSON.parse(await switchyard(["project", "add", path, "--home", home, "--json"])).id;
}

/**
 * Issues a client token with `switchyard token issue`; the run remembers it for the secrets
 * figure. An operator's token here: every mode allowed (the CLI's default ceiling is
 * approval-required).
 */
export async function issueToken(run, home, { ttl = "1h", scope = "orchestration:operate", maxRuntimeMode = "full-access" } = {}) {
  const issued = JSON.parse(await switchyard(["token", "issue", "--home", home, "--ttl", ttl, "--scope", scope, "--max-runtime-mode", maxRuntimeMode, "--json"]));
  run.tokens.add(issued.token);
  return { id: issued.id, token: issued.token };
}

/** Revokes a client token with `switchyard token revoke`. */
export async function revokeToken(home, id) {
  await switchyard(["token", "revoke", id, "--home", home]);
}
