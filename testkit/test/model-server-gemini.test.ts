import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptedModelServer, readSseJson } from "../src/index.js";

let server: ScriptedModelServer;
beforeAll(async () => {
  server = await ScriptedModelServer.start();
});
afterAll(async () => {
  await server.close();
});

const post = (path: string, body: unknown): Promise<Response> =>
  fetch(`${server.url}/v1beta/models/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "secret" },
    body: JSON.stringify(body),
  });

const sessionContext = {
  role: "user",
  parts: [{ text: "<session_context>\nThis is the Gemini CLI.\n</session_context>" }],
};
const tools = [
  {
    functionDeclarations: [
      {
        name: "run_shell_command",
        parametersJsonSchema: { type: "object", properties: { command: { type: "string" } } },
      },
      { name: "mcp_probe_echo", parametersJsonSchema: { type: "object", properties: { text: { type: "string" } } } },
    ],
  },
];

type Chunk = {
  candidates: Array<{ content: { parts: Array<Record<string, unknown>> }; finishReason?: string }>;
  usageMetadata?: unknown;
};

describe("Gemini API", () => {
  it("answers the router side call with schema-typed JSON", async () => {
    const response = await post("gemini-3.5-flash-lite:generateContent", {
      contents: [{ role: "user", parts: [{ text: "@@fail should not fail the router" }] }],
      generationConfig: {
        responseMimeType: "application/json",
        responseJsonSchema: {
          type: "OBJECT",
          properties: { complexity_reasoning: { type: "STRING" }, complexity_score: { type: "INTEGER" } },
        },
      },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Chunk;
    const text = String(body.candidates[0]?.content.parts[0]?.["text"]);
    const value = JSON.parse(text) as { complexity_score: unknown };
    expect(Number.isInteger(value.complexity_score)).toBe(true);
    expect(server.requests.at(-1)).toMatchObject({ api: "gemini", model: "gemini-3.5-flash-lite", sideCall: true });
  });

  it("streams text as data-only SSE with finishReason and usage on the last chunk", async () => {
    const response = await post("gemini-x:streamGenerateContent?alt=sse", {
      contents: [
        sessionContext,
        { role: "user", parts: [{ text: "hello @@reply a fairly long reply that spans chunks" }] },
      ],
    });
    const events = await readSseJson(response);
    expect(events.every((e) => e.event === undefined)).toBe(true);
    const chunks = events.map((e) => e.data as Chunk);
    expect(chunks.map((c) => c.candidates[0]?.content.parts[0]?.["text"]).join("")).toBe(
      "a fairly long reply that spans chunks",
    );
    expect(chunks.at(-1)?.candidates[0]?.finishReason).toBe("STOP");
    expect(chunks.at(-1)?.usageMetadata).toBeDefined();
    expect(server.requests.at(-1)?.userText).toBe("hello @@reply a fairly long reply that spans chunks");
  });

  it("calls a function and reads the functionResponse (untrusted_context wrapper) back", async () => {
    const user = { role: "user", parts: [{ text: 'go @@tool echo {"text":"g"}' }] };
    const first = (
      await readSseJson(
        await post("gemini-x:streamGenerateContent?alt=sse", { contents: [sessionContext, user], tools }),
      )
    ).map((e) => e.data as Chunk);
    expect(first[0]?.candidates[0]?.content.parts[0]).toEqual({
      functionCall: { name: "mcp_probe_echo", args: { text: "g" } },
    });

    const second = (
      await readSseJson(
        await post("gemini-x:streamGenerateContent?alt=sse", {
          tools,
          contents: [
            sessionContext,
            user,
            { role: "model", parts: [{ functionCall: { name: "mcp_probe_echo", args: { text: "g" } } }] },
            {
              role: "user",
              parts: [
                {
                  functionResponse: {
                    id: "mcp_probe_echo_1",
                    name: "mcp_probe_echo",
                    response: { output: "<untrusted_context>\nMCP-ECHO:g\n</untrusted_context>" },
                  },
                },
              ],
            },
          ],
        }),
      )
    ).map((e) => e.data as Chunk);
    expect(second.map((c) => c.candidates[0]?.content.parts[0]?.["text"]).join("")).toBe(
      "DONE after mcp_probe_echo: MCP-ECHO:g",
    );
  });

  it("maps @@shell to run_shell_command and streams a JSON array without alt=sse", async () => {
    const response = await post("gemini-x:streamGenerateContent", {
      contents: [{ role: "user", parts: [{ text: "@@shell ls" }] }],
      tools,
    });
    const body = (await response.json()) as Chunk[];
    expect(body[0]?.candidates[0]?.content.parts[0]).toEqual({
      functionCall: { name: "run_shell_command", args: { command: "ls" } },
    });
  });

  it("fails with a Gemini error body", async () => {
    const response = await post("gemini-x:generateContent", {
      contents: [{ role: "user", parts: [{ text: "@@fail 400 bad" }] }],
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" } });
  });
});
