// The endpoint's cheap revision check (transports/mcp/request-revision.ts) against the SDK's own
// classifier: every request the SDK serves as 2026-07-28 (or refuses as such) is one the endpoint
// hands the 2026 revision, and every request the SDK leaves to 2025 serving stays there.
import { classifyInboundRequest } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { classifiedModern, namesModernRevision } from "../../src/transports/mcp/request-revision.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const call = (meta?: unknown) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "t3_thread_list", arguments: {}, ...(meta !== undefined ? { _meta: meta } : {}) },
});
const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

const bodies: [string, unknown][] = [
  ["a 2025 call", call()],
  ["a 2025 call with a progress token", call({ progressToken: 1 })],
  ["a 2026 call", call(ENVELOPE)],
  ["a 2026 call with an incomplete envelope", call({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" })],
  ["a claim naming a 2025 revision", call({ ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-06-18" })],
  ["a claim that is not a string", call({ ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": 7 })],
  ["an initialize", initialize],
  ["an initialize with a claim", { ...initialize, params: { ...initialize.params, _meta: ENVELOPE } }],
  ["a 2025 notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
  [
    "a 2026 notification",
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, _meta: ENVELOPE } },
  ],
  ["a response", { jsonrpc: "2.0", id: 1, result: {} }],
  ["a 2025 batch", [call(), { jsonrpc: "2.0", method: "notifications/initialized" }]],
  ["a batch with a 2026 call", [call(), call(ENVELOPE)]],
  ["an empty batch", []],
  ["a batch with a message that is not JSON-RPC", [call(), { jsonrpc: "2.0", id: 2 }]],
  ["a message that is not JSON-RPC", { jsonrpc: "2.0", id: 1 }],
  ["an id JSON-RPC does not allow", { jsonrpc: "2.0", id: { no: 1 }, method: "ping" }],
  ["_meta that is an array", call([1])],
  ["not an object", "hello"],
  ["null", null],
  [
    "a claim on a message that is not JSON-RPC",
    { jsonrpc: "2.0", id: { no: 1 }, method: "tools/list", params: { _meta: ENVELOPE } },
  ],
];
const headers: (string | undefined)[] = [
  undefined,
  "2025-03-26",
  "2025-06-18",
  "2025-11-25",
  "1999-01-01",
  "2026-07-28",
  " 2026-07-28 ",
  "2099-01-01",
];

describe("which requests are the 2026-07-28 revision's", () => {
  it.each(bodies)("agrees with the SDK's classifier on %s, under every protocol version header", (_name, body) => {
    for (const header of headers) {
      const outcome = classifyInboundRequest({
        httpMethod: "POST",
        body,
        ...(header !== undefined ? { protocolVersionHeader: header } : {}),
      });
      const ours = namesModernRevision(header, body);
      const claims = JSON.stringify(body).includes("io.modelcontextprotocol/protocolVersion");
      // The SDK's refusals of a body that is not JSON-RPC name no revision: those stay with the
      // answers 2025 clients always got, unless the body claims the 2026 envelope (then that
      // revision's handler refuses it in its own words). Every other refusal is the 2026 revision's.
      expect(ours, `${header}: ${JSON.stringify(outcome)}`).toBe(
        classifiedModern(outcome) || (claims && outcome.kind === "reject"),
      );
    }
  });
});
