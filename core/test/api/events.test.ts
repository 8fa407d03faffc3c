import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { EventSink } from "../../src/services/events/event-cursor.js";
import { EventStreamService } from "../../src/services/events/event-stream-service.js";
import type { FeedEvent } from "../../src/services/events/public-event-feed.js";
import { callerFromScope } from "../../src/transports/caller-from-scope.js";
import { mustCall } from "../support/mcp-client.js";
import { ApiClient } from "../support/api-client.js";
import { startApiLab } from "../support/api-lab.js";
import { McpLab } from "../support/mcp-lab.js";
import { SseClient, type ReceivedEvent, type RefusedStream } from "../support/sse-client.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function eventsUrl(lab: McpLab, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `${lab.server.url}/api/v1/events${search === "" ? "" : `?${search}`}`;
}

function refused(opened: SseClient | RefusedStream): RefusedStream {
  if (opened instanceof SseClient) {
    opened.close();
    throw new Error("the stream was accepted");
  }
  return opened;
}

/** Every event's SSE id is its log sequence, and sequences only grow. */
function expectOrderedIds(events: readonly ReceivedEvent[]): void {
  for (const event of events) expect(event.id).toBe(String(event.payload.sequence));
  const sequences = events.map((event) => event.payload.sequence);
  expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  expect(new Set(sequences).size).toBe(sequences.length);
}

