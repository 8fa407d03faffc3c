import { z } from "zod";
import { createAcpDriver, type AcpAdapterOptions, type AcpFlavor } from "@switchyard/sdk/acp";
import { GROK_CAPABILITIES, refineGrokCapabilities } from "./grok-capabilities.js";
import { XAI_EXTENSIONS } from "./grok-extensions.js";

/** Validates Grok driver options. */
export const grokOptionsSchema = z
  .object({
    /** The Grok CLI. */
    command: z.string().min(1).default("grok"),
    /** Its arguments for ACP over stdio. */
    args: z.array(z.string()).default(["agent", "stdio"]),
    /** The `authenticate` method to use when Grok lists auth methods; default: its cached login. */
    authMethodId: z.string().min(1).optional(),
  })
  .strict();

/** Driver options for a Grok instance. */
export type GrokOptions = z.output<typeof grokOptionsSchema>;

/** The Grok flavor of the shared ACP adapter: data, plus xAI's extension requests. */
export const grokFlavor: AcpFlavor<GrokOptions> = {
  driverKind: "grok",
  displayName: "Grok",
  // Grok's CLI is a native download from xAI, not an npm package.
  install: "Install xAI's Grok CLI so that `grok` is on PATH",
  optionsSchema: grokOptionsSchema,
  capabilities: GROK_CAPABILITIES,
  resolveLaunch: ({ instance, options, harnessHome }) => {
    // GROK_HOME scopes the CLI's config, sessions and login: a session's profile home, else the instance's.
    const home = harnessHome ?? instance.homePath;
    return { command: options.command, args: options.args, ...(home !== null ? { env: { GROK_HOME: home } } : {}) };
  },
  authMethodId: ({ options }) => options.authMethodId,
  mcpTransport: "auto",
  hardInterrupt: "respawn",
  extensions: XAI_EXTENSIONS,
  hooks: { refineCapabilities: (negotiated) => refineGrokCapabilities(negotiated) },
};

/** The Grok driver; `adapterOptions.channelFactory` replaces the process spawn (tests). */
export function createGrokDriver(adapterOptions: AcpAdapterOptions = {}) {
  return createAcpDriver(grokFlavor, adapterOptions);
}
