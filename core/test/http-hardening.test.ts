import { Agent, request } from "node:http";
import { connect } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpSessionRegistry } from "../src/services/credentials/mcp-session-registry.js";
import { startServer } from "../src/transports/http/switchyard-server.js";
import { McpLab } from "./support/mcp-lab.js";
import { callTool, connectMcp, mustCall } from "./support/mcp-client.js";
import { scriptedInstance, startTestHost, type TestHost } from "./support/test-host.js";

const TOOLS_LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';

interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One POST, by default on its own connection (no pooled socket carries over between checks). */
function post(
  port: number,
  headers: Record<string, string>,
  body = TOOLS_LIST,
  agent: Agent | false = false,
): Promise<HttpAnswer> {
  return requestWithBody(port, "POST", headers, body, agent);
}

/** One request with a body to /mcp, sent as Node's client sends it for `method`. */
function requestWithBody(
  port: number,
  method: string,
  headers: Record<string, string>,
  body: string,
  agent: Agent | false = false,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method,
        agent,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Writes raw bytes on a fresh connection and collects what the server sends until it closes
 * the connection, or until `boundMs` passes (then `closedByServer` is false).
 */
function rawExchange(
  port: number,
  text: string,
  boundMs = 10_000,
): Promise<{ answer: string; status: number | null; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    const done = (closedByServer: boolean) => {
      clearTimeout(bound);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      resolve({ answer, status: status ? Number(status[1]) : null, closedByServer });
    };
    const bound = setTimeout(() => {
      done(false);
      socket.destroy();
    }, boundMs);
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(text));
    socket.on("data", (chunk: string) => (answer += chunk));
    // A reset after the server hung up is an outcome to assert on, not a test failure.
    socket.on("error", () => undefined);
    socket.on("close", () => done(true));
  });
}

function rawPost(port: number, headers: string[], body: string, contentLength = Buffer.byteLength(body)): string {
  return [
    "POST /mcp HTTP/1.1",
    ...headers,
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    `Content-Length: ${contentLength}`,
    "",
    body,
  ].join("\r\n");
}

function errorOf(answer: HttpAnswer): { code: number; message: string } {
  return (JSON.parse(answer.body) as { error: { code: number; message: string } }).error;
}

