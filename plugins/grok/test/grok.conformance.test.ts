import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { XAI_VENDOR_EXTENSIONS, countInScriptedAgentInput, scriptedAgentCommand } from "@switchyard/testkit";
import { describeAdapterConformance } from "@switchyard/testkit/conformance";
import { releaseGate } from "@switchyard/testkit/scripted-provider";

// Grok's CLI cannot be installed here (a native download outside npm): the shared suite runs the
// real Grok plugin, loaded through the plugin host, against the sdk's scripted ACP agent over
// real stdio. The agent advertises what `grok agent stdio` does (loadSession, http MCP) and
// speaks xAI's extension requests; its prompt directives are in testkit/src/acp-agent/script.ts.
describeAdapterConformance({
  name: "grok (scripted ACP agent)",
  pluginDir: fileURLToPath(new URL("..", import.meta.url)),
  driver: "grok",
  setup: async () => {
    const root = mkdtempSync(join(tmpdir(), "grok-conformance-"));
    const gateDir = join(root, "gates");
    const stateDir = join(root, "sessions");
    const { command, args } = scriptedAgentCommand({
      name: "grok",
      loadSession: true,
      mcp: { http: true },
      vendorExtensions: XAI_VENDOR_EXTENSIONS,
      stateDir,
      gateDir,
    });
    return {
      instance: { options: { command, args } },
      script: {
        text: (marker) => `@say ${marker}`,
        // The scripted agent's shell call: an `execute` tool call, then the reply.
        shell: (marker) => `@tool execute echo ${marker}\n@say shell said ${marker}`,
        hold: (gate, marker) => `@gate ${gate}\n@say ${marker}`,
        release: (gate) => releaseGate(gateDir, gate),
        mcpTool: (tool, toolArgs, marker) => `@mcp ${tool} ${JSON.stringify(toolArgs)}\n@say ${marker}`,
        recall: () => "@history",
        approval: (marker) => `@permission execute echo ${marker}\n@say approved ${marker}`,
        countInModelInput: (needle) => countInScriptedAgentInput(stateDir, needle),
      },
      teardown: () => rmSync(root, { recursive: true, force: true }),
    };
  },
});
