import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { callTool } from "../support/mcp-client.js";

/**
 * Failures an outside client (CLI, script, other machine: no thread of its own) reads must not
 * speak of "this thread", and each must name the tool that was called, not another one.
 */
describe("failure messages for outside clients", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("task_status and task_cancel on an unknown task say it does not exist, without 'this thread' or another tool's name", async () => {
    const client = await lab.client();
    const status = await callTool(client, "task_status", { taskId: "task_missing" });
    expect(status).toMatchObject({ ok: false, code: "task_not_found", message: "Task task_missing does not exist." });
    const cancel = await callTool(client, "task_cancel", { taskId: "task_missing" });
    expect(cancel).toMatchObject({ ok: false, code: "task_not_found", message: "Task task_missing does not exist." });
  });

  it("an agent is told the task is not among its own, still without naming task_status from task_cancel", async () => {
    const agent = await lab.liveAgent();
    const cancel = await callTool(agent.client, "task_cancel", { taskId: "task_missing" });
    expect(cancel).toMatchObject({ ok: false, code: "task_not_found" });
    if (cancel.ok) throw new Error("unreachable");
    expect(cancel.message).toBe(
      "Task task_missing does not exist among the tasks your thread delegated (an agent sees only its own tasks).",
    );
    agent.release();
  });
});
