// A harness turn that calls many tools (a parent delegating task after task) must not pile up
// abort listeners on its turn's signal: the scripted harness's MCP client is the one every
// delegation test and bench drives, and Node warns (MaxListenersExceededWarning) at the 11th.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";

describe("a turn's tool calls and its abort signal", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("makes twelve tool calls in one turn without a listener-leak warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const calls = Array.from({ length: 12 }, () => "@@tool orchestrator_capabilities {}").join("\n");
      const { thread } = await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        runtimeMode: "full-access",
        prompt: `${calls}\n@@reply twelve calls made`,
        createdBy: "user",
        creationSource: "cli",
      });
      const { run } = await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
      expect(run?.status).toBe("completed");
      const toolItems = lab.host.store.select("item", "thread_id = ? AND kind = 'tool_call'", [thread.id]);
      expect(toolItems.filter((item) => item.status === "completed")).toHaveLength(12);
      // process warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
  });
});
