import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptedModelServer, readSseJson } from "../src/index.js";

let server: ScriptedModelServer;
beforeAll(async () => {
  server = await ScriptedModelServer.start({ chunkSize: 4 });
});
afterAll(async () => {
  await server.close();
});

const post = (body: unknown): Promise<Response> =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-model", ...(body as object) }),
  });

type Chunk = { choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>; usage?: unknown };

const bashTool = {
  type: "function",
  function: {
    name: "bash",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
};

describe("OpenAI Chat Completions API", () => {
  it("streams role, content deltas, finish, usage and [DONE]", async () => {
    const events = await readSseJson(
      await post({
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: "system", content: "You are helpful. @@reply system text is ignored" },
          { role: "user", content: [{ type: "text", text: "hi @@reply Hello, world" }] },
        ],
      }),
    );
    expect(events.at(-1)?.data).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => e.data as Chunk);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "" });
    const text = chunks.map((c) => c.choices[0]?.delta["content"] ?? "").join("");
    expect(text).toBe("Hello, world");
    expect(chunks.filter((c) => c.choices[0]?.delta["content"]).length).toBeGreaterThan(1);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
  });

  it("omits the usage chunk unless asked", async () => {
    const events = await readSseJson(await post({ stream: true, messages: [{ role: "user", content: "hi" }] }));
    expect(events.some((e) => typeof e.data === "object" && (e.data as Chunk).usage)).toBe(false);
  });

  it("streams tool_calls and replies with the tool output afterwards", async () => {
    const user = { role: "user", content: "go @@shell echo hi @@then @@reply got {{output}} from {{tool}}" };
    const events = await readSseJson(await post({ stream: true, messages: [user], tools: [bashTool] }));
    const chunks = events.filter((e) => e.data !== "[DONE]").map((e) => e.data as Chunk);
    const calls = chunks.flatMap(
      (c) => (c.choices[0]?.delta["tool_calls"] as Array<Record<string, unknown>> | undefined) ?? [],
    );
    expect(calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "bash", arguments: "" } });
    const args = calls.map((c) => (c["function"] as { arguments?: string }).arguments ?? "").join("");
    expect(JSON.parse(args)).toEqual({ command: "echo hi" });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");

    const id = String(calls[0]?.["id"]);
    const second = await readSseJson(
      await post({
        stream: true,
        tools: [bashTool],
        messages: [
          user,
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id, type: "function", function: { name: "bash", arguments: args } }],
          },
          { role: "tool", tool_call_id: id, content: "hi\n" },
        ],
      }),
    );
    const text = second
      .filter((e) => e.data !== "[DONE]")
      .map((e) => (e.data as Chunk).choices[0]?.delta["content"] ?? "")
      .join("");
    expect(text).toBe("got hi from bash");
  });

  it("answers non-streaming requests with a chat.completion", async () => {
    const body = (await (await post({ messages: [{ role: "user", content: "@@echo" }] })).json()) as {
      object: string;
      choices: Array<{ message: { content: string } }>;
    };
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]?.message.content).toBe("");
    const echoed = (await (await post({ messages: [{ role: "user", content: "say this back @@echo" }] })).json()) as {
      choices: Array<{ message: { content: string } }>;
    };
    expect(echoed.choices[0]?.message.content).toBe("say this back");
  });

  it("fails with an HTTP status or an in-stream error record", async () => {
    const http = await post({ stream: true, messages: [{ role: "user", content: "@@fail 429 slow down" }] });
    expect(http.status).toBe(429);
    const events = await readSseJson(
      await post({ stream: true, messages: [{ role: "user", content: "@@fail stream broken" }] }),
    );
    expect(events.at(-1)?.data).toMatchObject({ error: { message: "broken" } });
    expect(events.some((e) => e.data === "[DONE]")).toBe(false);
  });
});
