import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";

type Shell = {
  threadId: string;
  link: string;
  title: string;
  status: string;
  settled: boolean;
  settledAt: string | null;
};
type Settle = { thread: Shell; changed: boolean; replayed: boolean };
type Wait = {
  runId: string | null;
  status: string;
  summary: string | null;
  waitTimedOut: boolean;
  endedBy: string;
  attention: { kind: string; requestId: string; requestKind: string; runId: string } | null;
  cursor: string;
};

/** Seed 002: agents coordinating persistent peer threads over the real MCP endpoint. */
describe("peer threads", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  const finishedThread = async (prompt: string, title: string) => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      title,
      prompt,
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    return thread.id;
  };

  it("settles a finished peer, lists and filters it like snoozed, revives it, and refuses to settle a busy one", async () => {
    const coordinator = await lab.liveAgent({ title: "Coordinator" });
    const peer = await finishedThread("@@reply peer-done", "Peer to settle");

    const settled = await mustCall<Settle>(coordinator.client, "set_thread_settled", { threadId: peer, settled: true });
    expect(settled).toMatchObject({ changed: true, replayed: false, thread: { threadId: peer, settled: true } });
    expect(settled.thread.settledAt).not.toBeNull();
    const onlySettled = await mustCall<{ threads: Shell[] }>(coordinator.client, "t3_thread_list", {
      settled: true,
      limit: 100,
    });
    expect(onlySettled.threads.map((t) => t.threadId)).toEqual([peer]);
    const active = await mustCall<{ threads: Shell[] }>(coordinator.client, "t3_thread_list", {
      settled: false,
      limit: 100,
    });
    expect(active.threads.map((t) => t.threadId)).not.toContain(peer);
    expect(active.threads.map((t) => t.threadId)).toContain(coordinator.threadId);
    const read = await mustCall<{ thread: Shell }>(coordinator.client, "t3_thread_read", { threadId: peer });
    expect(read.thread.settled).toBe(true);

    // Settling a settled thread changes nothing; a retry key replays the first answer.
    expect(
      await mustCall<Settle>(coordinator.client, "set_thread_settled", { threadId: peer, settled: true }),
    ).toMatchObject({ changed: false, thread: { settled: true } });
    const revived = await mustCall<Settle>(coordinator.client, "set_thread_settled", {
      threadId: peer,
      settled: false,
      clientRequestId: "revive-1",
    });
    expect(revived).toMatchObject({ changed: true, replayed: false, thread: { settled: false, settledAt: null } });
    expect(
      await mustCall<Settle>(coordinator.client, "set_thread_settled", {
        threadId: peer,
        settled: false,
        clientRequestId: "revive-1",
      }),
    ).toMatchObject({ changed: true, replayed: true });
    expect(
      await callTool(coordinator.client, "set_thread_settled", {
        threadId: peer,
        settled: true,
        clientRequestId: "revive-1",
      }),
    ).toMatchObject({ ok: false, code: "invalid_request" });

    // A message revives a settled thread: there is work in it again.
    await mustCall<Settle>(coordinator.client, "set_thread_settled", { threadId: peer, settled: true });
    const sent = await mustCall<{ runId: string }>(coordinator.client, "t3_thread_send", {
      threadId: peer,
      message: "@@reply again",
    });
    expect(lab.host.store.get("thread", peer)!.settledAt).toBeNull();
    await lab.host.threads.waitForRun({ threadId: peer, runId: sent.runId, timeoutMs: 10_000 });

    // A thread with unfinished work cannot be settled, and stays as it was.
    const { thread: busy } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      prompt: "@@gate busy-peer @@reply late",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.waitForLiveTurn(busy.id);
    const refused = await callTool(coordinator.client, "set_thread_settled", { threadId: busy.id, settled: true });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("cannot be settled"),
      details: { reason: "unfinished_runs" },
    });
    expect(lab.host.store.get("thread", busy.id)!.settledAt ?? null).toBeNull();
    lab.release("busy-peer");

    expect(
      await callTool(coordinator.client, "set_thread_settled", { threadId: "thread-missing", settled: true }),
    ).toMatchObject({ ok: false, code: "thread_not_found" });
    coordinator.release();
    await lab.host.threads.waitForRun({ threadId: coordinator.threadId, timeoutMs: 10_000 });
    // Changing another thread needs the caller's live run.
    expect(await callTool(coordinator.client, "set_thread_settled", { threadId: peer, settled: true })).toMatchObject({
      ok: false,
      code: "parent_not_active",
    });
  });

  it("tells the receiving agent which thread wrote, with a reply instruction a coordinator can leave out", async () => {
    const coordinator = await lab.liveAgent({ title: "Coordinator" });
    const { thread: peer } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      title: "Worker",
      createdBy: "user",
      creationSource: "cli",
    });
    const link = `switchyard-thread://v2/${lab.registry.environmentId}/${coordinator.threadId}`;

    const client = await lab.client();
    /** What the peer's model received, oldest first: the scripted model answers @@history with its conversation. */
    const received = async () => {
      const asked = await mustCall<{ runId: string }>(client, "t3_thread_send", {
        threadId: peer.id,
        message: "@@history",
      });
      const answer = await lab.host.threads.waitForRun({ threadId: peer.id, runId: asked.runId, timeoutMs: 10_000 });
      return [...answer.run!.summary!.matchAll(/\[user: ([\s\S]*?)\] \[assistant: /g)]
        .map((match) => match[1])
        .filter((text) => text !== "@@history");
    };
    const header = (reply: boolean) =>
      `<switchyard_message_source>\nFrom thread "Coordinator" ${link} (threadId ${coordinator.threadId}), sent with t3_thread_send.${reply ? ` To reply, call t3_thread_send with threadId "${coordinator.threadId}".` : ""}\n</switchyard_message_source>\n\n`;

    const first = await mustCall<{ runId: string }>(coordinator.client, "t3_thread_send", {
      threadId: peer.id,
      message: "please review",
      clientRequestId: "msg-1",
    });
    const answered = await lab.host.threads.waitForRun({ threadId: peer.id, runId: first.runId, timeoutMs: 10_000 });
    // The model takes the header as context and answers the message itself.
    expect(answered.run!.summary).toBe("scripted reply to: please review");
    const silent = await mustCall<{ runId: string }>(coordinator.client, "t3_thread_send", {
      threadId: peer.id,
      message: "just do it",
      replyToSource: false,
    });
    await lab.host.threads.waitForRun({ threadId: peer.id, runId: silent.runId, timeoutMs: 10_000 });
    // (A first turn also carries the orchestration instructions ahead of the message.)
    const [reviewed, done] = await received();
    expect(reviewed!.endsWith(`\n\n${header(true)}please review`)).toBe(true);
    expect(done).toBe(`${header(false)}just do it`);
    const read = await mustCall<{ items: { kind: string; details: Record<string, unknown> }[] }>(
      coordinator.client,
      "t3_thread_read",
      { threadId: peer.id, afterPosition: -1 },
    );
    expect(read.items.find((item) => item.kind === "user_message")!.details.source).toEqual({
      threadId: coordinator.threadId,
      link,
      title: "Coordinator",
    });

    // The retry key covers the message as written: a rename of the sender between retries replays, never conflicts.
    await mustCall(coordinator.client, "t3_thread_update", { action: "rename", title: "Renamed coordinator" });
    expect(
      await mustCall<{ runId: string; replayed: boolean }>(coordinator.client, "t3_thread_send", {
        threadId: peer.id,
        message: "please review",
        clientRequestId: "msg-1",
      }),
    ).toMatchObject({ runId: first.runId, replayed: true });
    expect(
      await callTool(coordinator.client, "t3_thread_send", {
        threadId: peer.id,
        message: "please review",
        replyToSource: false,
        clientRequestId: "msg-1",
      }),
    ).toMatchObject({ ok: false, code: "invalid_request" });

    // A client has no thread of its own: its message arrives as written.
    const plain = await mustCall<{ runId: string }>(client, "t3_thread_send", {
      threadId: peer.id,
      message: "from outside",
    });
    await lab.host.threads.waitForRun({ threadId: peer.id, runId: plain.runId, timeoutMs: 10_000 });
    expect((await received()).at(-1)).toBe("from outside");
    coordinator.release();
  });

  it("t3_thread_wait reports each attention request once, in order, then the finished run", async () => {
    const coordinator = await lab.liveAgent({ title: "Coordinator" });
    const { thread: peer } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "approval-required",
      prompt: "@@ask Which port? @@approve npm run build @@reply peer finished",
      createdBy: "user",
      creationSource: "cli",
    });

    const question = await mustCall<Wait>(coordinator.client, "t3_thread_wait", { threadId: peer.id });
    expect(question).toMatchObject({
      endedBy: "question",
      waitTimedOut: false,
      attention: { kind: "question", requestKind: "user_input" },
    });
    expect(question.status).not.toBe("completed");
    // The same question does not end a wait that passes its cursor.
    expect(
      await mustCall<Wait>(coordinator.client, "t3_thread_wait", {
        threadId: peer.id,
        cursor: question.cursor,
        timeoutMs: 0,
      }),
    ).toMatchObject({ endedBy: "timeout", waitTimedOut: true, attention: null, cursor: question.cursor });
    await lab.host.threads.respondToRequest(question.attention!.requestId, {
      kind: "user_input",
      answers: { q1: ["8080"] },
    });

    const approval = await mustCall<Wait>(coordinator.client, "t3_thread_wait", {
      threadId: peer.id,
      cursor: question.cursor,
    });
    expect(approval).toMatchObject({
      endedBy: "approval",
      attention: { kind: "approval", requestKind: "command", runId: question.attention!.runId },
    });
    expect(approval.attention!.requestId).not.toBe(question.attention!.requestId);
    expect(Number(approval.cursor)).toBeGreaterThan(Number(question.cursor));
    // Without the cursor, the approval still pending ends the wait again.
    expect(await mustCall<Wait>(coordinator.client, "t3_thread_wait", { threadId: peer.id })).toMatchObject({
      endedBy: "approval",
      attention: { requestId: approval.attention!.requestId },
    });
    await lab.host.threads.respondToRequest(approval.attention!.requestId, { kind: "approval", decision: "accept" });

    const finished = await mustCall<Wait>(coordinator.client, "t3_thread_wait", {
      threadId: peer.id,
      cursor: approval.cursor,
    });
    expect(finished).toMatchObject({
      endedBy: "run_finished",
      status: "completed",
      summary: "peer finished",
      attention: null,
      waitTimedOut: false,
    });

    const { thread: idle } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(await mustCall<Wait>(coordinator.client, "t3_thread_wait", { threadId: idle.id })).toMatchObject({
      endedBy: "idle",
      status: "idle",
      runId: null,
    });
    expect(
      await callTool(coordinator.client, "t3_thread_wait", { threadId: idle.id, cursor: "not-a-cursor" }),
    ).toMatchObject({ ok: false, code: "invalid_request" });
    coordinator.release();
  });
});
