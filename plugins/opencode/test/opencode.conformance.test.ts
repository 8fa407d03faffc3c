/**
 * The shared adapter conformance suite against the real `opencode serve` (opencode-ai 1.18.33),
 * driven by the scripted Chat Completions model server, through a real Switchyard host. Needs
 * the built plugin (`npx tsc -b plugins/opencode`).
 */
import { ScriptedModelServer } from "@switchyard/testkit";
import { describeAdapterConformance, scriptedModelScript } from "@switchyard/testkit/conformance";
import { PLUGIN_DIR, createTwoModelHome, hostInstance } from "./opencode-lab.js";

describeAdapterConformance({
  name: "opencode serve",
  pluginDir: PLUGIN_DIR,
  driver: "opencode",
  async setup() {
    const server = await ScriptedModelServer.start();
    const home = await createTwoModelHome(server);
    const { options, environment } = hostInstance("subject", home);
    return {
      instance: { options, environment },
      // Approvals come from OpenCode's own permission config in approval-required mode.
      script: scriptedModelScript(server),
      async teardown() {
        await server.close();
        await home.cleanup();
      },
    };
  },
});
