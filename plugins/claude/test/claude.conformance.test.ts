/**
 * The shared adapter conformance suite against the real Claude Agent SDK (0.3.337) and its
 * bundled `claude`, driven by the scripted Anthropic Messages server, through a real Switchyard
 * host. Needs the built plugin (`npx tsc -b plugins/claude`).
 */
import { ScriptedModelServer, createClaudeHome } from "@switchyard/testkit";
import { describeAdapterConformance, scriptedModelScript } from "@switchyard/testkit/conformance";
import { FAKE_MODEL, PLUGIN_DIR } from "./claude-lab.js";

describeAdapterConformance({
  name: "claude agent sdk",
  pluginDir: PLUGIN_DIR,
  driver: "claude",
  async setup() {
    const server = await ScriptedModelServer.start();
    // Tool search stays on (the SDK's default): the Switchyard tools must be reachable anyway.
    const home = await createClaudeHome({ modelServerUrl: server.url, model: FAKE_MODEL, toolSearch: true });
    return {
      instance: { options: {}, homePath: home.home, environment: home.env },
      // Approval-required asks before every shell command, `echo` included.
      script: scriptedModelScript(server),
      async teardown() {
        await server.close();
        await home.cleanup();
      },
    };
  },
});
