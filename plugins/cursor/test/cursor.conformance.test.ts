/**
 * The shared adapter conformance suite against the real Cursor SDK (1.0.32) in its sidecar (on
 * the host's own Node), pointed at the fake Cursor backend, through a real Switchyard host. Needs
 * the built plugin and testkit (`npx tsc -b plugins/cursor testkit`).
 */
import { describe } from "vitest";
import { FakeCursorBackend, createCursorHome } from "@switchyard/testkit";
import { describeAdapterConformance, fakeCursorScript } from "@switchyard/testkit/conformance";
import { PLUGIN_DIR } from "./cursor-lab.js";

describe("cursor", () => {
  describeAdapterConformance({
    name: "cursor sdk (fake backend)",
    pluginDir: PLUGIN_DIR,
    driver: "cursor",
    async setup() {
      const backend = await FakeCursorBackend.start();
      const home = await createCursorHome({ backendUrl: backend.url });
      return {
        instance: { homePath: home.home, environment: home.env },
        script: fakeCursorScript(backend),
        async teardown() {
          await backend.close();
          await home.cleanup();
        },
      };
    },
  });
});
