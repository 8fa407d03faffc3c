/**
 * The shared adapter conformance suite against the real `pi --mode rpc`, driven by the scripted
 * model server, through a real Switchyard host. Needs the built plugin (`npx tsc -b plugins/pi`).
 */
import { ScriptedModelServer, createPiHome } from "@switchyard/testkit";
import { describeAdapterConformance, scriptedModelScript } from "@switchyard/testkit/conformance";
import { PLUGIN_DIR } from "./pi-lab.js";

describeAdapterConformance({
  name: "pi --mode rpc",
  pluginDir: PLUGIN_DIR,
  driver: "pi",
  async setup() {
    const server = await ScriptedModelServer.start();
    const home = await createPiHome({ modelServerUrl: server.url });
    return {
      instance: { options: {}, homePath: home.home, environment: home.env },
      // Pi's approvals come from the Switchyard extension before `bash` in approval-required mode.
      script: scriptedModelScript(server),
      async teardown() {
        await server.close();
        await home.cleanup();
      },
    };
  },
});
