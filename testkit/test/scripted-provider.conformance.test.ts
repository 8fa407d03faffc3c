import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeAdapterConformance } from "../src/conformance/index.js";
import { releaseGate, SCRIPTED_PROVIDER_PLUGIN_DIR } from "../src/scripted-provider/index.js";

// The scripted test provider through the shared suite: the reference that every capability
// branch of the suite (native steer, interrupt, resume, native fork, approvals, MCP) passes.
describeAdapterConformance({
  name: "scripted provider",
  pluginDir: SCRIPTED_PROVIDER_PLUGIN_DIR,
  driver: "scripted",
  setup: async () => {
    const root = mkdtempSync(join(tmpdir(), "scripted-conformance-"));
    const gateDir = join(root, "gates");
    return {
      instance: { options: { gateDir, stateDir: join(root, "state") } },
      script: {
        text: (marker) => `@@reply ${marker}`,
        hold: (gate, marker) => `@@gate ${gate} @@reply ${marker}`,
        release: (gate) => releaseGate(gateDir, gate),
        mcpTool: (tool, args) => `@@tool ${tool} ${JSON.stringify(args)}`,
        recall: () => "@@history",
        approval: (marker) => `@@approve echo ${marker}`,
      },
      teardown: () => rmSync(root, { recursive: true, force: true }),
    };
  },
});

// The same suite against a provider that declares almost nothing: every refusal path.
describeAdapterConformance({
  name: "scripted provider with minimal capabilities",
  pluginDir: SCRIPTED_PROVIDER_PLUGIN_DIR,
  driver: "scripted",
  setup: async () => {
    const root = mkdtempSync(join(tmpdir(), "scripted-minimal-"));
    const gateDir = join(root, "gates");
    return {
      instance: {
        options: {
          gateDir,
          capabilities: { turns: { terminalStatusQuality: "strong" }, tools: { mcp: { http: true } } },
        },
      },
      script: {
        text: (marker) => `@@reply ${marker}`,
        hold: (gate, marker) => `@@gate ${gate} @@reply ${marker}`,
        release: (gate) => releaseGate(gateDir, gate),
        mcpTool: (tool, args) => `@@tool ${tool} ${JSON.stringify(args)}`,
        recall: () => "@@history",
      },
      teardown: () => rmSync(root, { recursive: true, force: true }),
    };
  },
});
