import { join } from "node:path";
import { userHome, type ConnectionTarget, type EntrySpec, type HarnessConnector } from "../harness-connector.js";
import { findPiExtensionSource } from "./pi-extension-source.js";

function piAgentDir(target: ConnectionTarget): string {
  const dir = target.env.PI_CODING_AGENT_DIR;
  return dir !== undefined && dir !== "" ? dir : join(userHome(target.env), ".pi", "agent");
}

const EXTENSION_COPY = "switchyard-pi-extension.js";

/** The extension Pi discovers: it points the Switchyard extension at the endpoint and the state file, then hands over. */
function loader(spec: EntrySpec): string {
  const extension = join(spec.supportDir, EXTENSION_COPY);
  return [
    `import switchyardExtension from ${JSON.stringify(extension)};`,
    "// Written by `switchyard connect pi`: Switchyard's tools for this Pi (run `switchyard disconnect pi` to remove).",
    "// The token is in the state file, which only you can read; nothing secret is in this file or in Pi's environment.",
    `const settings = ${JSON.stringify({ SWITCHYARD_MCP_URL: spec.url, SWITCHYARD_MCP_SERVER_NAME: spec.serverName, SWITCHYARD_MCP_TOOL_TIMEOUT_MS: String(spec.toolTimeoutMs), SWITCHYARD_PI_STATE_FILE: spec.secretFile }, null, 2)};`,
    "export default async function switchyardConnection(pi) {",
    "  // A Pi that Switchyard started has its own bridge (and its session's token) already.",
    "  if (process.env.SWITCHYARD_MCP_URL) return;",
    "  for (const [name, value] of Object.entries(settings)) process.env[name] = value;",
    "  // The extension refuses to start without a token variable; the real token is read from the state file at each call.",
    '  if (!process.env.SWITCHYARD_MCP_TOKEN) process.env.SWITCHYARD_MCP_TOKEN = "in-state-file";',
    "  return switchyardExtension(pi);",
    "}",
    "",
  ].join("\n");
}

/**
 * Pi has no MCP client: the Switchyard extension (plugins/pi) bridges the tools. `connect pi`
 * copies it into Switchyard's home and writes a small extension into Pi's auto-discovered
 * folder (`~/.pi/agent/extensions/<key>/index.js`, or `.pi/extensions/<key>/` in a project)
 * that sets its environment and loads it. The token travels in the extension's state file
 * (read at every call), with `full-access` as its mode so a person's own Pi keeps its own
 * approval habits; the token's ceiling still bounds what Switchyard lets it start.
 */
export const piConnector: HarnessConnector = {
  id: "pi",
  displayName: "Pi",
  tokenDelivery: "file",
  configFile: (target) =>
    join(
      target.scope === "project" ? join(target.projectDir, ".pi") : piAgentDir(target),
      "extensions",
      "switchyard",
      "index.js",
    ),
  secretContent: (token) => `${JSON.stringify({ runtimeMode: "full-access", mcpToken: token })}\n`,
  tokenFromSecret: (text) => (JSON.parse(text) as { mcpToken?: string }).mcpToken ?? null,
  secretSuffix: ".state.json",
  apply: (_current, spec) => loader(spec),
  remove: () => "",
  read: (current) => (current.trim() === "" ? undefined : current),
  expected: (spec) => loader(spec),
  async supportFiles(spec) {
    return [{ file: join(spec.supportDir, EXTENSION_COPY), text: await findPiExtensionSource() }];
  },
};
