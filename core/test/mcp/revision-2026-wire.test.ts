// What a 2026-07-28 request gets on the wire from /mcp, beside what a 2025 one gets, read with
// plain fetch: the credential is checked before anything else, the revision's own validation
// (standard headers, protocol version) refuses before any tool runs, and the 2026 answers carry
// what that revision requires and no session.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest } from "../support/http-request.js";
import { McpLab } from "../support/mcp-lab.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "wire-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

describe("the 2026-07-28 revision on the wire", () => {
  let lab: McpLab;
  let token: string;
  beforeAll(async () => {
    lab = await McpLab.start();
    token = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
  });
  afterAll(async () => lab.stop());

  async function post(body: unknown, headers: Record<string, string>, bearer: string | null = token): Promise<Answer> {
    const response = await fetch(lab.server.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(bearer !== null ? { authorization: `Bearer ${bearer}` } : {}),
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text) };
  }

  /** A 2026-07-28 request with its standard headers as a conforming client sends them. */
  function modern(
    id: number,
    method: string,
    params: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    bearer?: string | null,
  ): Promise<Answer> {
    const name: Record<string, string> = typeof params.name === "string" ? { "mcp-name": params.name } : {};
    return post(
      { jsonrpc: "2.0", id, method, params: { ...params, _meta: ENVELOPE } },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...name, ...headers },
      bearer,
    );
  }

  it("answers server/discover with the revision, the tools capability and who it is", async () => {
    const answer = await modern(1, "server/discover");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: 1,
      result: {
        resultType: "complete",
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {} },
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "switchyard" } },
      },
    });
  });

  it("checks the credential first: no token, or an unknown one, is 401 whatever the revision", async () => {
    for (const bearer of [null, "sy_not-a-token"]) {
      const answer = await modern(2, "tools/list", {}, {}, bearer);
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer realm="switchyard", error="invalid_token"/);
    }
  });

  it("refuses a 2026 request from a browser page of another name (DNS rebinding), as every request", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: { _meta: ENVELOPE } });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    };
    const port = new URL(lab.server.mcpUrl).port;
    const rebinding: Record<string, string>[] = [{ host: `evil.example:${port}` }, { origin: "http://evil.example" }];
    for (const extra of rebinding) {
      const answer = await httpRequest(lab.server.mcpUrl, { headers: { ...headers, ...extra }, body });
      expect(answer.status, JSON.stringify(extra)).toBe(403);
    }
    expect(
      (await httpRequest(lab.server.mcpUrl, { headers: { ...headers, host: `localhost:${port}` }, body })).status,
    ).toBe(200);
  });

  it("calls a tool and answers a complete result with the server's identity and no session id", async () => {
    const answer = await modern(3, "tools/call", { name: "t3_thread_list", arguments: { projectId: lab.projectId } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: 3,
      result: {
        resultType: "complete",
        structuredContent: { threads: [] },
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "switchyard" } },
      },
    });
    expect(answer.headers.get("mcp-session-id")).toBeNull();
  });

  it("refuses a call whose Mcp-Name header is not the tool its body names (HeaderMismatch), before the tool runs", async () => {
    const before = lab.host.store.select("delegatedTask", "1 = 1", []).length;
    const answer = await modern(
      4,
      "tools/call",
      { name: "delegate_task", arguments: { task: "@@reply never", target: { providerInstanceId: "beta" } } },
      { "mcp-name": "t3_thread_list" },
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ id: 4, error: { code: -32020 } });
    expect(lab.host.store.select("delegatedTask", "1 = 1", [])).toHaveLength(before);
  });

  it.each([null, 42, [], { roots: "yes" }])(
    "refuses a retried call whose inputResponses is %j (not a map of answers) with Invalid params, before the tool runs",
    async (inputResponses) => {
      const before = lab.host.store.select("delegatedTask", "1 = 1", []).length;
      const answer = await modern(7, "tools/call", {
        name: "delegate_task",
        arguments: { task: "@@reply never", target: { providerInstanceId: "beta" } },
        inputResponses,
      });
      expect(answer.body).toMatchObject({
        id: 7,
        error: { code: -32602, message: expect.stringContaining("inputResponses") },
      });
      expect(lab.host.store.select("delegatedTask", "1 = 1", [])).toHaveLength(before);
    },
  );

  it("takes a retried call whose inputResponses is a map of answers", async () => {
    const answer = await modern(8, "tools/call", {
      name: "t3_thread_list",
      arguments: { projectId: lab.projectId },
      inputResponses: { roots: { roots: [] } },
    });
    expect(answer.body).toMatchObject({
      id: 8,
      result: { resultType: "complete", structuredContent: { threads: [] } },
    });
  });

  it("takes the token for the session of a 2026 client that names no client", async () => {
    // clientInfo is the one envelope key a client may leave out.
    const anonymous: Record<string, unknown> = { ...ENVELOPE };
    delete anonymous["io.modelcontextprotocol/clientInfo"];
    const args = {
      task: "@@reply from nobody",
      target: { providerInstanceId: "beta" },
      mode: "wait",
      clientRequestId: "anonymous",
    };
    const answer = await post(
      {
        jsonrpc: "2.0",
        id: 10,
        method: "tools/call",
        params: { name: "delegate_task", arguments: args, _meta: anonymous },
      },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "delegate_task" },
    );
    expect(answer.body).toMatchObject({
      id: 10,
      result: { structuredContent: { status: "completed", summary: "from nobody" } },
    });
    const taskId = (answer.body as { result: { structuredContent: { taskId: string } } }).result.structuredContent
      .taskId;
    const parent = lab.host.store.get("thread", lab.host.store.get("delegatedTask", taskId)!.parentThreadId)!;
    expect(parent).toMatchObject({
      providerInstanceId: "attached:client",
      lineage: { relationship: "attached", attached: { mcpSessionId: null, client: null } },
    });
  });

  it("refuses a protocol version it does not serve, naming the one it does", async () => {
    const answer = await post(
      {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/list",
        params: { _meta: { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
      },
      { "mcp-protocol-version": "2099-01-01", "mcp-method": "tools/list" },
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      id: 5,
      error: { code: -32022, data: { supported: ["2026-07-28"], requested: "2099-01-01" } },
    });
  });

  it("refuses a request that names the 2026 revision in its header but carries no envelope", async () => {
    const answer = await post(
      { jsonrpc: "2.0", id: 6, method: "tools/list" },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ id: 6, error: { code: -32602 } });
  });

  it("still answers a 2025 initialize the 2025 way, with the session id that names the client", async () => {
    const answer = await post(
      {
        jsonrpc: "2.0",
        id: 7,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old-client", version: "1" } },
      },
      {},
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: 7,
      result: { protocolVersion: "2025-06-18", serverInfo: { name: "switchyard" } },
    });
    expect((answer.body as { result: Record<string, unknown> }).result).not.toHaveProperty("resultType");
    expect(answer.headers.get("mcp-session-id")).toMatch(/^sy1\./);
  });

  it("refuses a tool call whose arguments hold a __proto__ key, as a complete 2026 result", async () => {
    const response = await fetch(lab.server.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "t3_thread_list",
      },
      body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t3_thread_list","arguments":{"__proto__":{"x":1}},"_meta":${JSON.stringify(ENVELOPE)}}}`,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      result: { resultType: string; isError: boolean; content: { text: string }[] };
    };
    expect(body.result).toMatchObject({ resultType: "complete", isError: true });
    expect(JSON.parse(body.result.content[0]!.text)).toMatchObject({ error: { code: "invalid_request" } });
  });
});