describe("GET /api/v1/events", () => {
  let lab: McpLab;
  let token: string;
  const streams: SseClient[] = [];
  const open = async (query: Record<string, string> = {}, options: { lastEventId?: string } = {}) => {
    const stream = await SseClient.connect(eventsUrl(lab, query), { token, ...options });
    streams.push(stream);
    return stream;
  };
  beforeAll(async () => {
    ({ lab, token } = await startApiLab(
      { capabilities: ["orchestration:read"] },
      { server: { eventStreamHeartbeatMs: 200 } },
    ));
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await lab.stop();
  });

  it("refuses a request without a valid bearer token, a token without read, a token in the URL, a foreign Host or Origin, and other methods", async () => {
    const missing = refused(await SseClient.open(eventsUrl(lab)));
    expect(missing.status).toBe(401);
    expect(missing.headers["www-authenticate"]).toContain("invalid_token");
    expect(missing.body.error.code).toBe("invalid_token");
    expect(refused(await SseClient.open(eventsUrl(lab), { headers: { authorization: "Basic abc" } })).status).toBe(401);
    expect(refused(await SseClient.open(eventsUrl(lab), { token: "sy_not-a-token" })).status).toBe(401);
    const noRead = lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: [] }).token;
    const denied = refused(await SseClient.open(eventsUrl(lab), { token: noRead }));
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("capability_denied");
    const inUrl = refused(await SseClient.open(eventsUrl(lab, { access_token: token }), { token }));
    expect(inUrl.status).toBe(400);
    expect(inUrl.body.error).toMatchObject({ code: "invalid_request", details: { parameter: "access_token" } });
    expect(inUrl.body.error.message).toContain("Authorization: Bearer");
    expect(refused(await SseClient.open(eventsUrl(lab), { token, headers: { host: "evil.example" } })).status).toBe(
      403,
    );
    expect(
      refused(await SseClient.open(eventsUrl(lab), { token, headers: { origin: "https://evil.example" } })).status,
    ).toBe(403);
    // An agent's credential reads events like any read token.
    const agent = await lab.liveAgent();
    const agentStream = await SseClient.connect(eventsUrl(lab), { token: await lab.tokenFor(agent.threadId) });
    agentStream.close();
    agent.release();
  });

  it("answers a typed failure for a filter or resume point it cannot serve", async () => {
    const failure = async (query: Record<string, string>, lastEventId?: string) => {
      const answer = refused(
        await SseClient.open(eventsUrl(lab, query), { token, ...(lastEventId !== undefined ? { lastEventId } : {}) }),
      );
      return { status: answer.status, code: answer.body.error.code, message: answer.body.error.message };
    };
    expect(await failure({ threadId: "thread_nope" })).toMatchObject({ status: 404, code: "thread_not_found" });
    expect(await failure({ taskId: "task_nope" })).toMatchObject({ status: 404, code: "task_not_found" });
    expect(await failure({ projectId: "project_nope" })).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await failure({ types: "run.finished,run.exploded" })).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining('"run.exploded"'),
    });
    expect(await failure({ descendants: "true" })).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining("needs threadId"),
    });
    expect(await failure({ descendants: "yes", threadId: "x" })).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    expect(await failure({ after: "-1" })).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await failure({}, "abc")).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining("Last-Event-ID"),
    });
    const newest = lab.host.store.lastSequence();
    expect(await failure({}, String(newest + 1000))).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining("another Switchyard home"),
    });
  });

  it("pushes a run's life as typed events, each with its log sequence as the SSE id", async () => {
    const stream = await open({ projectId: lab.projectId });
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      title: "approval run",
      runtimeMode: "approval-required",
      prompt: "@@approve rm -rf build @@reply cleaned",
      createdBy: "user",
      creationSource: "api",
    });
    const mine = (type: string) => (event: ReceivedEvent) =>
      event.payload.threadId === thread.id && event.type === type;
    const opened = await stream.waitFor(mine("request.opened"));
    expect(opened.payload.data.request).toMatchObject({
      kind: "approval",
      approvalKind: "command",
      status: "pending",
      request: { title: "rm -rf build" },
    });
    await lab.host.threads.respondToRequest(opened.payload.data.request.requestId, {
      kind: "approval",
      decision: "accept",
    });
    const finished = await stream.waitFor(mine("run.finished"));
    expect(finished.payload.data.run).toMatchObject({
      status: "completed",
      summary: expect.stringContaining("cleaned"),
      threadId: thread.id,
    });
    const events = stream.events.filter((event) => event.payload.threadId === thread.id);
    // The approval's timeline item appears and resolves as `item` events.
    expect(events.map((event) => event.type)).toEqual([
      "thread.created",
      "run.started",
      "message",
      "item",
      "request.opened",
      "request.answered",
      "item",
      "message",
      "run.finished",
    ]);
    expect(
      events
        .filter((event) => event.type === "item")
        .map((event) => [event.payload.data.item.kind, event.payload.data.item.status]),
    ).toEqual([
      ["runtime_request", "pending"],
      ["runtime_request", "completed"],
    ]);
    expect(events[0]).toMatchObject({
      type: "thread.created",
      payload: {
        projectId: lab.projectId,
        data: { thread: { threadId: thread.id, title: "approval run", relationship: "root" } },
      },
    });
    expect(events.find((event) => event.type === "message")!.payload.data.item).toMatchObject({
      role: "user",
      text: "@@approve rm -rf build @@reply cleaned",
    });
    expect(events.filter((event) => event.type === "message").map((event) => event.payload.data.item.role)).toEqual([
      "user",
      "assistant",
    ]);
    expect(events.filter((event) => event.type === "run.started")).toHaveLength(1);
    expect(events.find((event) => event.type === "request.answered")!.payload.data.request).toMatchObject({
      status: "answered",
      response: { kind: "approval", decision: "accept" },
    });
    expectOrderedIds(stream.events);
    for (const event of events)
      expect(event.payload).toMatchObject({ type: event.type, projectId: lab.projectId, at: expect.any(String) });
  });

  it("filters by project, by thread with or without its children, by task, and by type", async () => {
    const other = await lab.host.projects.add(mkdtempSync(join(tmpdir(), "switchyard-events-other-")), "other");
    const planner = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        title: "planner",
        createdBy: "user",
        creationSource: "api",
      })
    ).thread;
    const byProject = await open({ projectId: lab.projectId });
    const byThread = await open({ threadId: planner.id });
    const byTree = await open({ threadId: planner.id, descendants: "true" });
    const finishes = await open({ projectId: lab.projectId, types: "run.finished" });
    // A router child of the planner, and a thread in another project.
    const child = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "beta",
        parentThreadId: planner.id,
        prompt: "@@reply from-child",
        createdBy: "user",
        creationSource: "api",
      })
    ).thread;
    const elsewhere = (
      await lab.host.threads.createThread({
        projectId: other.id,
        providerInstanceId: "alpha",
        prompt: "@@reply elsewhere",
        createdBy: "user",
        creationSource: "api",
      })
    ).thread;
    // The planner runs the child's delivered result: the last event of this exchange.
    const plannerDone = (event: ReceivedEvent) =>
      event.type === "run.finished" && event.payload.threadId === planner.id;
    await byTree.waitFor(plannerDone);
    await byThread.waitFor(plannerDone);
    await byProject.waitFor(plannerDone);
    await finishes.waitFor(plannerDone);
    const all = await open({}, { lastEventId: String(byProject.startedAfter) });
    await all.waitFor((event) => event.type === "run.finished" && event.payload.threadId === elsewhere.id);

    const threadsOf = (stream: SseClient) => new Set(stream.events.map((event) => event.payload.threadId));
    expect(threadsOf(byProject)).toEqual(new Set([planner.id, child.id]));
    expect(threadsOf(all)).toEqual(new Set([planner.id, child.id, elsewhere.id]));
    expect(threadsOf(byThread)).toEqual(new Set([planner.id]));
    expect(threadsOf(byTree)).toEqual(new Set([planner.id, child.id]));
    expect(byTree.events.find((event) => event.type === "thread.created")!.payload.data.thread).toMatchObject({
      threadId: child.id,
      parentThreadId: planner.id,
      relationship: "subagent",
      reportBack: true,
    });
    // The parent's stream shows the child in its timeline and its result as a message.
    expect(byThread.events.find((event) => event.type === "item")!.payload.data.item).toMatchObject({
      kind: "subagent",
      details: { origin: "router_child", childThreadId: child.id },
    });
    expect(byThread.events.find((event) => event.type === "message")!.payload.data.item).toMatchObject({
      role: "user",
      text: expect.stringContaining("from-child"),
      details: { childThreadId: child.id, notification: true },
    });
    expect(new Set(finishes.events.map((event) => event.type))).toEqual(new Set(["run.finished"]));
    expect(finishes.events.map((event) => event.payload.threadId)).toEqual([child.id, planner.id]);

    // A delegated task's stream: its own updates and its child thread's events, not the parent's.
    const agent = await lab.liveAgent({ title: "delegating parent" });
    const task = await mustCall<DelegateTaskResult>(agent.client, "delegate_task", {
      task: "@@reply task-result",
      target: { providerInstanceId: "beta" },
      mode: "async",
      clientRequestId: "events-task",
    });
    const byTask = await open({ taskId: task.taskId }, { lastEventId: String(byProject.startedAfter) });
    const published = await byTask.waitFor(
      (event) => event.type === "task.updated" && event.payload.data.task.finalized === true,
    );
    expect(published.payload).toMatchObject({
      threadId: agent.threadId,
      data: {
        task: { taskId: task.taskId, childThreadId: task.childThreadId, status: "completed", summary: "task-result" },
      },
    });
    await byTask.waitFor((event) => event.type === "run.finished" && event.payload.threadId === task.childThreadId);
    expect(threadsOf(byTask)).toEqual(new Set([agent.threadId, task.childThreadId]));
    expect(
      byTask.events
        .filter((event) => event.payload.threadId === agent.threadId)
        .every((event) => event.type === "task.updated"),
    ).toBe(true);
    agent.release();
  });

  it("replays from Last-Event-ID and goes on live, without a gap or a duplicate, when a client reconnects mid-stream", async () => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      prompt: "@@gate replay-hold @@reply held",
      createdBy: "user",
      creationSource: "api",
    });
    await lab.waitForLiveTurn(thread.id);
    const query = { threadId: thread.id };
    const reference = await open(query);
    const first = await open(query);
    const total = 60;
    let sent = 0;
    const sendSome = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        await lab.host.threads.send({
          threadId: thread.id,
          text: `queued ${++sent}`,
          mode: "queue",
          createdBy: "user",
          creationSource: "api",
        });
        await nextTurn();
      }
    };
    await sendSome(20);
    await first.waitFor((event) => event.payload.data.item?.text === "queued 10");
    // The client goes away mid-stream, work goes on, and it comes back with its last id.
    first.close();
    await first.ended;
    await sendSome(20);
    await reference.waitFor((event) => event.payload.data.item?.text === "queued 40");
    const resumed = await open(query, { lastEventId: first.lastEventId! });
    await sendSome(total - 40);
    await reference.waitFor((event) => event.payload.data.item?.text === `queued ${total}`);
    await resumed.waitFor((event) => event.payload.data.item?.text === `queued ${total}`);

    const seen = [...first.events, ...resumed.events];
    expect(seen.map((event) => event.payload.sequence)).toEqual(reference.sequences());
    // Replayed from the log or pushed live, an event is the same bytes.
    expect(seen.map((event) => event.payload)).toEqual(reference.events.map((event) => event.payload));
    expect(
      reference.events.filter((event) => event.type === "message").map((event) => event.payload.data.item.text),
    ).toEqual(Array.from({ length: total }, (_, i) => `queued ${i + 1}`));
    expect(first.events.length).toBeGreaterThan(0);
    expect(first.events.length).toBeLessThan(reference.events.length);
    expectOrderedIds(seen);
    lab.release("replay-hold");
  });

  it("replays the whole log with after=0, as a first connect without Last-Event-ID", async () => {
    const everything = await open({ after: "0", projectId: lab.projectId, types: "thread.created" });
    const ids = lab.host.store.select("thread", "project_id = ?", [lab.projectId]).map((thread) => thread.id);
    await Promise.all(ids.map((id) => everything.waitFor((event) => event.payload.threadId === id)));
    expect(everything.events.map((event) => event.payload.threadId).sort()).toEqual([...ids].sort());
    expectOrderedIds(everything.events);
  });

  it("carries nothing from projects outside the caller's token's projects, and hides their threads and tasks", async () => {
    const service = lab.host.container.resolve(EventStreamService);
    const resolved = await lab.registry.resolve(token);
    if (!("scope" in resolved)) throw new Error("the token does not resolve");
    const caller = callerFromScope(resolved.scope);
    const hidden = await lab.host.projects.add(mkdtempSync(join(tmpdir(), "switchyard-events-hidden-")), "hidden");
    const hiddenThread = (
      await lab.host.threads.createThread({
        projectId: hidden.id,
        providerInstanceId: "alpha",
        createdBy: "user",
        creationSource: "api",
      })
    ).thread;
    const received: FeedEvent[] = [];
    let arrived: (() => void) | null = null;
    const sink: EventSink = {
      sendUnlogged: () => true,
      send: (events) => {
        received.push(...events);
        arrived?.();
        return true;
      },
      saturated: false,
      drained: async () => true,
    };
    const cursor = await service.open(caller, { allowedProjects: [lab.projectId] }, sink);
    cursor.start();
    try {
      await lab.host.threads.createThread({
        projectId: hidden.id,
        providerInstanceId: "alpha",
        title: "not for this token",
        createdBy: "user",
        creationSource: "api",
      });
      const visible = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          title: "for this token",
          createdBy: "user",
          creationSource: "api",
        })
      ).thread;
      await new Promise<void>((resolve) => {
        arrived = () => received.some((e) => e.event.threadId === visible.id) && resolve();
        arrived();
      });
      expect(received.map((e) => e.projectId)).toEqual([lab.projectId]);
    } finally {
      cursor.close();
    }
    const refusedOpen = async (input: Record<string, unknown>) => {
      try {
        await service.open(caller, { allowedProjects: [lab.projectId], ...input }, sink);
        return null;
      } catch (error) {
        return (error as { code: string }).code;
      }
    };
    expect(await refusedOpen({ threadId: hiddenThread.id })).toBe("thread_not_found");
    expect(await refusedOpen({ projectId: hidden.id })).toBe("capability_denied");
    expect(await refusedOpen({ threadId: hiddenThread.id, allowedProjects: "*" })).toBeNull();
  });

  it("sends heartbeats while nothing happens", async () => {
    const quiet = await open({
      threadId: (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          createdBy: "user",
          creationSource: "api",
        })
      ).thread.id,
    });
    // The opening comment, then pings.
    await quiet.waitForComments(4);
    expect(quiet.events).toEqual([]);
  });
});

