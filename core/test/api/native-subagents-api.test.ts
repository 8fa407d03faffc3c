import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpLab } from "../support/mcp-lab.js";
import { ok, type ApiClient } from "../support/api-client.js";
import { FULL_ACCESS_CEILING, startApiLab } from "../support/api-lab.js";

/**
 * GET /threads/{threadId} and its item read: a provider-native sub-agent under the run that
 * spawned it (marked native, with model and usage), and its kept transcript read whole.
 */
describe("HTTP API: provider-native sub-agents", () => {
  let lab: McpLab;
  let operator: ApiClient;
  beforeAll(async () => {
    ({ lab, client: operator } = await startApiLab({
      capabilities: ["orchestration:operate"],
      ceiling: FULL_ACCESS_CEILING,
    }));
  });
  afterAll(async () => lab.stop());

  it("reads the thread's native sub-agents and one's transcript", async () => {
    const native = {
      title: "indexer",
      task: "Index the docs",
      agentType: "general-purpose",
      model: "alpha-small",
      usage: { inputTokens: 40, outputTokens: 4, costUsd: 0.01 },
      messages: [
        { role: "user", text: "Index the docs" },
        { role: "assistant", text: "Indexed 12 pages." },
      ],
    };
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [
          {
            prompt: `@@usage in=100 out=10 @@subagent ${JSON.stringify(native)} @@reply indexed`,
            target: { providerInstanceId: "alpha" },
          },
        ],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await ok(operator.get(`/threads/${threadId}/wait`));

    const read = await ok(operator.get(`/threads/${threadId}`));
    expect(read.nativeSubagents).toHaveLength(1);
    const [child] = read.nativeSubagents;
    expect(child).toMatchObject({
      origin: "provider_native",
      runId: read.runs[0].runId,
      title: "indexer",
      status: "completed",
      providerInstanceId: "alpha",
      model: "alpha-small",
      agentType: "general-purpose",
      usage: { tokens: { input: 40, output: 4, total: 44 }, costUsd: 0.01, countedIn: "parent_turn" },
      transcript: { messages: 2, dropped: 0, latest: { role: "assistant", text: "Indexed 12 pages." } },
    });
    // The thread's totals are its turn's: the child's 44 are inside them, not added.
    expect(read.usage.own.tokens.total).toBe(110);

    const transcript = await ok(
      operator.get(`/threads/${threadId}/items/${encodeURIComponent(child.itemId)}`, { part: "transcript" }),
    );
    expect(transcript).toMatchObject({
      kind: "subagent",
      part: "transcript",
      text: "user: Index the docs\n\nassistant: Indexed 12 pages.",
      nextOffset: null,
    });
  });
});
