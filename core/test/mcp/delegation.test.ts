import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import { ROLE_INSTRUCTIONS } from "../../src/services/delegation/role-instructions.js";

describe("MCP delegation lifecycle (real endpoint, engine, SQLite; two scripted providers)", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("discovers capabilities: inheritance, short model lists, partial runtime modes, and why providers cannot run", async () => {
    const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "auto-accept-edits" });
    const caps = await mustCall<{
      callerKind: string;
      inheritedProvider: { providerInstanceId: string; model: string | null };
      parentModes: { runtimeMode: string; interactionMode: string };
      parentRunActive: boolean;
      providers: {
        providerInstanceId: string;
        canRunChildTasks: boolean;
        constraints: string[];
        models: { id: string }[];
        omittedModels: number;
        runtimeModes?: string[];
        steering: string;
      }[];
      features: Record<string, boolean>;
    }>(parent.client, "orchestrator_capabilities", {});
    expect(caps).toMatchObject({
      callerKind: "agent",
      inheritedProvider: { providerInstanceId: "alpha" },
      parentModes: { runtimeMode: "auto-accept-edits", interactionMode: "default" },
      parentRunActive: true,
    });
    const byId = Object.fromEntries(caps.providers.map((p) => [p.providerInstanceId, p]));
    expect(byId.alpha).toMatchObject({ canRunChildTasks: true, steering: "native", omittedModels: 0 });
    expect(byId.alpha!.runtimeModes).toBeUndefined();
    expect(byId.beta).toMatchObject({
      canRunChildTasks: true,
      steering: "interrupt_restart",
      runtimeModes: ["approval-required", "auto-accept-edits"],
      omittedModels: 4,
    });
    expect(byId.beta!.models).toHaveLength(8);
    expect(byId.gamma).toMatchObject({ canRunChildTasks: false, constraints: [expect.stringContaining("disabled")] });
    expect(byId.delta!.canRunChildTasks).toBe(false);
    expect(byId.delta!.constraints.join(" ")).toContain("installed=false");
    expect(caps.features).toMatchObject({ polling: true, cancellation: true, batchThreadCreation: true });
    const searched = await mustCall<{ providers: { providerInstanceId: string; models: { id: string }[] }[] }>(
      parent.client,
      "orchestrator_capabilities",
      { search: "beta-12" },
    );
    expect(searched.providers.find((p) => p.providerInstanceId === "beta")!.models.map((m) => m.id)).toContain(
      "beta-12",
    );
    parent.release();
  });

  it("delegates across providers with mode wait: prompt-only child, lineage, transfers, parent item", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const result = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@reply the answer is 42",
      target: { providerInstanceId: "beta" },
      role: "research",
      mode: "wait",
      title: "Find the answer",
    });
    expect(result).toMatchObject({
      status: "completed",
      workState: "result_available",
      summary: "the answer is 42",
      providerInstanceId: "beta",
      model: "beta-1",
      waitTimedOut: false,
      hasPendingQuestion: false,
      pendingApproval: null,
    });
    expect(result.childThreadLink).toBe(`switchyard-thread://v2/${lab.registry.environmentId}/${result.childThreadId}`);
    expect(result.childThreadWebUrl).toBe(`${lab.server.url}/threads/${result.childThreadId}`);
    const store = lab.host.store;
    const child = store.get("thread", result.childThreadId)!;
    expect(child.lineage).toMatchObject({
      relationship: "subagent",
      parentThreadId: parent.threadId,
      delegatedTaskId: result.taskId,
      depth: 1,
    });
    expect(child.lineage.parentNodeId).toBe(`node:${store.get("delegatedTask", result.taskId)!.parentRunId}`);
    expect(child.createdBy).toBe("agent");
    expect(child.creationSource).toBe("mcp");
    // The child got only the task prompt and the role instruction: nothing of the parent's conversation.
    const attempts = store.select("attempt", "thread_id = ?", [child.id]);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.text).toBe("@@reply the answer is 42");
    expect(attempts[0]!.instructions).toBe(ROLE_INSTRUCTIONS.research);
    const userItems = store.select("item", "thread_id = ? AND kind = 'user_message'", [child.id]);
    expect(userItems.map((i) => [i.text, i.createdBy, i.creationSource])).toEqual([
      ["@@reply the answer is 42", "agent", "mcp"],
    ]);
    const transfers = store.select("contextTransfer", "delegated_task_id = ?", [result.taskId]);
    expect(transfers.map((t) => [t.kind, t.status]).sort()).toEqual([
      ["subagent_result", "consumed"],
      ["subagent_spawn", "consumed"],
    ]);
    expect(transfers.find((t) => t.kind === "subagent_result")!.id).toBe(result.resultContextTransferId);
    const parentItem = store.select("item", "thread_id = ? AND kind = 'subagent'", [parent.threadId])[0]!;
    expect(parentItem).toMatchObject({ status: "completed", text: "Find the answer" });
    expect(parentItem.data).toMatchObject({ origin: "app_owned", taskId: result.taskId, childThreadId: child.id });
    expect(store.get("node", result.childNodeId)).toMatchObject({ kind: "subagent", status: "completed" });
    parent.release();
  });

  it("delegates async and polls task_status until the result is available; the parent is not woken for it", async () => {
    const parent = await lab.liveAgent({ instance: "beta", runtimeMode: "auto-accept-edits" });
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate async-child @@reply async result",
      mode: "async",
      clientRequestId: "async-1",
    });
    expect(started).toMatchObject({
      status: expect.stringMatching(/running|queued/),
      workState: "working",
      summary: null,
      providerInstanceId: "beta",
    });
    const pending = await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: started.taskId });
    expect(pending.workState).toBe("working");
    lab.release("async-child");
    const done = await lab.host.waiter.waitFor(
      () => (lab.host.store.get("delegatedTask", started.taskId)!.finalizedAt ? true : null),
      { timeoutMs: 10_000 },
    );
    expect(done).toBe(true);
    const status = await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: started.taskId });
    expect(status).toMatchObject({ status: "completed", workState: "result_available", summary: "async result" });
    // Reading the terminal status acknowledged it: no wake message will follow.
    expect(lab.host.store.get("delegatedTask", started.taskId)!.delivery).toBe("acknowledged");
    parent.release();
    await lab.host.threads.waitForRun({ threadId: parent.threadId, timeoutMs: 10_000 });
    expect(
      lab.host.store.select("item", "thread_id = ? AND id LIKE 'message:task-result:%'", [parent.threadId]),
    ).toHaveLength(0);
  });

  it("wakes an idle parent once with the result of a task it never read", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate wake-child @@reply woken result",
      mode: "async",
    });
    parent.release();
    await lab.host.threads.waitForRun({ threadId: parent.threadId, timeoutMs: 10_000 });
    lab.release("wake-child");
    const wake = await lab.host.waiter.waitFor(
      () => lab.host.store.get("item", `message:task-result:${started.taskId}`),
      { timeoutMs: 10_000 },
    );
    expect(wake?.text).toContain("woken result");
    expect(wake).toMatchObject({ createdBy: "system", creationSource: "system" });
    await lab.host.threads.waitForRun({ threadId: parent.threadId, timeoutMs: 10_000 });
    expect(lab.host.store.get("delegatedTask", started.taskId)!.delivery).toBe("delivered");
    expect(
      lab.host.store.select("item", "thread_id = ? AND id LIKE 'message:task-result:%'", [parent.threadId]),
    ).toHaveLength(1);
  });

  it("puts a failed child's provider error before its progress", async () => {
    const parent = await lab.liveAgent();
    const result = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@fail rate limited by the provider",
      mode: "wait",
    });
    expect(result.status).toBe("failed");
    expect(result.summary).toMatch(/^Error: rate limited by the provider/);
    parent.release();
  });

  it("ends a wait on a blocking question, answers it with t3_pending_request, and finishes", async () => {
    const parent = await lab.liveAgent();
    const asked = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@ask Which database? @@reply done",
      mode: "wait",
      clientRequestId: "ask-1",
    });
    expect(asked).toMatchObject({ hasPendingQuestion: true, waitTimedOut: false, workState: "working" });
    const listed = await mustCall<{ requests: { requestId: string; questions: { id: string; question: string }[] }[] }>(
      parent.client,
      "t3_pending_request",
      { threadId: asked.childThreadId, action: "list" },
    );
    expect(listed.requests).toHaveLength(1);
    expect(listed.requests[0]!.questions[0]!.question).toBe("Which database?");
    const missing = await callTool(parent.client, "t3_pending_request", {
      threadId: asked.childThreadId,
      action: "respond",
      requestId: listed.requests[0]!.requestId,
      answers: {},
    });
    expect(missing).toMatchObject({ ok: false, code: "invalid_request" });
    await mustCall(parent.client, "t3_pending_request", {
      threadId: asked.childThreadId,
      action: "respond",
      requestId: listed.requests[0]!.requestId,
      answers: { q1: "SQLite" },
    });
    const finished = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@ask Which database? @@reply done",
      mode: "wait",
      clientRequestId: "ask-1",
    });
    expect(finished).toMatchObject({ taskId: asked.taskId, status: "completed", summary: "done" });
    // The parent was waiting when the question came, so it got it through the wait: no notice.
    expect(
      lab.host.store.select("item", "thread_id = ? AND id LIKE 'message:question:%'", [parent.threadId]),
    ).toHaveLength(0);
    parent.release();
  });

  it("notifies a parent that is not waiting about a child's question, by steering into its live turn", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@ask Ship it? @@reply shipped",
      mode: "async",
    });
    const notice = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.select("item", "thread_id = ? AND id LIKE 'message:question:%'", [parent.threadId])[0] ?? null,
      { timeoutMs: 10_000 },
    );
    expect(notice?.text).toContain("Ship it?");
    expect(notice?.data).toMatchObject({ delivery: "steered" });
    const request = lab.host.store.select("runtimeRequest", "thread_id = ?", [started.childThreadId])[0]!;
    expect(request.parentNotice).toMatchObject({ mode: "steered" });
    await mustCall(parent.client, "t3_pending_request", {
      threadId: started.childThreadId,
      action: "respond",
      requestId: request.id,
      answers: { q1: "yes" },
    });
    const finished = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.get("delegatedTask", started.taskId)!.finalizedAt
          ? lab.host.store.get("delegatedTask", started.taskId)
          : null,
      { timeoutMs: 10_000 },
    );
    expect(finished?.summary).toBe("shipped");
    parent.release();
  });

  it("queues a question notice for a parent that cannot steer, and cancels it when the question is answered first", async () => {
    const parent = await lab.liveAgent({ instance: "beta", runtimeMode: "auto-accept-edits" });
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@ask Proceed? @@reply proceeded",
      mode: "async",
    });
    const request = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [started.childThreadId])[0] ??
        null,
      { timeoutMs: 10_000 },
    );
    const noticed = await lab.host.waiter.waitFor(
      () => lab.host.store.get("runtimeRequest", request!.id)!.parentNotice,
      { timeoutMs: 10_000 },
    );
    expect(noticed).toMatchObject({ mode: "queued" });
    const noticeRun = lab.host.store.get("run", noticed!.runId!)!;
    expect(noticeRun).toMatchObject({ status: "queued", kind: "notification" });
    await mustCall(parent.client, "t3_pending_request", {
      threadId: started.childThreadId,
      action: "respond",
      requestId: request!.id,
      answers: { q1: "go" },
    });
    const cancelled = await lab.host.waiter.waitFor(
      () => (lab.host.store.get("run", noticeRun.id)!.status === "cancelled" ? true : null),
      { timeoutMs: 10_000 },
    );
    expect(cancelled).toBe(true);
    parent.release();
  });

  it("ends a wait when the child waits for approval of its own work, naming the request", async () => {
    const parent = await lab.liveAgent({ runtimeMode: "approval-required" });
    const result = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@approve rm -rf build @@reply cleaned",
      mode: "wait",
    });
    expect(result.pendingApproval).toMatchObject({ kind: "command", runId: result.childRunId });
    expect(result.hasPendingQuestion).toBe(false);
    // The approval is not the parent's to answer through t3_pending_request.
    const refused = await callTool(parent.client, "t3_pending_request", {
      threadId: result.childThreadId,
      action: "read",
      requestId: result.pendingApproval!.requestId,
    });
    expect(refused).toMatchObject({ ok: false, code: "invalid_request" });
    await lab.host.threads.respondToRequest(result.pendingApproval!.requestId, {
      kind: "approval",
      decision: "accept",
    });
    const status = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.get("delegatedTask", result.taskId)!.finalizedAt
          ? lab.host.store.get("delegatedTask", result.taskId)
          : null,
      { timeoutMs: 10_000 },
    );
    expect(status?.summary).toBe("cleaned");
    parent.release();
  });

  it("returns a resumable pending result when the wait cap passes, with progress notifications, and cancels nothing", async () => {
    const capped = await McpLab.start({ server: { maxWaitMs: 1_500 } });
    try {
      const parent = await capped.liveAgent();
      const progress: unknown[] = [];
      const outcome = await callTool<DelegateTaskResult>(
        parent.client,
        "delegate_task",
        { task: "@@gate slow-child @@reply slow", mode: "wait", timeoutMs: 600_000, clientRequestId: "slow" },
        { onprogress: (p) => progress.push(p) },
      );
      expect(outcome.ok).toBe(true);
      if (!outcome.ok) return;
      expect(outcome.value).toMatchObject({ waitTimedOut: true, workState: "working", status: "running" });
      expect(progress.length).toBeGreaterThan(0);
      capped.release("slow-child");
      const again = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
        task: "@@gate slow-child @@reply slow",
        mode: "wait",
        clientRequestId: "slow",
      });
      expect(again).toMatchObject({
        taskId: outcome.value.taskId,
        status: "completed",
        summary: "slow",
        waitTimedOut: false,
      });
      parent.release();
    } finally {
      await capped.stop();
    }
  });

  it("lets the client cancel a wait without cancelling the task", async () => {
    const parent = await lab.liveAgent();
    const controller = new AbortController();
    const call = callTool(
      parent.client,
      "delegate_task",
      { task: "@@gate abandoned @@reply later", mode: "wait", clientRequestId: "abort-1" },
      { signal: controller.signal },
    );
    await lab.host.waiter.waitFor(
      () => lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId])[0] ?? null,
      { timeoutMs: 10_000 },
    );
    controller.abort();
    await expect(call).rejects.toThrow();
    const task = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId])[0]!;
    lab.release("abandoned");
    const finished = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.get("delegatedTask", task.id)!.finalizedAt ? lab.host.store.get("delegatedTask", task.id) : null,
      { timeoutMs: 10_000 },
    );
    expect(finished?.status).toBe("completed");
    parent.release();
  });

  it("cancels a running task (and the tasks it delegated), keeps a finished one, and refuses other parents' tasks", async () => {
    const parent = await lab.liveAgent();
    const running = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate never-cancel @@reply no",
      mode: "async",
    });
    await lab.waitForLiveTurn(running.childThreadId);
    const cancelled = await mustCall<DelegateTaskResult & { cancelled: boolean; reason: string }>(
      parent.client,
      "task_cancel",
      { taskId: running.taskId, reason: "changed my mind" },
    );
    expect(cancelled).toMatchObject({ cancelled: true, reason: "changed my mind" });
    const settled = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.get("delegatedTask", running.taskId)!.finalizedAt
          ? lab.host.store.get("delegatedTask", running.taskId)
          : null,
      { timeoutMs: 10_000 },
    );
    expect(settled).toMatchObject({ status: "interrupted", delivery: "disposed" });
    expect(lab.host.store.get("thread", running.childThreadId)!.stopped).toBe(true);

    const finished = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@reply finished first",
      mode: "wait",
    });
    const again = await mustCall<DelegateTaskResult & { cancelled: boolean }>(parent.client, "task_cancel", {
      taskId: finished.taskId,
    });
    expect(again).toMatchObject({ cancelled: false, status: "completed", summary: "finished first" });

    const other = await lab.liveAgent();
    const foreign = await callTool(other.client, "task_status", { taskId: finished.taskId });
    expect(foreign).toMatchObject({ ok: false, code: "task_not_found" });
    const foreignCancel = await callTool(other.client, "task_cancel", { taskId: finished.taskId });
    expect(foreignCancel).toMatchObject({ ok: false, code: "task_not_found" });
    other.release();
    parent.release();
  });

  it("makes 100 concurrent identical calls one task", async () => {
    const parent = await lab.liveAgent();
    const calls = await Promise.all(
      Array.from({ length: 100 }, () =>
        callTool<DelegateTaskResult>(parent.client, "delegate_task", {
          task: "@@reply once only",
          mode: "async",
          clientRequestId: "same-key",
        }),
      ),
    );
    const ids = new Set(calls.map((c) => (c.ok ? c.value.taskId : `error:${(c as { code: string }).code}`)));
    expect([...ids]).toHaveLength(1);
    expect([...ids][0]).toMatch(/^task:/);
    expect(lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId])).toHaveLength(1);
    // The same key with other arguments is a different request: refused, not silently replayed.
    const changed = await callTool(parent.client, "delegate_task", {
      task: "@@reply something else",
      mode: "async",
      clientRequestId: "same-key",
    });
    expect(changed).toMatchObject({ ok: false, code: "invalid_request" });
    parent.release();
  });

  it("inherits provider, model and modes, steps an inherited mode down, and refuses escalation and unknown models", async () => {
    const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "full-access", interactionMode: "plan" });
    const inherited = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@reply inherited",
      mode: "wait",
    });
    const inheritedThread = lab.host.store.get("thread", inherited.childThreadId)!;
    expect(inheritedThread).toMatchObject({
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      interactionMode: "plan",
    });
    // beta offers no full-access: the inherited mode steps down to its broadest.
    const stepped = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@reply stepped",
      target: { driverKind: "scripted", providerInstanceId: "beta" },
      mode: "wait",
    });
    expect(lab.host.store.get("thread", stepped.childThreadId)).toMatchObject({
      runtimeMode: "auto-accept-edits",
      interactionMode: "plan",
    });
    expect(stepped.model).toBe("beta-1");
    const explicit = await callTool(parent.client, "delegate_task", {
      task: "x",
      target: { providerInstanceId: "beta" },
      runtimeMode: "full-access",
    });
    expect(explicit).toMatchObject({ ok: false, code: "invalid_request" });
    const escalation = await callTool(parent.client, "delegate_task", { task: "x", interactionMode: "default" });
    expect(escalation).toMatchObject({ ok: false, code: "interaction_mode_escalation_denied" });
    const model = await callTool(parent.client, "delegate_task", {
      task: "x",
      target: { providerInstanceId: "beta", model: "gpt-nonexistent" },
    });
    expect(model).toMatchObject({ ok: false, code: "model_unavailable" });
    parent.release();

    const narrow = await lab.liveAgent({ instance: "alpha", runtimeMode: "approval-required" });
    const runtime = await callTool(narrow.client, "delegate_task", { task: "x", runtimeMode: "full-access" });
    expect(runtime).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
    narrow.release();
  });

  it("refuses unavailable providers and explains why", async () => {
    const parent = await lab.liveAgent();
    for (const [target, text] of [
      [{ providerInstanceId: "gamma" }, "disabled"],
      [{ providerInstanceId: "delta" }, "installed=false"],
      [{ providerInstanceId: "nope" }, "not configured"],
      [{ driverKind: "codex" }, 'No provider instance uses driver "codex"'],
    ] as const) {
      const outcome = await callTool(parent.client, "delegate_task", { task: "x", target });
      expect(outcome, JSON.stringify(target)).toMatchObject({
        ok: false,
        code: "provider_unavailable",
        message: expect.stringContaining(text),
      });
    }
    parent.release();
  });

  it("enforces spawn budgets with a typed refusal", async () => {
    const tight = await McpLab.start({ budgets: { maxConcurrentChildrenPerRun: 2, maxDelegationDepth: 1 } });
    try {
      const parent = await tight.liveAgent();
      await mustCall(parent.client, "delegate_task", { task: "@@gate b1 @@reply 1", mode: "async" });
      const second = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
        task: '@@tool delegate_task {"task":"@@reply grandchild","mode":"wait"} @@gate b2',
        mode: "async",
      });
      const third = await callTool(parent.client, "delegate_task", { task: "@@reply 3", mode: "async" });
      expect(third).toMatchObject({
        ok: false,
        code: "invalid_request",
        details: { budget: "maxConcurrentChildrenPerRun" },
      });
      // The child tried to delegate one level deeper than the depth budget allows.
      const deep = await tight.host.waiter.waitFor(
        () =>
          tight.host.store.select(
            "item",
            "thread_id = ? AND kind = 'tool_call' AND json_extract(data, '$.data.output') LIKE '%maxDelegationDepth%'",
            [second.childThreadId],
          )[0] ?? null,
        { timeoutMs: 10_000 },
      );
      expect(deep).not.toBeNull();
      tight.release("b1");
      tight.release("b2");
      parent.release();
    } finally {
      await tight.stop();
    }
  });

  it("gives an outside client's session an attached parent, and refuses an agent without a live run", async () => {
    const client = await lab.client();
    const attached = await callTool<{ taskId: string }>(client, "delegate_task", {
      task: "@@reply x",
      target: { providerInstanceId: "alpha" },
    });
    if (!attached.ok) throw new Error(attached.message);
    const parentOf = lab.host.store.get("delegatedTask", attached.value.taskId)!.parentThreadId;
    expect(lab.host.store.get("thread", parentOf)!.lineage.relationship).toBe("attached");
    const parent = await lab.liveAgent();
    parent.release();
    await lab.host.threads.waitForRun({ threadId: parent.threadId, timeoutMs: 10_000 });
    expect(await callTool(parent.client, "delegate_task", { task: "x" })).toMatchObject({
      ok: false,
      code: "parent_not_active",
    });
  });

  it("refuses to cancel a task whose provider cannot interrupt its running turn", async () => {
    const rigid = await McpLab.start({
      providers: ({ gateDir }) => [
        { id: "alpha", driver: "scripted", options: { gateDir } },
        {
          id: "rigid",
          driver: "scripted",
          options: {
            gateDir,
            capabilities: {
              turns: { terminalStatusQuality: "strong" },
              runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
            },
          },
        },
      ],
    });
    try {
      const parent = await rigid.liveAgent();
      const task = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
        task: "@@gate rigid-child @@reply done anyway",
        target: { providerInstanceId: "rigid" },
        mode: "async",
      });
      await rigid.waitForLiveTurn(task.childThreadId);
      const refused = await callTool(parent.client, "task_cancel", { taskId: task.taskId });
      expect(refused).toMatchObject({
        ok: false,
        code: "task_not_cancellable",
        message: expect.stringContaining("cannot interrupt"),
      });
      rigid.release("rigid-child");
      const finished = await rigid.host.waiter.waitFor(
        () => rigid.host.store.get("delegatedTask", task.taskId)!.finalizedAt,
        { timeoutMs: 10_000 },
      );
      expect(finished).not.toBeNull();
      parent.release();
    } finally {
      await rigid.stop();
    }
  });
});
