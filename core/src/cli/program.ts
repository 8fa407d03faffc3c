import { Command } from "commander";
import { HOST_VERSION } from "../util/host-version.js";
import { registerConnect } from "./commands/connect.js";
import { registerContributedCommands } from "./commands/contributed.js";
import { registerDemo } from "./commands/demo.js";
import { registerDoctor } from "./commands/doctor.js";
import { registerGrant } from "./commands/grant.js";
import { registerLink } from "./commands/link.js";
import { registerAudit } from "./commands/audit.js";
import { registerMcpBridge } from "./commands/mcp-bridge.js";
import { registerPluginCommands } from "./commands/plugin.js";
import { registerProfiles } from "./commands/profiles.js";
import { registerProject } from "./commands/project.js";
import { registerProviders } from "./commands/providers.js";
import { registerRun } from "./commands/run.js";
import { registerSchedules } from "./commands/schedules.js";
import { registerServe } from "./commands/serve.js";
import { registerStatus } from "./commands/status.js";
import { registerThreads } from "./commands/threads.js";
import { registerToken } from "./commands/token.js";
import { registerUi } from "./commands/ui.js";
import { registerWorktrees } from "./commands/worktrees.js";

/** The commands switchyard has itself (their names are in HOST_COMMAND_NAMES). */
export function buildHostProgram(): Command {
  const program = new Command()
    .name("switchyard")
    .description("Switchyard: delegate work between coding agents on any provider, through one MCP endpoint")
    .version(HOST_VERSION, "-v, --version")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  registerServe(program);
  registerProviders(program);
  registerDoctor(program);
  registerPluginCommands(program);
  registerProject(program);
  registerProfiles(program);
  registerToken(program);
  registerSchedules(program);
  registerUi(program);
  registerGrant(program);
  registerLink(program);
  registerAudit(program);
  registerMcpBridge(program);
  registerConnect(program);
  registerStatus(program);
  registerThreads(program);
  registerWorktrees(program);
  registerRun(program);
  registerDemo(program);
  return program;
}

/**
 * The `switchyard` command line: its own commands, then the command groups plugins contribute
 * (read from their manifests; `argv` is only searched for `--home`, which says where to look).
 */
export function buildProgram(argv: readonly string[] = process.argv.slice(2)): Command {
  const program = buildHostProgram();
  registerContributedCommands(program, argv);
  return program;
}
