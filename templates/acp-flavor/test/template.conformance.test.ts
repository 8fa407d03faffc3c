import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { scriptedAgentCommand } from "@switchyard/testkit";
import { describeAdapterConformance } from "@switchyard/testkit/conformance";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { TEMPLATE_EXTENSION_METHODS } from "../src/template-wire.js";

/** Every prompt the agent received, oldest session file first (it stores each session's turns). */
function promptsReceived(sessionsDir: string): string[] {
  return readdirSync(sessionsDir)
    .filter((file) => file.endsWith(".json"))
    .sort((a, b) => statSync(join(sessionsDir, a)).mtimeMs - statSync(join(sessionsDir, b)).mtimeMs)
    .flatMap(
      (file) => (JSON.parse(readFileSync(join(sessionsDir, file), "utf8")) as { history: { user: string }[] }).history,
    )
    .map((turn) => turn.user);
}

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
    const sessionsDir = join(root, "sessions");
    const { command, args } = scriptedAgentCommand({
      name: "template-agent",
      loadSession: true,
      mcp: { http: true },
      vendorExtensions: { askUserQuestion: TEMPLATE_EXTENSION_METHODS.askUserQuestion },
      stateDir: sessionsDir,
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
        // ACP has no system prompt, so the host folds the instructions into the prompt: the
        // prompt is the model's whole input, and the instructions must be in it exactly once.
        countInModelInput: (needle) => {
          const newest = promptsReceived(sessionsDir)
            .filter((prompt) => prompt.includes(needle))
            .at(-1);
          return newest === undefined ? 0 : newest.split(needle).length - 1;
        },
      },
      teardown: () => rmSync(root, { recursive: true, force: true }),
    };
  },
});
