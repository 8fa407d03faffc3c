import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ScriptedModelServer, readSseJson } from "../src/index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await ScriptedModelServer.start();
});
afterEach(async () => {
  await server.close();
});

const bash = {
  type: "function",
  function: { name: "bash", parameters: { type: "object", properties: { command: { type: "string" } } } },
};

/** One chat request; returns the concatenated text, or the tool call, of the answer. */
async function chat(
  messages: unknown[],
  init: RequestInit = {},
): Promise<{ text: string; toolCall?: { id: string; name: string; arguments: string } }> {
  const response = await fetch(`${server.openAiBaseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, messages, tools: [bash] }),
    ...init,
  });
  let text = "";
  let toolCall: { id: string; name: string; arguments: string } | undefined;
  for (const event of await readSseJson(response)) {
    if (event.data === "[DONE]") continue;
    const delta = (event.data as { choices: Array<{ delta: Record<string, unknown> }> }).choices[0]?.delta ?? {};
    if (typeof delta["content"] === "string") text += delta["content"];
    for (const call of (delta["tool_calls"] as Array<{
      id?: string;
      function: { name?: string; arguments?: string };
    }>) ?? []) {
      toolCall ??= { id: call.id ?? "", name: call.function.name ?? "", arguments: "" };
      toolCall.arguments += call.function.arguments ?? "";
    }
  }
  return toolCall ? { text, toolCall } : { text };
}

const user = (content: string) => ({ role: "user", content });

describe("programmatic scripts", () => {
  it("plays rule steps per tool round, with {{output}} substitution", async () => {
    const rule = server.script(/deploy/, [{ shell: "echo deployed" }, { reply: "result: {{output}} via {{tool}}" }]);
    const first = await chat([user("please deploy")]);
    expect(first.toolCall).toMatchObject({ name: "bash", arguments: '{"command":"echo deployed"}' });
    const second = await chat([
      user("please deploy"),
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: first.toolCall?.id, type: "function", function: { name: "bash", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: first.toolCall?.id, content: "deployed\n" },
    ]);
    expect(second.text).toBe("result: deployed via bash");
    expect(rule.hits).toBe(2);
    expect((await chat([user("something else")])).text).toBe("PONG");
    rule.remove();
    expect((await chat([user("please deploy")])).text).toBe("PONG");
  });

  it("accepts directive strings and predicate matchers", async () => {
    server.script((c) => c.request.model === "m" && c.turn.userText === "exact", "@@reply matched by predicate");
    expect((await chat([user("exact")])).text).toBe("matched by predicate");
  });

  it("serves queued responses once each, in order, before rules and directives", async () => {
    server.script("x", { reply: "rule" });
    server.enqueue({ reply: "first" }, "@@reply second");
    expect(server.queued).toBe(2);
    expect((await chat([user("x @@reply directive")])).text).toBe("first");
    expect((await chat([user("x @@reply directive")])).text).toBe("second");
    expect((await chat([user("x @@reply directive")])).text).toBe("rule");
    expect(server.requests.map((r) => r.decision?.source)).toEqual(["queue", "queue", "rule"]);
  });

  it("does not spend queued responses on side calls", async () => {
    server.enqueue({ reply: "for the turn" });
    // OpenCode's title request: no tools, a title-generator system prompt.
    const body = {
      model: "m",
      stream: true,
      tools: [],
      messages: [{ role: "system", content: "You are a title generator." }, user("hi")],
    };
    await chat([], { body: JSON.stringify(body) });
    expect(server.requests.at(-1)?.sideCall).toBe(true);
    expect(server.queued).toBe(1);
  });
});

describe("timing, holds and failures", () => {
  it("holds a stream open until release, then completes it", async () => {
    const pending = chat([user("@@hold g1 @@reply released")]);
    const held = await server.waitForHold("g1");
    expect(held.completed).toBe(false);
    server.release("g1");
    expect((await pending).text).toBe("released");
    expect(server.requests[0]?.completed).toBe(true);
    // A released gate stays open.
    expect((await chat([user("@@hold g1 @@reply again")])).text).toBe("again");
  });

  it("records a client that hangs up during a hold", async () => {
    const controller = new AbortController();
    const pending = chat([user("@@hold forever")], { signal: controller.signal }).catch((error: unknown) => error);
    await server.waitForHold("forever");
    controller.abort();
    await pending;
    const aborted = await server.waitForRequest((r) => r.clientAborted);
    expect(aborted.completed).toBe(false);
  });

  it("waits before answering", async () => {
    expect((await chat([user("@@wait 120 @@reply late")])).text).toBe("late");
    expect(server.requests[0]?.decision).toMatchObject({ waitMs: 120, source: "directive" });
  });

  it("waitForRequest finds past and future requests and explains a timeout", async () => {
    await chat([user("one")]);
    await expect(server.waitForRequest((r) => r.userText === "one")).resolves.toMatchObject({ seq: 1 });
    const future = server.waitForRequest((r) => r.userText === "two");
    await chat([user("two")]);
    await expect(future).resolves.toMatchObject({ seq: 2 });
    await expect(server.waitForRequest((r) => r.userText === "three", 50)).rejects.toThrow(
      /No matching model request.*\n.*user="one"/,
    );
  });

  it("reports script errors in the reply", async () => {
    expect((await chat([user("@@tool echo {broken")])).text).toMatch(/^SCRIPT ERROR: @@tool echo: bad JSON/);
  });

  it("uses custom default replies", async () => {
    await server.close();
    server = await ScriptedModelServer.start({
      defaultReply: (c) => `ACK ${c.turn.userText}`,
      afterToolReply: (c) => `AFTER ${c.toolResult?.snippet}`,
    });
    expect((await chat([user("hi")])).text).toBe("ACK hi");
    const after = await chat([
      user("@@shell true"),
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ]);
    expect(after.text).toBe("AFTER ok");
  });

  it("reset forgets requests, rules and queue; close cuts held streams and rejects waiters", async () => {
    server.script("a", "@@reply b");
    server.enqueue("@@reply q");
    await chat([user("hi")]);
    server.reset();
    expect(server.requests).toHaveLength(0);
    expect(server.queued).toBe(0);
    expect((await chat([user("a")])).text).toBe("PONG");

    const pending = chat([user("@@hold never")]).catch((error: unknown) => error);
    await server.waitForHold("never");
    const waiter = server.waitForRequest(() => false, 10_000);
    await server.close();
    await expect(waiter).rejects.toThrow(/closed/);
    await pending;
  });
});

describe("routes: whose request it was", () => {
  it("answers through a route's base URL as through the server's, and records the route", async () => {
    const response = await fetch(`${server.routeUrl("child-a")}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [user("hello")] }),
    });
    expect(response.status).toBe(200);
    await chat([user("no route")]);
    expect(server.requests.map((request) => [request.route, request.api])).toEqual([
      ["child-a", "openai-chat-completions"],
      [undefined, "openai-chat-completions"],
    ]);
    expect(() => server.routeUrl("a/b")).toThrow(/letters, digits/);
  });
});
