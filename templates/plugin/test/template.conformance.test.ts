import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeAdapterConformance } from "@switchyard/testkit/conformance";

const pluginDir = fileURLToPath(new URL("..", import.meta.url));
const harness = fileURLToPath(new URL("./fixtures/line-harness.mjs", import.meta.url));

// The shared suite against the real plugin and a stand-in harness process.
describeAdapterConformance({
  name: "template",
  pluginDir,
  driver: "template",
  setup: async () => {
    const gates = mkdtempSync(join(tmpdir(), "template-gates-"));
    return {
      instance: { options: { command: process.execPath, args: [harness], models: ["template-model"] } },
      script: {
        text: (marker) => `say ${marker}`,
        hold: (gate, marker) => `HOLD ${join(gates, gate)} then say ${marker}`,
        release: (gate) => writeFileSync(join(gates, gate), "go"),
        recall: (marker) => `recall ${marker}`,
      },
      teardown: () => rmSync(gates, { recursive: true, force: true }),
    };
  },
});
