import { Command } from "commander";
import { HOST_VERSION } from "../util/host-version.js";
import { registerDemo } from "./commands/demo.js";
import { registerMcpBridge } from "./commands/mcp-bridge.js";
import { registerPluginCommands } from "./commands/plugin.js";
import { registerProject } from "./commands/project.js";
import { registerProviders } from "./commands/providers.js";
import { registerRegistry } from "./commands/registry.js";
import { registerServe } from "./commands/serve.js";
import { registerToken } from "./commands/token.js";

/** The `switchyard` command line. */
export function buildProgram(): Command {
  const program = new Command()
    .name("switchyard")
    .description("Switchyard: delegate work between coding agents on any provider, through one MCP endpoint")
    .version(HOST_VERSION, "-v, --version")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  registerServe(program);
  registerProviders(program);
  registerPluginCommands(program);
  registerProject(program);
  registerToken(program);
  registerMcpBridge(program);
  registerDemo(program);
  registerRegistry(program);
  return program;
}
