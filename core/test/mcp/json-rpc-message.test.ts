import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { parseJsonRpcMessage } from "../../src/transports/mcp/json-rpc-message.js";

/** What the SDK's schema makes of a value: its output, or that it refuses it. */
function bySchema(value: unknown): { ok: true; message: unknown } | { ok: false } {
  const result = JSONRPCMessageSchema.safeParse(value);
  return result.success ? { ok: true, message: result.data } : { ok: false };
}

function byParser(value: unknown): { ok: true; message: unknown } | { ok: false } {
  try {
    return { ok: true, message: parseJsonRpcMessage(value) };
  } catch {
    return { ok: false };
  }
}

// Bodies as JSON.parse gives them (so "__proto__" is an own key, as on the wire).
const bodies: string[] = [
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t3_thread_list","arguments":{"projectId":"p"}}}`,
  `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`,
  `{"jsonrpc":"2.0","id":0,"method":"ping","params":{}}`,
  `{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
  `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`,
  `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
  `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
  `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
  `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
  `{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
  `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":3},"name":"x"}}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1.5},"name":"x"}}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":null}}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"polluted":true},"name":"x"}}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","__proto__":{"polluted":true}}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`,
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`,
  `{"jsonrpc":"2.0","id":1,"method":7}`,
  `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
  `{"id":1,"method":"ping"}`,
  `{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`,
  `{"jsonrpc":"2.0","id":1,"result":{}}`,
  `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`,
  `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`,
  `[]`,
  `null`,
  `"text"`,
  `42`,
];

describe("parseJsonRpcMessage", () => {
  it.each(bodies)("agrees with the SDK's schema on %s", (text) => {
    const value = JSON.parse(text) as unknown;
    const expected = bySchema(JSON.parse(text));
    const actual = byParser(value);
    expect(actual.ok).toBe(expected.ok);
    if (actual.ok && expected.ok) expect(actual.message).toStrictEqual(expected.message);
  });

  it("answers objects of its own: the body it was given is not the message", () => {
    const body = JSON.parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`) as {
      params: unknown;
    };
    const message = parseJsonRpcMessage(body) as unknown as { params: unknown };
    expect(message).not.toBe(body);
    expect(message.params).not.toBe(body.params);
  });

  it("throws as the schema does for a body that is not a message", () => {
    expect(() => parseJsonRpcMessage({ jsonrpc: "2.0", id: 1.5, method: "ping" })).toThrow();
    expect(() => parseJsonRpcMessage({ jsonrpc: "2.0", id: 1, method: "ping", extra: 1 })).toThrow();
  });
});
