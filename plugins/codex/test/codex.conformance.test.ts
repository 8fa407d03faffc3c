import { ScriptedModelServer, createCodexHome } from "@switchyard/testkit";
import { describeAdapterConformance, scriptedModelScript } from "@switchyard/testkit/conformance";
import { PLUGIN_DIR } from "./codex-lab.js";

// The shared adapter conformance suite against the `codex` driver: the real codex 0.171
// app-server in a real Switchyard host, the model played by the scripted model server.
describeAdapterConformance({
  name: "codex app-server",
  pluginDir: PLUGIN_DIR,
  driver: "codex",
  setup: async () => {
    const server = await ScriptedModelServer.start();
    const home = await createCodexHome({ modelServerUrl: server.url });
    return {
      instance: { homePath: home.home, environment: home.env, options: {} },
      script: scriptedModelScript(server),
      teardown: async () => {
        await server.close();
        await home.cleanup();
      },
    };
  },
});
