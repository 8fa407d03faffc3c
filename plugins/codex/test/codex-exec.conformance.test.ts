import { ScriptedModelServer, createCodexHome } from "@switchyard/testkit";
import { describeAdapterConformance, scriptedModelScript } from "@switchyard/testkit/conformance";
import { PLUGIN_DIR } from "./codex-lab.js";

// The shared adapter conformance suite against the `codex-exec` driver (@openai/codex-sdk, one
// `codex exec` per turn): steering degrades to interrupt-and-restart, forks to portable context,
// and no approvals are raised (codex exec cannot ask).
describeAdapterConformance({
  name: "codex exec",
  pluginDir: PLUGIN_DIR,
  driver: "codex-exec",
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
