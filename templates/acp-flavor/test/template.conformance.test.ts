import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { scriptedAgentCommand } from "@switchyard/testkit";
import { describeAdapterConformance } from "@switchyard/testkit/conformance";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { TEMPLATE_EXTENSION_METHODS } from "../src/template-wire.js";

// The testkit's shared suite against the real plugin, loaded through a real host's plugin host,
// driving the testkit's scripted ACP agent over real stdio: a protocol-faithful stand-in that
// advertises what the real agent does (here: loadSession, http MCP, the question extension).
// Its prompt directives are listed in the testkit (`@switchyard/testkit`, acp-agent/script).
// For the real agent, point `command`/`args` at it and script its model instead.
describeAdapterConformance({
  name: "template (scripted ACP agent)",
  pluginDir: fileURLToPath(new URL("..", import.meta.url)),
  driver: "template",
  setup: async () => {
    const root = mkdtempSync(join(tmpdir(), "template-acp-conformance-"));
    const gateDir = join(root, "gates");
    const { command, args } = scriptedAgentCommand({
      name: "template-agent",
      loadSession: true,
      mcp: { http: true },
      vendorExtensions: { askUserQuestion: TEMPLATE_EXTENSION_METHODS.askUserQuestion },
      stateDir: join(root, "sessions"),
      gateDir,
    });
    return {
      instance: { options: { command, args } },
      script: {
        text: (marker) => `@say ${marker}`,
        shell: (marker) => `@tool execute echo ${marker}\n@say shell said ${marker}`,
        hold: (gate, marker) => `@gate ${gate}\n@say ${marker}`,
        release: (gate) => releaseGate(gateDir, gate),
        mcpTool: (tool, toolArgs, marker) => `@mcp ${tool} ${JSON.stringify(toolArgs)}\n@say ${marker}`,
        recall: () => "@history",
        approval: (marker) => `@permission execute echo ${marker}\n@say approved ${marker}`,
      },
      teardown: () => rmSync(root, { recursive: true, force: true }),
    };
  },
});