describe("HTTP server hardening", () => {
  let lab: McpLab;
  let token: string;
  let port: number;
  beforeAll(async () => {
    lab = await McpLab.start({ server: { headersTimeoutMs: 300, requestTimeoutMs: 500, maxRequestBodyBytes: 4096 } });
    token = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    port = lab.server.port;
  });
  afterAll(async () => lab.stop());

  it("accepts a loopback name on any port in Host and Origin, so port-forwards and proxies work", async () => {
    for (const host of [
      "localhost:9000",
      "127.0.0.1:1",
      "[::1]:65535",
      "LOCALHOST:7410",
      "localhost",
      "127.0.0.1",
      `127.0.0.1:${port}`,
    ]) {
      const answer = await post(port, { authorization: `Bearer ${token}`, host });
      expect(answer.status, host).toBe(200);
    }
    for (const origin of [
      "http://localhost:9000",
      "https://127.0.0.1",
      "http://[::1]:3000",
      `http://127.0.0.1:${port}`,
      "null",
    ]) {
      const answer = await post(port, { authorization: `Bearer ${token}`, host: "localhost:9000", origin });
      expect(answer.status, origin).toBe(200);
    }
  });

  it("refuses every other name in Host or Origin with 403 naming it", async () => {
    for (const host of [
      "evil.example",
      `evil.example:${port}`,
      "localhost.evil.example:80",
      "127.0.0.2:7410",
      "0.0.0.0:7410",
      "[::2]:80",
      "localhost:99999",
      "localhost:",
      "127.0.0.1.nip.io",
    ]) {
      const answer = await post(port, { authorization: `Bearer ${token}`, host });
      expect(answer.status, host).toBe(403);
      expect(JSON.parse(answer.body), host).toMatchObject({
        error: "forbidden",
        error_description: expect.stringContaining(JSON.stringify(host)),
      });
    }
    for (const origin of [
      "http://evil.example",
      `http://evil.example:${port}`,
      "http://localhost.evil.example:9000",
      "file://localhost/x",
      "not a url",
    ]) {
      const answer = await post(port, { authorization: `Bearer ${token}`, host: `127.0.0.1:${port}`, origin });
      expect(answer.status, origin).toBe(403);
      expect(JSON.parse(answer.body), origin).toMatchObject({
        error: "forbidden",
        error_description: expect.stringContaining("Origin"),
      });
    }
  });

  it("answers 400 to a request with two Host (or two Authorization) headers and closes the connection", async () => {
    const twoHosts = await rawExchange(
      port,
      rawPost(port, [`Host: 127.0.0.1:${port}`, "Host: evil.example", `Authorization: Bearer ${token}`], TOOLS_LIST),
    );
    expect(twoHosts.status).toBe(400);
    expect(twoHosts.answer).toContain("2 Host headers");
    expect(twoHosts.closedByServer).toBe(true);
    const twoTokens = await rawExchange(
      port,
      rawPost(
        port,
        [
          `Host: 127.0.0.1:${port}`,
          `Authorization: Bearer ${token}`,
          "Authorization: Bearer sy_someone_elses_token_abcdefgh",
        ],
        TOOLS_LIST,
      ),
    );
    expect(twoTokens.status).toBe(400);
    expect(twoTokens.answer).toContain("2 Authorization headers");
  });

  it("closes the connection of a refused request (401, 403) instead of keeping it alive", async () => {
    const unauthenticated = await rawExchange(
      port,
      rawPost(port, [`Host: 127.0.0.1:${port}`, "Connection: keep-alive"], TOOLS_LIST),
    );
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.answer.toLowerCase()).toContain("connection: close");
    expect(unauthenticated.closedByServer).toBe(true);
    const forbidden = await rawExchange(
      port,
      rawPost(port, ["Host: evil.example", `Authorization: Bearer ${token}`, "Connection: keep-alive"], TOOLS_LIST),
    );
    expect(forbidden.status).toBe(403);
    expect(forbidden.closedByServer).toBe(true);
    // An answered request keeps its connection: only refusals close it.
    const keepAlive = new Agent({ keepAlive: true });
    const served = await post(port, { authorization: `Bearer ${token}` }, TOOLS_LIST, keepAlive);
    keepAlive.destroy();
    expect(served.status).toBe(200);
    expect(served.headers.connection).toBe("keep-alive");
  });

  it("cuts a connection whose body stalls, authenticated or not, after the request timeout", async () => {
    // Headers complete, then 1 byte of a declared 100-byte body, then nothing.
    const authenticated = await rawExchange(
      port,
      rawPost(port, [`Host: 127.0.0.1:${port}`, `Authorization: Bearer ${token}`], "{", 100),
    );
    expect(authenticated.closedByServer).toBe(true);
    expect(authenticated.status).toBe(408);
    const anonymous = await rawExchange(port, rawPost(port, [`Host: 127.0.0.1:${port}`], "{", 100));
    expect(anonymous.closedByServer).toBe(true);
    expect(anonymous.status).toBe(401);
  });

  it("cuts a connection whose headers stall after the headers timeout", async () => {
    const stalled = await rawExchange(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    expect(stalled.closedByServer).toBe(true);
    expect(stalled.status).toBe(408);
    const silent = await rawExchange(port, "");
    expect(silent.closedByServer).toBe(true);
  });

  it("does not cut a blocking tool call that answers after the request timeout", async () => {
    const agent = await lab.liveAgent();
    const client = await lab.client(["orchestration:read"]);
    // 1.5 s of waiting against a 0.5 s request timeout, as one JSON answer and as a progress stream.
    expect(await callTool(client, "t3_thread_wait", { threadId: agent.threadId, timeoutMs: 1_500 })).toMatchObject({
      ok: true,
      value: { waitTimedOut: true },
    });
    const progress: unknown[] = [];
    expect(
      await callTool(
        client,
        "t3_thread_wait",
        { threadId: agent.threadId, timeoutMs: 1_500 },
        { onprogress: (p) => progress.push(p) },
      ),
    ).toMatchObject({ ok: true, value: { waitTimedOut: true } });
    agent.release();
  });

  it("answers in one JSON body unless the request asked for progress, then as an SSE stream", async () => {
    const auth = { authorization: `Bearer ${token}` };
    const plain = await post(
      port,
      auth,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "t3_thread_list", arguments: { projectId: lab.projectId } },
      }),
    );
    expect(plain.status).toBe(200);
    expect(plain.headers["content-type"]).toContain("application/json");
    expect(Number(plain.headers["content-length"])).toBe(Buffer.byteLength(plain.body));
    expect(JSON.parse(plain.body)).toMatchObject({
      id: 7,
      result: { structuredContent: { projectId: lab.projectId } },
    });
    const streamed = await post(
      port,
      auth,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        method: "tools/call",
        params: { name: "t3_thread_list", arguments: { projectId: lab.projectId }, _meta: { progressToken: "p1" } },
      }),
    );
    expect(streamed.status).toBe(200);
    expect(streamed.headers["content-type"]).toContain("text/event-stream");
    expect(streamed.body).toContain('"id":8');
  });

  it("answers an empty batch with a JSON-RPC -32600 error body and HTTP 400", async () => {
    const answer = await post(port, { authorization: `Bearer ${token}` }, "[]");
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: expect.stringContaining("empty") },
    });
  });

  it('refuses a "__proto__" key, which the SDK\'s schemas would drop silently: a typed tool failure in a tool call, Invalid Request elsewhere', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const call =
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_threads","arguments":{"threads":[{"__proto__":{"polluted":true}}]}}}';
    const answer = await post(port, auth, call);
    expect(answer.status).toBe(200);
    const result = JSON.parse(answer.body) as { id: number; result: { isError: boolean; content: { text: string }[] } };
    expect(result).toMatchObject({ id: 3, result: { isError: true } });
    expect(JSON.parse(result.result.content[0]!.text)).toMatchObject({
      error: {
        code: "invalid_request",
        message: expect.stringContaining("threads.0.__proto__"),
        details: { field: "threads.0.__proto__" },
      },
    });
    const other = await post(port, auth, '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"__proto__":{}}}');
    expect(other.status).toBe(400);
    expect(JSON.parse(other.body)).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32600, message: expect.stringContaining("params.__proto__") },
    });
  });

  it("answers malformed requests with typed JSON-RPC errors: not JSON, empty, wrong content type, too large", async () => {
    const auth = { authorization: `Bearer ${token}` };
    const notJson = await post(port, auth, "{not json");
    expect(notJson.status).toBe(400);
    expect(errorOf(notJson).code).toBe(-32700);
    const empty = await post(port, auth, "");
    expect(empty.status).toBe(400);
    expect(errorOf(empty)).toMatchObject({ code: -32600, message: expect.stringContaining("empty") });
    const textPlain = await post(port, { ...auth, "content-type": "text/plain" });
    expect(textPlain.status).toBe(415);
    expect(errorOf(textPlain).message).toContain("text/plain");
    const notAMessage = await post(port, auth, "42");
    expect(notAMessage.status).toBe(400);
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: { padding: "x".repeat(5000) } },
    });
    const declared = await post(port, auth, huge);
    expect(declared.status).toBe(413);
    expect(errorOf(declared).message).toContain("4096");
    const chunked = await rawExchange(
      port,
      [
        "POST /mcp HTTP/1.1",
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${token}`,
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        "",
        `${huge.length.toString(16)}\r\n${huge}\r\n0\r\n\r\n`,
      ].join("\r\n"),
    );
    expect(chunked.status).toBe(413);
    // Still serving.
    expect((await post(port, auth)).status).toBe(200);
  });

  it("answers bytes the HTTP parser cannot read with a typed JSON error and closes the connection", async () => {
    // A body sent without a length (what Node's client does for a DELETE with a body) reaches
    // the parser as the start of a second request.
    const unreadable = await rawExchange(port, `NOT AN HTTP REQUEST\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect(unreadable.status).toBe(400);
    expect(unreadable.closedByServer).toBe(true);
    const body = JSON.parse(unreadable.answer.slice(unreadable.answer.indexOf("\r\n\r\n") + 4)) as {
      error: { code: number; message: string };
    };
    expect(body.error).toMatchObject({ code: -32600, message: expect.stringContaining("could not read") });
    expect((await post(port, { authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it("gives a DELETE with a body (sent without a length by Node's client) one answer, never a second one behind it", async () => {
    // The body reaches the parser as a broken second request; when the first was answered
    // already, a second answer after its `Connection: close` fails the client's parser
    // ("Data after Connection: close"). Which comes first is a race, so many are sent at once.
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 10; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          requestWithBody(port, "DELETE", { authorization: `Bearer ${token}` }, TOOLS_LIST).then(
            (answer) => `${answer.status} ${errorOf(answer).code}`,
            (error: Error) => `failed: ${error.message}`,
          ),
        ),
      );
      for (const outcome of answers) outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    // 405 when the method was refused first; 400 (unreadable) when the parser failed first.
    expect([...outcomes.entries()].filter(([outcome]) => !/^(405 -32000|400 -32600)$/.test(outcome))).toEqual([]);
  });
});

/**
 * Sends a whole request before reading anything (as many simple clients do), then reads the
 * answer until the server closes. A server that answers and closes while the body is still
 * arriving resets the connection, and such a client sees its write fail instead of the answer.
 */
function sendAllThenRead(
  port: number,
  head: string,
  body: Buffer[],
): Promise<{ status: number | null; answer: string; error: string | null }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.pause();
    let answer = "";
    let error: string | null = null;
    socket.on("connect", () => {
      socket.write(head);
      for (const [index, frame] of body.entries()) {
        socket.write(
          frame,
          index < body.length - 1
            ? undefined
            : () => {
                socket.setEncoding("utf8");
                socket.resume();
              },
        );
      }
    });
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("error", (failure) => (error = failure.message));
    socket.on("close", () =>
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0) || null, answer, error }),
    );
  });
}

