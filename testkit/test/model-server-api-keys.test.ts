import { afterEach, describe, expect, it } from "vitest";
import { ScriptedModelServer } from "../src/index.js";

// The scripted server as a gateway that checks API keys: a test proves which key a harness
// sent, in which header, without the key ever being recorded.

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chatBody = JSON.stringify({ model: "local-model", stream: false, messages: [{ role: "user", content: "hi" }] });

function post(path: string, headers: Record<string, string>, body = chatBody): Promise<Response> {
  return fetch(`${server!.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

describe("ScriptedModelServer apiKeys", () => {
  it("answers a request with a known key and records which one, in which header, without the secret", async () => {
    server = await ScriptedModelServer.start({ apiKeys: { gateway: "sk-gateway-1", local: "sk-local-2" } });
    expect((await post("/gateway/v1/chat/completions", { authorization: "Bearer sk-gateway-1" })).status).toBe(200);
    expect(
      (
        await post(
          "/v1/messages",
          { "x-api-key": "sk-local-2", "anthropic-version": "2023-06-01" },
          JSON.stringify({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
        )
      ).status,
    ).toBe(200);
    const [chat, messages] = server.requests;
    expect(chat).toMatchObject({
      api: "openai-chat-completions",
      model: "local-model",
      apiKey: { via: "authorization", label: "gateway" },
      path: "/gateway/v1/chat/completions",
    });
    expect(messages).toMatchObject({ api: "anthropic-messages", apiKey: { via: "x-api-key", label: "local" } });
    expect(JSON.stringify(server.requests)).not.toMatch(/sk-gateway-1|sk-local-2/);
  });

  it("refuses a missing or unknown key with 401 in the wire's own error shape", async () => {
    server = await ScriptedModelServer.start({ apiKeys: { gateway: "sk-gateway-1" } });
    const none = await post("/v1/chat/completions", {});
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: "invalid_api_key" } });
    const wrong = await post("/v1/messages", { "x-api-key": "sk-other" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    const gemini = await post(
      "/v1beta/models/gemini-x:generateContent",
      { "x-goog-api-key": "nope" },
      JSON.stringify({ contents: [] }),
    );
    expect(gemini.status).toBe(401);
    expect(await gemini.json()).toMatchObject({ error: { status: "UNAUTHENTICATED" } });
    expect(server.requests.map((request) => [request.refused, request.apiKey?.label ?? null])).toEqual([
      [true, null],
      [true, null],
      [true, null],
    ]);
    // A Gemini key in the query string counts too.
    expect(
      (
        await post(
          "/v1beta/models/gemini-x:generateContent?key=sk-gateway-1",
          {},
          JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
        )
      ).status,
    ).toBe(200);
    expect(server.requests.at(-1)?.apiKey).toEqual({ via: "?key", label: "gateway" });
  });

  it("without apiKeys accepts any request and still says which header carried a key", async () => {
    server = await ScriptedModelServer.start();
    expect((await post("/v1/chat/completions", { "api-key": "anything" })).status).toBe(200);
    expect(server.requests[0]?.apiKey).toEqual({ via: "api-key", label: null });
    expect(server.requests[0]?.refused).toBeUndefined();
  });
});
