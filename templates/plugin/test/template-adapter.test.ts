import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHost, type TestHost } from "@switchyard/testkit";

const pluginDir = fileURLToPath(new URL("..", import.meta.url));
const harness = fileURLToPath(new URL("./fixtures/line-harness.mjs", import.meta.url));

describe("template adapter", () => {
  let lab: TestHost;
  beforeAll(async () => {
    lab = await startTestHost({
      plugins: [pluginDir],
      providers: [
        { id: "cli", driver: "template", options: { command: process.execPath, args: [harness] } },
        { id: "missing", driver: "template", options: { command: "no-such-harness-binary" } },
      ],
    });
  });
  afterAll(async () => lab.stop());

  it("puts the harness's stderr in a failed run's provider error", async () => {
    const threadId = lab.createThread("cli", "FAIL the model is down");
    const run = await lab.waitForRun(threadId);
    expect(run.status).toBe("failed");
    expect(run.error?.message).toContain("exited with code 3");
    expect(run.error?.message).toContain("Its stderr ended with:\nthe model is down");
  });

  it("reports a harness that is not installed as unavailable, with why", async () => {
    const availability = await lab.host.providers.availability("missing", { refresh: true });
    expect(availability?.available).toBe(false);
    expect(availability?.reason).toContain("no-such-harness-binary was not found on PATH");
  });

  it("refuses bad driver options as a config error naming the field", async () => {
    await expect(
      startTestHost({ plugins: [pluginDir], providers: [{ id: "bad", driver: "template", options: { command: 42 } }] }),
    ).rejects.toMatchObject({ code: "config_invalid", message: expect.stringContaining("providers[0].options.command") });
  });
});
