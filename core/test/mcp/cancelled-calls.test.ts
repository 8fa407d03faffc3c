// A client's notifications/cancelled reaches the call it names on the stateless endpoint (it
// comes on a POST of its own): the handler's signal aborts and the exchange ends without an
// answer. A cancelled delegate_task wait used to keep waiting and, once the child finished,
// answer no one and mark the result acknowledged, so the parent never heard of it.
import dc from "node:diagnostics_channel";
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LiveWaits } from "../../src/services/live-waits.js";
import { CallsInFlight } from "../../src/transports/mcp/calls-in-flight.js";
import { McpLab } from "../support/mcp-lab.js";
import { untilGatesReached } from "../support/gates.js";
import { until } from "../support/until.js";

describe("cancelled MCP calls", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("end a delegate_task wait at once, and leave its result to reach the parent later", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const liveWaits = lab.host.container.resolve(LiveWaits);
    const statuses: number[] = [];
    const onFinish = ({ request, response }: { request: IncomingMessage; response: ServerResponse }) => {
      if (request.url?.startsWith("/mcp") && request.method === "POST") statuses.push(response.statusCode);
    };
    dc.subscribe("http.server.response.finish", onFinish as (message: unknown) => void);
    try {
      const controller = new AbortController();
      const waiting = parent.client.callTool(
        {
          name: "delegate_task",
          arguments: {
            task: "@@gate cancelled-child @@reply finished after the cancel",
            target: { providerInstanceId: "alpha" },
            mode: "wait",
          },
        },
        undefined,
        { signal: controller.signal, timeout: 60_000 },
      );
      await untilGatesReached(lab.t.gateDir, ["cancelled-child"]);
      await until("the parent to be blocked in its wait", () => liveWaits.isThreadBlocked(parent.threadId));
      const answeredBefore = statuses.length;
      controller.abort("the harness gave up");
      await expect(waiting).rejects.toThrow();
      // The server lets go of the wait (it held it until the child finished, or its cap), and
      // ends the POST without a JSON-RPC answer.
      await until("the wait to end on the server", () => !liveWaits.isThreadBlocked(parent.threadId));
      await until(
        "the delegate_task POST to end",
        () => statuses.slice(answeredBefore).includes(202) && statuses.length >= answeredBefore + 2,
      );

      const [task] = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId]);
      if (task === undefined) throw new Error("no delegated task");
      lab.release("cancelled-child");
      await lab.host.waiter.waitFor(() => lab.host.store.get("delegatedTask", task.id)!.finalizedAt, {
        timeoutMs: 15_000,
      });
      // Nobody read the result: it is not marked as read, so it is delivered to the parent.
      expect(lab.host.store.get("delegatedTask", task.id)!.delivery).not.toBe("acknowledged");

      // The client goes on with its next call on the same connection.
      const listed = await parent.client.callTool({ name: "t3_thread_list", arguments: { projectId: lab.projectId } });
      expect(listed.isError).toBeFalsy();
    } finally {
      dc.unsubscribe("http.server.response.finish", onFinish as (message: unknown) => void);
      parent.release();
    }
  });

  it("end a wait answered as a progress stream too", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const liveWaits = lab.host.container.resolve(LiveWaits);
    try {
      const controller = new AbortController();
      const waiting = parent.client.callTool(
        {
          name: "delegate_task",
          arguments: {
            task: "@@gate streamed-child @@reply streamed",
            target: { providerInstanceId: "alpha" },
            mode: "wait",
          },
        },
        undefined,
        { signal: controller.signal, timeout: 60_000, onprogress: () => undefined },
      );
      await untilGatesReached(lab.t.gateDir, ["streamed-child"]);
      await until("the parent to be blocked in its wait", () => liveWaits.isThreadBlocked(parent.threadId));
      controller.abort("the harness gave up");
      await expect(waiting).rejects.toThrow();
      await until("the wait to end on the server", () => !liveWaits.isThreadBlocked(parent.threadId));
      const [task] = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId]);
      lab.release("streamed-child");
      await lab.host.waiter.waitFor(() => lab.host.store.get("delegatedTask", task!.id)!.finalizedAt, {
        timeoutMs: 15_000,
      });
      expect(lab.host.store.get("delegatedTask", task!.id)!.delivery).not.toBe("acknowledged");
    } finally {
      parent.release();
    }
  });

  it("cancel neither of two calls of one credential that share the id the cancel names", () => {
    const calls = new CallsInFlight();
    const cancelled: string[] = [];
    const notification = { jsonrpc: "2.0" as const, method: "notifications/cancelled", params: { requestId: 7 } };
    const forgetA = calls.register("credential", [7], () => cancelled.push("a"));
    calls.register("credential", [7], () => cancelled.push("b"));
    calls.register("other credential", [8], () => cancelled.push("c"));
    calls.cancelNamed("credential", [notification]);
    expect(cancelled).toEqual([]);
    // Another credential's cancel never reaches a call of this one; "7" is not 7.
    calls.cancelNamed("other credential", [notification]);
    calls.cancelNamed("credential", [{ ...notification, params: { requestId: "7" } }]);
    expect(cancelled).toEqual([]);
    forgetA();
    calls.cancelNamed("credential", [notification]);
    expect(cancelled).toEqual(["b"]);
  });
});