describe("GET /api/v1/events under pressure", () => {
  it("cuts off a client that stops reading, keeps every other client whole, and the cut-off client resumes without a loss", async () => {
    const { lab, token } = await startApiLab(
      { capabilities: ["orchestration:read"] },
      { server: { eventStreamMaxBufferedBytes: 256 * 1024, eventStreamHeartbeatMs: 60_000 } },
    );
    const url = eventsUrl(lab, { projectId: lab.projectId, types: "thread.created" });
    try {
      const healthy = await SseClient.connect(url, { token });
      const slow = await SseClient.connect(url, { token });
      slow.pause();
      expect(lab.server.eventStreams.size).toBe(2);
      // Threads with 15 KB titles (15 KB events), until the slow client is cut off, a bounded number of them.
      const big = "x".repeat(15_000);
      let sent = 0;
      let cut = false;
      void lab.server.eventStreams.nextClose().then(() => (cut = true));
      for (let i = 0; i < 5_000 && !cut; i += 1) {
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          title: `${i} ${big}`,
          createdBy: "user",
          creationSource: "api",
        });
        sent += 1;
        if (i % 20 === 19) await nextTurn();
      }
      expect(cut).toBe(true);
      expect(lab.server.eventStreams.size).toBe(1);
      // It reads what reached it before the cut, then finds the stream ended.
      slow.resume();
      await slow.ended;
      const title = (event: ReceivedEvent) => String(event.payload.data.thread.title);
      const last = `${sent - 1} ${big}`;
      await healthy.waitFor((event) => title(event) === last);
      expect(healthy.events.map((event) => Number(title(event).split(" ")[0]))).toEqual(
        Array.from({ length: sent }, (_, i) => i),
      );
      // Whatever the slow client had read, it resumes after it and misses nothing.
      const resumeAfter = slow.lastEventId ?? String(slow.startedAfter);
      const resumed = await SseClient.connect(url, { token, lastEventId: resumeAfter });
      await resumed.waitFor((event) => title(event) === last);
      expect([...slow.events, ...resumed.events].map((event) => event.payload.sequence)).toEqual(healthy.sequences());
      healthy.close();
      resumed.close();
    } finally {
      await lab.stop();
    }
  });

  it("cuts off a client that stops reading during a replay, at the next heartbeats, and it resumes without a loss", async () => {
    const { lab, token } = await startApiLab(
      { capabilities: ["orchestration:read"] },
      { server: { eventStreamHeartbeatMs: 100 } },
    );
    try {
      const start = lab.host.store.lastSequence();
      const big = "y".repeat(15_000);
      // More than the kernel's socket buffers hold, written before anyone reads.
      const count = 800;
      for (let i = 0; i < count; i += 1)
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          title: `${i} ${big}`,
          createdBy: "user",
          creationSource: "api",
        });
      const url = eventsUrl(lab, { types: "thread.created" });
      const cutOff = lab.server.eventStreams.nextClose();
      const stuck = await SseClient.connect(url, { token, lastEventId: String(start) });
      stuck.pause();
      await cutOff;
      stuck.resume();
      await stuck.ended;
      expect(stuck.events.length).toBeLessThan(count);
      // The client resumes from its last id. On a starved machine a reading client can miss two
      // 100 ms heartbeats and be cut off too; it resumes again, as any client would, and still
      // nothing is lost or repeated.
      const received = [...stuck.events];
      let lastEventId = stuck.lastEventId ?? String(start);
      const isLast = (event: ReceivedEvent) => String(event.payload.data.thread.title).startsWith(`${count - 1} `);
      for (let reconnects = 0; reconnects < 20 && !received.some(isLast); reconnects += 1) {
        const resumed = await SseClient.connect(url, { token, lastEventId });
        await resumed.waitFor(isLast).catch(() => undefined);
        resumed.close();
        received.push(...resumed.events);
        lastEventId = resumed.lastEventId ?? lastEventId;
      }
      const titles = received.map((event) => Number(String(event.payload.data.thread.title).split(" ")[0]));
      expect(titles).toEqual(Array.from({ length: count }, (_, i) => i));
    } finally {
      await lab.stop();
    }
  });

  it("counts streams against server.maxEventStreams", async () => {
    const { lab, token } = await startApiLab(
      { capabilities: ["orchestration:read"] },
      { server: { maxEventStreams: 2, maxEventStreamsPerCredential: 2 } },
    );
    const other = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token;
    try {
      const one = await SseClient.connect(eventsUrl(lab), { token });
      const two = await SseClient.connect(eventsUrl(lab), { token });
      const three = refused(await SseClient.open(eventsUrl(lab), { token: other }));
      expect(three.status).toBe(503);
      expect(three.headers["retry-after"]).toBe("1");
      expect(three.body.error.message).toContain("server.maxEventStreams");
      // The slot is free once the server saw the close.
      const closed = lab.server.eventStreams.nextClose();
      one.close();
      await closed;
      expect(lab.server.eventStreams.size).toBe(1);
      const four = await SseClient.connect(eventsUrl(lab), { token: other });
      four.close();
      two.close();
    } finally {
      await lab.stop();
    }
  });

  it("gives each credential a share of server.maxEventStreams (an eighth by default): one more is a 429 naming the limit, other tokens still get theirs", async () => {
    const lab = await McpLab.start({ server: { maxEventStreams: 16 } });
    const issue = () => lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token;
    const greedy = issue();
    const polite = issue();
    try {
      const held = [
        await SseClient.connect(eventsUrl(lab), { token: greedy }),
        await SseClient.connect(eventsUrl(lab), { token: greedy }),
      ];
      const third = refused(await SseClient.open(eventsUrl(lab), { token: greedy }));
      expect([third.status, third.body.error.code, third.body.error.details]).toEqual([
        429,
        "too_many_streams",
        { maxEventStreamsPerCredential: 2, open: 2 },
      ]);
      expect(third.body.error.message).toContain("server.maxEventStreamsPerCredential is 2");
      expect(third.body.error.message).toContain("of the server's 16");
      // The server has room, and another token's share is untouched.
      const theirs = await SseClient.connect(eventsUrl(lab), { token: polite });
      expect(lab.server.eventStreams.size).toBe(3);
      // A closed stream gives its slot back to its own credential.
      const closed = lab.server.eventStreams.nextClose();
      held[0]!.close();
      await closed;
      const again = await SseClient.connect(eventsUrl(lab), { token: greedy });
      for (const stream of [held[1]!, theirs, again]) stream.close();
    } finally {
      await lab.stop();
    }
  });

  it("holds a web UI session to its token's share, and takes server.maxEventStreamsPerCredential when it is set", async () => {
    const { lab, token } = await startApiLab(
      { capabilities: ["orchestration:read"] },
      { server: { maxEventStreams: 16, maxEventStreamsPerCredential: 1 } },
    );
    try {
      const origin = lab.server.url;
      const signedIn = await new ApiClient(lab.server.apiUrl, null).post(
        "/ui/session",
        { token },
        { origin, "sec-fetch-site": "same-origin" },
      );
      expect(signedIn.status).toBe(200);
      const cookie = String(signedIn.headers["set-cookie"]).split(";")[0]!;
      const pageSecret = (signedIn.body as { pageSecret: string }).pageSecret;
      const byToken = await SseClient.connect(eventsUrl(lab), { token });
      const bySession = refused(
        await SseClient.open(eventsUrl(lab), {
          headers: { cookie, "x-switchyard-page-secret": pageSecret, "sec-fetch-site": "same-origin" },
        }),
      );
      expect([
        bySession.status,
        bySession.body.error.code,
        bySession.body.error.details?.maxEventStreamsPerCredential,
      ]).toEqual([429, "too_many_streams", 1]);
      byToken.close();
    } finally {
      await lab.stop();
    }
  });
});
