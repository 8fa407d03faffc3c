/**
 * The top-level commands switchyard has itself (and their aliases). A plugin may not contribute
 * a command group under one of these names; the CLI test checks the list against the program.
 */
export const HOST_COMMAND_NAMES: readonly string[] = [
  "serve",
  "providers",
  "doctor",
  "plugin",
  "plugins",
  "project",
  "profiles",
  "token",
  "schedules",
  "ui",
  "grant",
  "link",
  "audit",
  "mcp-bridge",
  "connect",
  "disconnect",
  "connections",
  "status",
  "threads",
  "worktrees",
  "run",
  "demo",
  "help",
];
