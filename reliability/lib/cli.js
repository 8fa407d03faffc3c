// The `switchyard` CLI as an operator runs it (token issue/revoke, project add), against a home
// whose server may be running.
import { execa } from "execa";
import { CLI } from "./paths.js";

/**
 * Runs the CLI (with `env` added to this process's environment, and `input` on its stdin, the
 * way secrets are handed to it); throws with its stderr when it fails.
 */
export async function switchyard(args, { timeoutMs = 60_000, env = {}, input } = {}) {
  const stdin = input === undefined ? { stdin: "ignore" } : { input };
  const result = await execa(process.execPath, [CLI, ...args], {
    reject: false,
    timeout: timeoutMs,
    ...stdin,
    env: { NO_COLOR: "1", ...env },
  });
  if (result.exitCode !== 0)
    throw new Error(`switchyard ${args.join(" ")} exited ${result.exitCode}: ${result.stderr}`);
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
export async function issueToken(
  run,
  home,
  { ttl = "1h", scope = "orchestration:operate", verbs, projects, maxRuntimeMode = "full-access" } = {},
) {
  const reach = [
    ...(verbs === undefined ? ["--scope", scope] : ["--verbs", verbs]),
    ...(projects === undefined ? [] : ["--projects", projects]),
  ];
  const issued = JSON.parse(
    await switchyard([
      "token",
      "issue",
      "--home",
      home,
      "--ttl",
      ttl,
      ...reach,
      "--max-runtime-mode",
      maxRuntimeMode,
      "--json",
    ]),
  );
  run.tokens.add(issued.token);
  return { id: issued.id, token: issued.token };
}

/** Revokes a client token with `switchyard token revoke`. */
export async function revokeToken(home, id) {
  await switchyard(["token", "revoke", id, "--home", home]);
}

/** Issues a grant on `home` for another environment (`switchyard grant issue`); the run remembers its secret. */
export async function issueGrant(
  run,
  home,
  { forName, verbs, projects = "*", maxRuntimeMode = "full-access", ttl = "1d" },
) {
  const issued = JSON.parse(
    await switchyard([
      "grant",
      "issue",
      "--home",
      home,
      "--for",
      forName,
      "--projects",
      projects,
      "--verbs",
      verbs,
      "--max-runtime-mode",
      maxRuntimeMode,
      "--ttl",
      ttl,
      "--json",
    ]),
  );
  run.tokens.add(issued.secret);
  return { id: issued.id, secret: issued.secret };
}

/** Revokes a grant with `switchyard grant revoke`. */
export async function revokeGrant(home, id) {
  await switchyard(["grant", "revoke", id, "--home", home]);
}

/** Links another environment on `home` (`switchyard link add`), the secret on stdin as docs/reach.md says. */
export async function addLink(home, name, url, secret) {
  await switchyard(["link", "add", name, url, "--secret", "-", "--home", home], { input: secret });
}
