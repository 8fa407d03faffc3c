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
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "sk-ant-secret", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "claude-fake", max_tokens: 1000, ...(body as object) }),
  });

const bash = {
  name: "Bash",
  input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};
const mcpEcho = {
  name: "mcp__probe__echo",
  input_schema: { type: "object", properties: { text: { type: "string" } } },
};

describe("Anthropic Messages API", () => {
  it("streams message_start … message_stop for text (with ?beta=true)", async () => {
    const events = await readSseJson(
      await post("/v1/messages?beta=true", {
        stream: true,
        system: [{ type: "text", text: "You are Claude Code. @@reply not this" }],
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "<system-reminder>ctx</system-reminder>" },
              { type: "text", text: "hi" },
            ],
          },
        ],
      }),
    );
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events[1]?.data).toMatchObject({ index: 0, content_block: { type: "text", text: "" } });
    expect(events[3]?.data).toMatchObject({ delta: { type: "text_delta", text: "PONG" } });
    expect(events[5]?.data).toMatchObject({ delta: { stop_reason: "end_turn" } });
    const recorded = server.requests.at(-1);
    expect(recorded?.path).toBe("/v1/messages?beta=true");
    expect(recorded?.headers["x-api-key"]).toBe("[redacted]");
    expect(recorded?.userText).toBe("hi");
  });

  it("streams tool_use with input_json_delta and reads tool_result back", async () => {
    const user = { role: "user", content: 'go @@tool echo {"text":"yo"}' };
    const events = await readSseJson(
      await post("/v1/messages", { stream: true, messages: [user], tools: [bash, mcpEcho] }),
    );
    const start = events.find((e) => e.event === "content_block_start")?.data as {
      content_block: Record<string, unknown>;
    };
    expect(start.content_block).toMatchObject({ type: "tool_use", name: "mcp__probe__echo", input: {} });
    expect(String(start.content_block["id"])).toMatch(/^toolu_/);
    const json = events
      .filter((e) => e.event === "content_block_delta")
      .map((e) => (e.data as { delta: { type: string; partial_json: string } }).delta)
      .map((d) => {
        expect(d.type).toBe("input_json_delta");
        return d.partial_json;
      })
      .join("");
    expect(JSON.parse(json)).toEqual({ text: "yo" });
    expect(events.find((e) => e.event === "message_delta")?.data).toMatchObject({ delta: { stop_reason: "tool_use" } });

    const id = String(start.content_block["id"]);
    const second = await readSseJson(
      await post("/v1/messages", {
        stream: true,
        tools: [bash, mcpEcho],
        messages: [
          user,
          { role: "assistant", content: [{ type: "tool_use", id, name: "mcp__probe__echo", input: { text: "yo" } }] },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: id, content: [{ type: "text", text: "MCP-ECHO:yo" }] },
              { type: "text", text: "<system-reminder>keep going</system-reminder>" },
            ],
          },
        ],
      }),
    );
    const text = second
      .filter((e) => e.event === "content_block_delta")
      .map((e) => (e.data as { delta: { text: string } }).delta.text)
      .join("");
    expect(text).toBe("DONE after mcp__probe__echo: MCP-ECHO:yo");
  });

  it("maps @@shell to Claude's Bash", async () => {
    const body = (await (
      await post("/v1/messages", { messages: [{ role: "user", content: "@@shell pwd" }], tools: [bash] })
    ).json()) as {
      content: Array<Record<string, unknown>>;
      stop_reason: string;
    };
    expect(body.stop_reason).toBe("tool_use");
    expect(body.content[0]).toMatchObject({ type: "tool_use", name: "Bash", input: { command: "pwd" } });
  });

  it("counts tokens and 404s the HEAD / probe", async () => {
    const count = await post("/v1/messages/count_tokens", { messages: [{ role: "user", content: "hello" }] });
    expect(await count.json()).toEqual({ input_tokens: expect.any(Number) });
    expect((await fetch(`${server.url}/`, { method: "HEAD" })).status).toBe(404);
  });

  it("fails with an Anthropic error body or an error event", async () => {
    const http = await post("/v1/messages", { stream: true, messages: [{ role: "user", content: "@@fail 529 busy" }] });
    expect(http.status).toBe(529);
    expect(await http.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "busy" } });
    const events = await readSseJson(
      await post("/v1/messages", { stream: true, messages: [{ role: "user", content: "@@fail stream nope" }] }),
    );
    expect(events.map((e) => e.event)).toEqual(["message_start", "error"]);
  });
});
