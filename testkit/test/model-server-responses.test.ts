import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptedModelServer, readSseJson } from "../src/index.js";

let server: ScriptedModelServer;
beforeAll(async () => {
  server = await ScriptedModelServer.start();
});
afterAll(async () => {
  await server.close();
});

const post = (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${server.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-secret", ...headers },
    body: JSON.stringify(body),
  });

const userMessage = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const codexTools = [
  { type: "function", name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } },
  {
    type: "namespace",
    name: "mcp__probe",
    tools: [
      { type: "function", name: "echo", parameters: { type: "object", properties: { text: { type: "string" } } } },
    ],
  },
];

describe("OpenAI Responses API", () => {
  it("streams the full text event sequence Pi needs", async () => {
    const response = await post({ model: "fake-model", stream: true, input: [userMessage("hello")] });
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    const events = await readSseJson(response);
    const types = events.map((e) => e.event);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => (e.data as { sequence_number: number }).sequence_number)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8,
    ]);
    const completed = events.at(-1)?.data as {
      response: { status: string; output: unknown[]; usage: { total_tokens: number } };
    };
    expect(completed.response.status).toBe("completed");
    expect(completed.response.output).toEqual([
      expect.objectContaining({
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "PONG", annotations: [] }],
      }),
    ]);
    expect(completed.response.usage.total_tokens).toBeGreaterThan(0);
  });

  it("calls a Codex namespaced MCP tool with its namespace, then replies with the tool output", async () => {
    const script = userMessage('go @@tool echo {"text":"hi"}');
    const first = await readSseJson(await post({ stream: true, input: [script], tools: codexTools }));
    const done = first.find((e) => e.event === "response.output_item.done")?.data as { item: Record<string, unknown> };
    expect(done.item).toMatchObject({
      type: "function_call",
      name: "echo",
      namespace: "mcp__probe",
      arguments: '{"text":"hi"}',
    });
    expect(first.map((e) => e.event)).toContain("response.function_call_arguments.delta");

    const callId = String(done.item["call_id"]);
    const second = await readSseJson(
      await post({
        stream: true,
        tools: codexTools,
        input: [
          { type: "message", role: "developer", content: [{ type: "input_text", text: "be brief @@reply nope" }] },
          script,
          { type: "function_call", name: "echo", namespace: "mcp__probe", call_id: callId, arguments: '{"text":"hi"}' },
          { type: "function_call_output", call_id: callId, output: [{ type: "input_text", text: "MCP-ECHO:hi" }] },
        ],
      }),
    );
    const text = second.find((e) => e.event === "response.output_text.done")?.data as { text: string };
    expect(text.text).toBe("DONE after mcp__probe__echo: MCP-ECHO:hi");

    const recorded = server.requests.filter((r) => r.api === "openai-responses").slice(-2);
    expect(recorded[0]?.toolNames).toEqual(["exec_command", "mcp__probe__echo"]);
    expect(recorded[0]?.headers["authorization"]).toBe("[redacted]");
    expect(recorded[1]?.toolResult).toMatchObject({ toolName: "mcp__probe__echo", output: "MCP-ECHO:hi" });
    expect(recorded[1]?.stepIndex).toBe(1);
  });

  it("maps @@shell to Codex's exec_command", async () => {
    const events = await readSseJson(
      await post({ stream: true, input: [userMessage("run @@shell echo hi")], tools: codexTools }),
    );
    const done = events.find((e) => e.event === "response.output_item.done")?.data as { item: Record<string, unknown> };
    expect(done.item).toMatchObject({ name: "exec_command", arguments: '{"cmd":"echo hi"}' });
  });

  it("says so when the scripted tool is not offered", async () => {
    const events = await readSseJson(
      await post({ stream: true, input: [userMessage("@@tool nope {}")], tools: codexTools }),
    );
    const text = events.find((e) => e.event === "response.output_text.done")?.data as { text: string };
    expect(text.text).toBe("TOOL NOT OFFERED: nope. Offered: exec_command, mcp__probe__echo");
  });

  it("answers non-streaming requests with a response object", async () => {
    const response = await post({ input: "plain @@reply hi there" });
    const body = (await response.json()) as { object: string; output: Array<{ content: Array<{ text: string }> }> };
    expect(body.object).toBe("response");
    expect(body.output[0]?.content[0]?.text).toBe("hi there");
  });

  it("fails with HTTP 500 or a response.failed event", async () => {
    const http = await post({ stream: true, input: [userMessage("@@fail kaboom")] });
    expect(http.status).toBe(500);
    expect(await http.json()).toMatchObject({ error: { message: "kaboom" } });
    const events = await readSseJson(await post({ stream: true, input: [userMessage("@@fail stream kaboom")] }));
    expect(events.at(-1)).toMatchObject({
      event: "response.failed",
      data: { response: { status: "failed", error: { message: "kaboom" } } },
    });
  });

  it("answers WebSocket upgrade attempts on GET /v1/responses with 426", async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${server.url}/v1/responses`, { headers: { connection: "Upgrade", upgrade: "websocket" } });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("upgrade", () => resolve(101));
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(426);
    expect((await fetch(`${server.url}/v1/responses`)).status).toBe(426);
    expect(server.requests.filter((r) => r.api === "websocket-upgrade")).toHaveLength(2);
  });

  it("lists models", async () => {
    const body = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(body.data.map((m) => m.id)).toEqual(["fake-model"]);
  });
});
