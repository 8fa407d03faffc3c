import { mkdtempSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LiveWaits } from "../../src/services/live-waits.js";
import { callTool, connectMcp } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";

// The endpoint answers JSON POSTs on its own transport (transports/mcp/json-exchange-transport.ts)
// with pooled servers. What a client sees must be what the SDK's own stateless transport answers,
// and a pooled server must never act for anyone but the caller of the POST it serves.

/** The SDK's own stateless Streamable HTTP server answering JSON: the reference for every answer. */
async function startSdkReference(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: HttpServer = createServer((req, res) => {
    const mcp = new McpServer({ name: "reference", version: "1.0.0" });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const ACCEPT_BOTH = "application/json, text/event-stream";
const ping = (id: number | string) => ({ jsonrpc: "2.0", id, method: "ping" });

/** Whether `holds` came true within ten seconds (a wait's start and end publish no event to wait on). */
async function eventually(holds: () => boolean): Promise<boolean> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    if (holds()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return holds();
}

/** A POST's answer, as a client reads it: status, content type, and the body parsed when there is one. */
async function post(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string | null; body: unknown }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    body: text === "" ? null : JSON.parse(text),
  };
}

describe("the MCP endpoint's JSON answers", () => {
  let lab: McpLab;
  let reference: Awaited<ReturnType<typeof startSdkReference>>;
  let token: string;
  beforeAll(async () => {
    lab = await McpLab.start();
    reference = await startSdkReference();
    token = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
  });
  afterAll(async () => {
    await reference.close();
    await lab.stop();
  });

  const cases: { name: string; body: unknown; headers?: Record<string, string> }[] = [
    { name: "a ping", body: ping(1) },
    { name: "a batch of two requests (ids in order, one a string)", body: [ping(7), ping("b")] },
    { name: "an unknown method", body: { jsonrpc: "2.0", id: 3, method: "resources/nope" } },
    { name: "only a notification", body: { jsonrpc: "2.0", method: "notifications/initialized" } },
    { name: "only a response", body: { jsonrpc: "2.0", id: 9, result: {} } },
    { name: "a request and a notification", body: [ping(4), { jsonrpc: "2.0", method: "notifications/initialized" }] },
    { name: "an Accept header without text/event-stream", body: ping(1), headers: { accept: "application/json" } },
    { name: "an Accept header without application/json", body: ping(1), headers: { accept: "text/event-stream" } },
    {
      name: "an unsupported protocol version header",
      body: ping(1),
      headers: { "mcp-protocol-version": "1999-01-01" },
    },
    { name: "a supported protocol version header", body: ping(1), headers: { "mcp-protocol-version": "2025-06-18" } },
    { name: "a message that is not JSON-RPC", body: { jsonrpc: "2.0", id: 1 } },
    { name: "a request with an id JSON-RPC does not allow", body: { jsonrpc: "2.0", id: { no: 1 }, method: "ping" } },
    { name: "a batch over 100 messages", body: Array.from({ length: 101 }, (_, index) => ping(index)) },
    {
      name: "an initialize in a batch",
      body: [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        },
        ping(2),
      ],
    },
  ];

  it.each(cases)("answers $name as the SDK's own transport does", async ({ body, headers }) => {
    const sent = { accept: ACCEPT_BOTH, ...headers };
    const ours = await post(lab.server.mcpUrl, body, { ...sent, authorization: `Bearer ${token}` });
    const theirs = await post(reference.url, body, sent);
    expect(ours).toEqual(theirs);
  });

  it("answers an initialize with the protocol version the SDK negotiates, whatever version header came with it", async () => {
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const sent = { accept: ACCEPT_BOTH, "mcp-protocol-version": "1999-01-01" };
    const ours = await post(lab.server.mcpUrl, initialize, { ...sent, authorization: `Bearer ${token}` });
    const theirs = await post(reference.url, initialize, sent);
    expect(ours.status).toBe(theirs.status);
    expect((ours.body as { result: { protocolVersion: string } }).result.protocolVersion).toBe(
      (theirs.body as { result: { protocolVersion: string } }).result.protocolVersion,
    );
  });

  it("sends an answer with characters beyond ASCII whole (its Content-Length counts bytes)", async () => {
    const title = "Grüße aus dem Stellwerk 🚂";
    await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      title,
      prompt: "@@reply hi",
      createdBy: "user",
      creationSource: "cli",
    });
    const client = await connectMcp(lab.server.mcpUrl, token);
    const listed = await callTool<{ threads: { title: string | null }[] }>(client, "t3_thread_list", {
      projectId: lab.projectId,
    });
    expect(listed.ok && listed.value.threads.map((thread) => thread.title)).toContain(title);
    await client.close();
  });

  it("acts for each POST's own caller while calls with different credentials share its servers", async () => {
    const other = await lab.host.projects.add(mkdtempSync(join(tmpdir(), "switchyard-other-project-")), "other");
    const reader = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token;
    const elsewhere = lab.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: ["orchestration:operate"],
      projects: [other.id],
    }).token;
    const clients = {
      operator: await connectMcp(lab.server.mcpUrl, token),
      reader: await connectMcp(lab.server.mcpUrl, reader),
      elsewhere: await connectMcp(lab.server.mcpUrl, elsewhere),
    };
    const list = (client: (typeof clients)[keyof typeof clients], projectId: string) =>
      callTool(client, "t3_thread_list", { projectId });
    const interrupt = (client: (typeof clients)[keyof typeof clients]) =>
      callTool(client, "t3_thread_interrupt", { threadId: "thr_nope" });
    // Concurrent and interleaved, so one server serves one caller's call, then another's.
    for (let round = 0; round < 3; round += 1) {
      const outcomes = await Promise.all([
        list(clients.operator, lab.projectId),
        interrupt(clients.reader),
        list(clients.elsewhere, lab.projectId),
        interrupt(clients.operator),
        list(clients.elsewhere, other.id),
        list(clients.reader, lab.projectId),
      ]);
      expect(outcomes.map((outcome) => (outcome.ok ? "ok" : outcome.code))).toEqual([
        "ok",
        "capability_denied",
        "capability_denied",
        "thread_not_found",
        "ok",
        "ok",
      ]);
      expect(outcomes[2]).toMatchObject({ details: { projectId: lab.projectId, allowedProjects: [other.id] } });
    }
    for (const client of Object.values(clients)) await client.close();
  });

  it("ends a blocking call's wait on the server when its client hangs up, and keeps serving", async () => {
    const waited = await lab.liveAgent();
    const waiter = await lab.liveAgent();
    const liveWaits = lab.host.container.resolve(LiveWaits);
    // The SDK client's own abort only sends notifications/cancelled, on a POST of its own; a
    // harness that is killed, or times out its HTTP request, closes the connection instead.
    const controller = new AbortController();
    const call = fetch(lab.server.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await lab.tokenFor(waiter.threadId)}`,
        "content-type": "application/json",
        accept: ACCEPT_BOTH,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "t3_thread_wait", arguments: { threadId: waited.threadId } },
      }),
      signal: controller.signal,
    });
    expect(await eventually(() => liveWaits.isThreadBlocked(waiter.threadId))).toBe(true);
    controller.abort();
    await expect(call).rejects.toThrow();
    expect(await eventually(() => !liveWaits.isThreadBlocked(waiter.threadId))).toBe(true);
    expect((await callTool(waiter.client, "t3_thread_list", { projectId: lab.projectId })).ok).toBe(true);
    waited.release();
    waiter.release();
  });
});