describe("a request body over server.maxRequestBodyBytes", () => {
  let lab: McpLab;
  let token: string;
  beforeAll(async () => {
    lab = await McpLab.start({ server: { maxRequestBodyBytes: 4096 } });
    token = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
  });
  afterAll(async () => lab.stop());

  it("gets its 413 to a client that sends all 8 MiB before reading, declared or chunked, on /mcp and /api/v1, and the connection then closes", async () => {
    const port = lab.server.port;
    const piece = Buffer.alloc(64 * 1024, "x");
    const pieces = 128;
    const outcomes: Record<string, unknown> = {};
    for (const path of ["/mcp", "/api/v1/threads"]) {
      for (const chunked of [false, true]) {
        const head = [
          `POST ${path} HTTP/1.1`,
          `Host: 127.0.0.1:${port}`,
          `Authorization: Bearer ${token}`,
          "Content-Type: application/json",
          "Accept: application/json, text/event-stream",
          chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${piece.length * pieces}`,
          "",
          "",
        ].join("\r\n");
        const frame = chunked
          ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")])
          : piece;
        const body = [...Array.from({ length: pieces }, () => frame), ...(chunked ? [Buffer.from("0\r\n\r\n")] : [])];
        const exchange = await sendAllThenRead(port, head, body);
        outcomes[`${path} ${chunked ? "chunked" : "declared"}`] = [
          exchange.status,
          exchange.error,
          exchange.answer.includes("4096-byte limit (server.maxRequestBodyBytes)"),
          /connection: close/i.test(exchange.answer),
        ];
      }
    }
    expect(outcomes).toEqual({
      "/mcp declared": [413, null, true, true],
      "/mcp chunked": [413, null, true, true],
      "/api/v1/threads declared": [413, null, true, true],
      "/api/v1/threads chunked": [413, null, true, true],
    });
    expect((await post(port, { authorization: `Bearer ${token}` })).status).toBe(200);
  });
});

describe("HTTP server connection cap", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ server: { maxConnections: 2 } });
  });
  afterAll(async () => lab.stop());

  it("answers a connection beyond server.maxConnections with 503 at once and closes it; a freed slot serves again", async () => {
    const token = lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token;
    const port = lab.server.port;
    const held = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const socket = connect(port, "127.0.0.1", () => resolve(socket));
            socket.on("error", () => undefined);
          }),
      ),
    );
    const refused = await rawExchange(
      port,
      rawPost(port, [`Host: 127.0.0.1:${port}`, `Authorization: Bearer ${token}`], TOOLS_LIST),
    );
    expect(refused.status).toBe(503);
    expect(refused.answer).toContain("server.maxConnections");
    expect(refused.closedByServer).toBe(true);
    for (const socket of held) socket.destroy();
    // The server learns of the freed slots asynchronously: retry a bounded number of times.
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
      status = (await post(port, { authorization: `Bearer ${token}` })).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(200);
  });
});

describe("MCP endpoint fairness under load", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("accepts and serves new connections while busy clients keep every connection full, in arrival order", async () => {
    // libuv accepts one connection per event-loop turn. If a turn runs the handlers of every
    // request it read, a busy server accepts one newcomer per round of all busy clients, and the
    // tenth newcomer waits ten rounds. Counting the requests served while a newcomer waits
    // measures that without a clock.
    const token = lab.registry.issueClientToken({ ttlMs: 600_000, capabilities: ["orchestration:read"] }).token;
    const port = lab.server.port;
    const BUSY = 40;
    const NEWCOMERS = 10;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "t3_thread_list", arguments: { projectId: lab.projectId } },
    });
    const keepAlive = new Agent({ keepAlive: true, maxSockets: BUSY });
    const send = (agent: Agent | false) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            path: "/mcp",
            method: "POST",
            agent,
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              authorization: `Bearer ${token}`,
            },
          },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    let served = 0;
    let stop = false;
    const busy = Array.from({ length: BUSY }, async () => {
      for (let i = 0; i < 2_000 && !stop; i += 1) {
        expect(await send(keepAlive)).toBe(200);
        served += 1;
      }
    });
    while (served < BUSY * 3) await new Promise((resolve) => setImmediate(resolve));
    const waits = await Promise.all(
      Array.from({ length: NEWCOMERS }, async () => {
        const before = served;
        expect(await send(false)).toBe(200);
        return served - before;
      }),
    );
    stop = true;
    await Promise.all(busy);
    keepAlive.destroy();
    // In arrival order a newcomer waits behind at most one request per busy client (plus the
    // newcomers ahead of it); one accept per round would make the last wait ~NEWCOMERS rounds.
    expect(Math.max(...waits)).toBeLessThan(2 * BUSY);
  });
});

/** Starts the server, then the host unless startServer already started it (it does where it must wire grants first). */
async function serve(t: TestHost, port: number) {
  const server = await startServer(t.host, { port });
  if (!("isStarted" in t.host && t.host.isStarted)) await t.host.start();
  return server;
}

describe("MCP endpoint across a restart", () => {
  it("keeps serving a connected client after Switchyard restarts on the same port", async () => {
    const home = mkdtempSync(join(tmpdir(), "switchyard-restart-"));
    const providers = [scriptedInstance("alpha", { gateDir: join(home, "gates") })];
    const first = await startTestHost({ home, providers, start: false });
    const firstServer = await serve(first, 0);
    const projectId = (await first.host.projects.add(first.workspace, "main")).id;
    const token = first.host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 600_000, capabilities: ["orchestration:read"] }).token;
    const client = await connectMcp(firstServer.mcpUrl, token);
    try {
      expect(await mustCall(client, "t3_thread_list", { projectId })).toMatchObject({ projectId });
      await firstServer.close();
      await first.host.stop();
      const second = await startTestHost({ home, providers, start: false });
      const secondServer = await serve(second, firstServer.port);
      try {
        // Same client object, no new initialize: each POST stands on its own.
        expect(await mustCall(client, "t3_thread_list", { projectId })).toMatchObject({ projectId });
      } finally {
        await client.close();
        await secondServer.close();
        await second.cleanup();
      }
    } finally {
      rmSync(first.workspace, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("HTTP server bound to another loopback address (serve --host 127.0.0.2)", () => {
  let lab: McpLab;
  let token: string;
  beforeAll(async () => {
    lab = await McpLab.start({ listen: { host: "127.0.0.2" } });
    token = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
  });
  afterAll(async () => lab.stop());

  function getProjects(origin: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.2",
          port: lab.server.port,
          path: "/api/v1/projects",
          agent: false,
          headers: { authorization: `Bearer ${token}`, origin },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end();
    });
  }

  it("accepts its own web UI's pages (an Origin naming the bound address) and still refuses other origins", async () => {
    expect(await getProjects(`http://127.0.0.2:${lab.server.port}`)).toBe(200);
    expect(await getProjects(`http://127.0.0.1:${lab.server.port}`)).toBe(200);
    expect(await getProjects(`http://127.0.0.9:${lab.server.port}`)).toBe(403);
    expect(await getProjects("http://evil.example")).toBe(403);
  });
});
