import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";

type Shell = { threadId: string; link: string; webUrl?: string };
type Read = { thread: Shell; items: { text: string }[] };
type Sent = { threadId: string; threadLink: string; threadWebUrl?: string; runId: string };
type Waited = { threadId: string; threadLink: string; threadWebUrl?: string; status: string };

/** A thread of the lab's project that finished one turn. */
async function finishedThread(lab: McpLab, prompt: string): Promise<string> {
  const { thread } = await lab.host.threads.createThread({
    projectId: lab.projectId,
    providerInstanceId: "alpha",
    runtimeMode: "full-access",
    title: prompt,
    prompt,
    createdBy: "user",
    creationSource: "cli",
  });
  await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 30_000 });
  return thread.id;
}

/**
 * Issue 37 item 4: outside clients cannot open switchyard-thread:// links, so results carry the
 * thread's page in this server's web UI beside them, and every thread id input takes either.
 */
describe("MCP: thread links and web UI URLs for outside clients", () => {
  let lab: McpLab;
  let client: Client;
  let threadId: string;
  beforeAll(async () => {
    lab = await McpLab.start();
    client = await lab.client();
    threadId = await finishedThread(lab, "@@reply linked");
  });
  afterAll(async () => lab.stop());

  it("list, read, send and wait carry the thread's web UI page, and the page serves the UI", async () => {
    const page = `${lab.server.url}/threads/${threadId}`;
    const listed = await mustCall<{ threads: Shell[] }>(client, "t3_thread_list", { projectId: lab.projectId });
    expect(listed.threads.find((shell) => shell.threadId === threadId)).toMatchObject({
      link: expect.stringMatching(/^switchyard-thread:\/\/v2\//),
      webUrl: page,
    });
    const read = await mustCall<Read>(client, "t3_thread_read", { threadId });
    expect(read.thread.webUrl).toBe(page);

    const answer = await fetch(page);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await answer.text()).toMatch(/<html/i);

    const sent = await mustCall<Sent>(client, "t3_thread_send", { threadId, message: "@@reply again" });
    expect(sent.threadWebUrl).toBe(page);
    const waited = await mustCall<Waited>(client, "t3_thread_wait", { threadId, runId: sent.runId });
    expect(waited).toMatchObject({ status: "completed", threadWebUrl: page });
  });

  it("t3_thread_read and t3_thread_send take the thread's link or its web URL as threadId", async () => {
    const { thread } = await mustCall<Read>(client, "t3_thread_read", { threadId });
    for (const reference of [thread.link, thread.webUrl!, `${thread.webUrl!}/`]) {
      const read = await mustCall<Read>(client, "t3_thread_read", { threadId: reference });
      expect(read.thread.threadId).toBe(threadId);
    }
    const sent = await mustCall<Sent>(client, "t3_thread_send", {
      threadId: thread.webUrl!,
      message: "@@reply by url",
    });
    expect(sent.threadId).toBe(threadId);
    await mustCall<Waited>(client, "t3_thread_wait", { threadId: thread.link, runId: sent.runId });
    const read = await mustCall<Read>(client, "t3_thread_read", { threadId: thread.link });
    expect(read.items.map((item) => item.text)).toContain("by url");
  });

  it("says in every tool's schema which thread inputs take a link or a web URL", async () => {
    const { tools } = await client.listTools();
    const described = (tool: string, field: string) =>
      (
        tools.find((entry) => entry.name === tool)?.inputSchema.properties?.[field] as
          { description?: string } | undefined
      )?.description ?? "";
    for (const tool of ["t3_thread_read", "t3_thread_send", "t3_thread_wait", "t3_thread_interrupt"])
      expect(described(tool, "threadId"), tool).toMatch(/its id, its switchyard-thread:\/\/ link or its page URL/);
    // Every tool input named like a thread reference says so: the resolver finds them by name.
    for (const tool of tools) {
      for (const field of ["threadId", "parentThreadId", "childThreadId"]) {
        if (tool.inputSchema.properties?.[field] === undefined) continue;
        expect(described(tool.name, field), `${tool.name}.${field}`).toMatch(/switchyard-thread:\/\/ link/);
      }
    }
  });

  it("refuses another environment's link, another server's page and a malformed link, naming the value", async () => {
    const otherLink = `switchyard-thread://v2/env_0000000000000000/${threadId}`;
    const other = await callTool(client, "t3_thread_read", { threadId: otherLink });
    expect(other).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { field: "threadId", value: otherLink, environmentId: "env_0000000000000000" },
    });
    expect(other.ok === false && other.message).toContain('environmentId "env_0000000000000000"');

    const foreignPage = `http://127.0.0.2:9/threads/${threadId}`;
    for (const [tool, args] of [
      ["t3_thread_read", {}],
      ["t3_thread_send", { message: "@@reply never" }],
    ] as const) {
      const foreign = await callTool(client, tool, { threadId: foreignPage, ...args });
      expect(foreign).toMatchObject({
        ok: false,
        code: "invalid_request",
        details: { field: "threadId", value: foreignPage, reason: "other_origin" },
      });
    }

    const withSecret = await callTool(client, "t3_thread_read", {
      threadId: `http://me:hunter2@127.0.0.1:9/threads/${threadId}`,
    });
    expect(withSecret).toMatchObject({ ok: false, code: "invalid_request", details: { field: "threadId" } });
    expect(JSON.stringify(withSecret)).not.toContain("hunter2");

    const malformed = await callTool(client, "t3_thread_read", { threadId: "switchyard-thread://v1/whatever" });
    expect(malformed).toMatchObject({ ok: false, code: "invalid_request", details: { field: "threadId" } });
    expect(malformed.ok === false && malformed.message).toContain('"switchyard-thread://v1/whatever"');
    expect(malformed.ok === false && malformed.message).toContain("its web UI URL <server>/threads/<threadId>");
  });
});

describe("MCP: thread web URLs on a configured server.webUrl", () => {
  const webUrl = "https://switchyard.example.test/ui";
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ server: { webUrl } });
  });
  afterAll(async () => lab.stop());

  it("builds web URLs on server.webUrl and accepts them and the bound address's back", async () => {
    const client = await lab.client();
    const threadId = await finishedThread(lab, "@@reply public");
    const read = await mustCall<Read>(client, "t3_thread_read", { threadId });
    expect(read.thread.webUrl).toBe(`${webUrl}/threads/${threadId}`);
    for (const reference of [read.thread.webUrl!, `${lab.server.url}/threads/${threadId}`]) {
      expect((await mustCall<Read>(client, "t3_thread_read", { threadId: reference })).thread.threadId).toBe(threadId);
    }
    // The configured base's path is part of it: the same host without it is not a page of ours.
    const outside = await callTool(client, "t3_thread_read", {
      threadId: `https://switchyard.example.test/threads/${threadId}`,
    });
    expect(outside).toMatchObject({ ok: false, code: "invalid_request", details: { reason: "other_origin" } });
  });
});
