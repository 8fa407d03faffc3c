import { describe, expect, it } from "vitest";
import { DEMO_MODULE, loadDemoModule } from "../../src/cli/commands/demo.js";

// `switchyard demo` lives in @switchyard/testkit, which depends on core; core finds it at run
// time, so there is no build-time cycle and a Switchyard without the testkit says what to do.

describe("switchyard demo's module", () => {
  it("is the testkit's, found at run time", async () => {
    expect(DEMO_MODULE).toBe("@switchyard/testkit/demo");
    const demo = await loadDemoModule();
    expect(typeof demo.runDemo).toBe("function");
  });

  it("names the package to install when it is missing", async () => {
    await expect(loadDemoModule("@switchyard/testkit-not-installed/demo")).rejects.toThrow(
      /^switchyard demo needs @switchyard\/testkit-not-installed, which is not installed next to @switchyard\/core\. .*npm install @switchyard\/testkit-not-installed@0\.1\.0$/,
    );
  });
});
