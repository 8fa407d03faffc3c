/** Names of environments (a grant's `--for`, a link's name): short, lowercase, safe in file names and ids. */
const ENVIRONMENT_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Why a name cannot name an environment, or null when it can. */
export function environmentNameProblem(name: string): string | null {
  return ENVIRONMENT_NAME.test(name)
    ? null
    : "must be 1 to 63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. mac, home-server)";
}
