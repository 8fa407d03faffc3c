import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHost, type TestHost } from "@switchyard/testkit";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { connectMcp, mustCall } from "./support/mcp-client.js";

// Work an agent or client starts without naming a model runs on the provider's default: the
// model its probe marks `isDefault` (what the harness is configured to use: Codex's config.toml
// `model`, Pi's settings.json, an ACP session's current model, Claude's ANTHROPIC_MODEL), which
// need not be the first it lists (`pi --list-models` sorts by provider).

describe("the model of new work that names none", () => {
  let lab: TestHost;
  let client: Client;
  beforeAll(async () => {
    lab = await startTestHost({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        {
          id: "configured",
          driver: "scripted",
          options: { models: ["listed-first", "the-default"], defaultModel: "the-default" },
        },
        {
          id: "unsaid",
          driver: "scripted",
          options: { models: ["listed-first", "listed-second"], defaultModel: "none-of-them" },
        },
      ],
    });
    client = await connectMcp(lab.server!.mcpUrl, lab.issueClientToken());
  });
  afterAll(async () => {
    await client?.close();
    await lab?.stop();
  });

  async function modelOfNewThread(target: Record<string, unknown>): Promise<string | null> {
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      projectId: lab.projectId,
      threads: [{ title: "t", prompt: "@@reply ok", target }],
    });
    const threadId = created.threads[0]!.thread.threadId;
    expect((await lab.waitForRun(threadId)).status).toBe("completed");
    return (lab.host.store.get("thread", threadId) as { model: string | null }).model;
  }

  it("is the provider's default model, not merely the first it lists", async () => {
    expect(await modelOfNewThread({ providerInstanceId: "configured" })).toBe("the-default");
  });

  it("is the first model listed when the provider marks none as its default", async () => {
    expect(await modelOfNewThread({ providerInstanceId: "unsaid" })).toBe("listed-first");
  });

  it("is the one the caller names when it names one", async () => {
    expect(await modelOfNewThread({ providerInstanceId: "configured", model: "listed-first" })).toBe("listed-first");
  });
});
