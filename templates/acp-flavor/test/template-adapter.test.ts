import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedAgentCommand, startTestHost, type TestHost } from "@switchyard/testkit";
import { TEMPLATE_EXTENSION_METHODS } from "../src/template-wire.js";

const pluginDir = fileURLToPath(new URL("..", import.meta.url));

// What this flavor adds to the shared ACP adapter, through a real host and the testkit's
// scripted ACP agent over stdio: the question extension, and how the agent is found.
describe("template ACP flavor", () => {
  let lab: TestHost;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "template-acp-"));
    const agent = scriptedAgentCommand({
      name: "template-agent",
      vendorExtensions: { askUserQuestion: TEMPLATE_EXTENSION_METHODS.askUserQuestion },
      stateDir: join(root, "sessions"),
    });
    lab = await startTestHost({
      plugins: [pluginDir],
      providers: [
        { id: "agent", driver: "template", options: agent },
        { id: "missing", driver: "template", options: { command: "no-such-acp-agent" } },
      ],
    });
  });
  afterAll(async () => {
    await lab.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function pendingQuestion(threadId: string) {
    const request = await lab.host.waiter.waitFor(
      async () => (await lab.host.threads.pendingRequests(threadId)).find((r) => r.kind === "user_input") ?? null,
      { timeoutMs: 30_000 },
    );
    expect(request, "no question was raised").not.toBeNull();
    return request!;
  }

  it("turns the agent's question extension into a user-input request and hands back the answer", async () => {
    const threadId = await lab.createThread("agent", "@ask Which color? | red, blue", { runtimeMode: "full-access" });
    const request = await pendingQuestion(threadId);
    // Questions are never answered for the user, whatever the runtime mode.
    expect((await lab.host.threads.runs(threadId, 1))[0]?.status).toBe("waiting");
    await lab.host.threads.respondToRequest(request.id, { kind: "user_input", answers: { q1: "blue" } });
    const run = await lab.waitForRun(threadId);
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain('answers: {"Which color?":"blue"}');
    expect(lab.host.store.get("runtimeRequest", request.id)?.status).toBe("answered");
  });

  it("answers the agent `cancelled` when the question is dismissed", async () => {
    const threadId = await lab.createThread("agent", "@ask Proceed? | yes, no", { runtimeMode: "full-access" });
    const request = await pendingQuestion(threadId);
    await lab.host.threads.respondToRequest(request.id, { kind: "dismiss" });
    const run = await lab.waitForRun(threadId);
    expect(run.summary).toContain("question: cancelled");
    expect(lab.host.store.get("runtimeRequest", request.id)?.status).toBe("cancelled");
  });

  it("reports an agent that is not installed as unavailable, with why", async () => {
    const availability = await lab.host.providers.availability("missing", { refresh: true });
    expect(availability?.available).toBe(false);
    expect(availability?.reason).toContain("no-such-acp-agent");
  });

  it("refuses bad driver options as a config error naming the field", async () => {
    await expect(
      startTestHost({ plugins: [pluginDir], providers: [{ id: "bad", driver: "template", options: { args: "acp" } }] }),
    ).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining("providers[0].options.args"),
    });
  });
});
