import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  defineAdapter,
  harnessEnvironment,
  type McpEndpointGrant,
  type OrchestrationAdapter,
  type PluginContext,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "@switchyard/sdk";
import { TEMPLATE_CAPABILITIES } from "./template-capabilities.js";
import { TemplateSession, type TemplateLaunch } from "./template-session.js";
import { TEMPLATE_ENV } from "./template-wire.js";

/** The stand-in harness shipped in this package (`harness/`), run when no `command` is configured. */
export const BUNDLED_HARNESS = fileURLToPath(new URL("../harness/template-harness.mjs", import.meta.url));

/** The driver options, validated (see `src/index.ts`). */
export interface TemplateOptions {
  /** The harness executable; unset runs the bundled stand-in with this Node. */
  readonly command?: string | undefined;
  /** Its arguments (never secrets: every local user can read a command line). */
  readonly args: readonly string[];
  /** Models to advertise. */
  readonly models: readonly string[];
}

/** The command line of the harness: the configured one, else the bundled stand-in. */
export function harnessCommand(options: TemplateOptions): { command: string; args: readonly string[] } {
  return options.command !== undefined
    ? { command: options.command, args: options.args }
    : { command: process.execPath, args: [BUNDLED_HARNESS, ...options.args] };
}

/**
 * The MCP grant reaches the harness in its environment: the URL and this session's token, read by
 * the harness's MCP client as a bearer header. With no grant the variables are removed, so a
 * stale token from the host's own environment can never reach it.
 */
function mcpEnvironment(grant: McpEndpointGrant | null): Record<string, string | undefined> {
  return {
    [TEMPLATE_ENV.mcpUrl]: grant?.url,
    [TEMPLATE_ENV.mcpToken]: grant?.token,
    [TEMPLATE_ENV.mcpServer]: grant?.serverName,
    [TEMPLATE_ENV.mcpToolTimeoutMs]: grant !== null ? String(grant.toolTimeoutMs) : undefined,
  };
}

/** The adapter of one configured instance: the kit's shell around {@link TemplateSession}. */
export function createTemplateAdapter(
  instance: ProviderInstanceDescriptor,
  options: TemplateOptions,
  context: PluginContext,
): OrchestrationAdapter {
  const { command, args } = harnessCommand(options);
  // The instance's home when it has one (the user's choice), else this plugin's own data folder.
  const home = instance.homePath ?? context.paths.dataDir;
  return defineAdapter({
    instance,
    driverKind: "template",
    capabilities: TEMPLATE_CAPABILITIES,
    /** Looks only (starts nothing, writes nothing), so it answers both probe depths the same way. */
    async probe(): Promise<ProviderStatus> {
      const found = await context.process.which(command);
      if (found === null) {
        return {
          installed: false,
          executable: false,
          authenticated: "unknown",
          models: [],
          message: `${command} was not found on PATH; set the driver option "command" to the harness executable.`,
        };
      }
      if (options.command === undefined && !existsSync(BUNDLED_HARNESS)) {
        return {
          installed: false,
          executable: false,
          authenticated: "unknown",
          models: [],
          message: `The bundled harness ${BUNDLED_HARNESS} is missing; reinstall the plugin.`,
        };
      }
      // The stand-in needs no login; a real harness reads its credentials here (never a model call).
      return {
        installed: true,
        executable: true,
        authenticated: "unknown",
        models: [...options.models, ...instance.customModels].map((id) => ({ id })),
      };
    },
    createSession(input, onClosed) {
      const launch: TemplateLaunch = {
        command,
        args,
        env: harnessEnvironment({
          instance,
          homeVariable: TEMPLATE_ENV.home,
          own: { [TEMPLATE_ENV.home]: home, ...mcpEnvironment(input.mcp) },
        }),
      };
      return new TemplateSession(input, launch, context, onClosed);
    },
  });
}
