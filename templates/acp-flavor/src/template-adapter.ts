import { z } from "zod";
import { createAcpDriver, type AcpAdapterOptions, type AcpFlavor } from "@switchyard/sdk/acp";
import { TEMPLATE_CAPABILITIES } from "./template-capabilities.js";
import { TEMPLATE_EXTENSIONS } from "./template-extensions.js";

/** The driver options; the host validates a config entry with it before `create` runs. */
export const templateOptionsSchema = z
  .object({
    /** The agent's executable. */
    command: z.string().min(1).default("template-agent"),
    /** Its arguments for ACP over stdio (never secrets: every local user can read a command line). */
    args: z.array(z.string()).default(["acp"]),
  })
  .strict();

/** Driver options of an instance. */
export type TemplateOptions = z.output<typeof templateOptionsSchema>;

/**
 * The flavor: everything that differs between this agent and any other ACP agent, as data and
 * small functions. The shared adapter does the rest: the ACP connection, turns on the kit's
 * ledger, permission requests on its request book, MCP injection, resume, probing.
 */
export const templateFlavor: AcpFlavor<TemplateOptions> = {
  driverKind: "template",
  displayName: "Template (ACP)",
  optionsSchema: templateOptionsSchema,
  capabilities: TEMPLATE_CAPABILITIES,
  resolveLaunch: ({ instance, options }) => ({
    command: options.command,
    args: options.args,
    // The instance's home scopes the agent's config, sessions and login.
    ...(instance.homePath !== null ? { env: { TEMPLATE_HOME: instance.homePath } } : {}),
  }),
  // An `http` MCP server with the bearer header when the agent advertises mcpCapabilities.http,
  // else the host's stdio bridge (the token in its env). Never in argv, never logged.
  mcpTransport: "auto",
  // The user's Stop kills the agent's process group and reloads the session in a new one.
  hardInterrupt: "respawn",
  extensions: TEMPLATE_EXTENSIONS,
};

/** The driver; `adapterOptions.channelFactory` replaces the process spawn (in-process tests). */
export function createTemplateDriver(adapterOptions: AcpAdapterOptions = {}) {
  return createAcpDriver(templateFlavor, adapterOptions);
}
