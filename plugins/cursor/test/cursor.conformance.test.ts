/**
 * The shared adapter conformance suite against the real Cursor SDK (1.0.32) in its Node 22
 * sidecar, pointed at the fake Cursor backend, through a real Switchyard host. Needs the built
 * plugin and testkit (`npx tsc -b plugins/cursor testkit`) and the pinned Node 22
 * (`npm ci --prefix ci/node22 --ignore-scripts`): skipped, saying so, without it; required in CI.
 */
import { describe } from "vitest";
import { FakeCursorBackend, createCursorHome } from "@switchyard/testkit";
import { describeAdapterConformance, fakeCursorScript } from "@switchyard/testkit/conformance";
import { NODE22, NODE22_GATE, PLUGIN_DIR } from "./cursor-lab.js";

describe.skipIf(NODE22_GATE.skip)("cursor on Node 22", () => {
  describeAdapterConformance({
    name: "cursor sdk (fake backend)",
    pluginDir: PLUGIN_DIR,
    driver: "cursor",
    async setup() {
      const backend = await FakeCursorBackend.start();
      const home = await createCursorHome({ backendUrl: backend.url });
      return {
        instance: { options: { nodePath: NODE22 }, homePath: home.home, environment: home.env },
        script: fakeCursorScript(backend),
        async teardown() {
          await backend.close();
          await home.cleanup();
        },
      };
    },
  });
});
