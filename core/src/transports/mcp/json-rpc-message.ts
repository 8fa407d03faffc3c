import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * A parsed JSON body as a JSON-RPC message, checked against the SDK's `JSONRPCMessageSchema`
 * (throws as its `parse` does). The common shape, a request whose params carry no `_meta`, is
 * recognised without zod: the schema accepts it and answers the same fields (the params pass
 * through as they are), and the union's parse was a measurable share of a tool call's cost on
 * the server. Anything else (`_meta`, notifications, responses, anything odd) goes to the schema.
 */
export function parseJsonRpcMessage(value: unknown): JSONRPCMessage {
  if (isPlainRequest(value))
    return ("params" in value ? { ...value, params: { ...(value.params as object) } } : { ...value }) as JSONRPCMessage;
  return JSONRPCMessageSchema.parse(value);
}

function isPlainRequest(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value) || value.jsonrpc !== "2.0" || typeof value.method !== "string") return false;
  const id = value.id;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return false;
  for (const key in value) if (!REQUEST_KEYS.has(key)) return false;
  if (!("params" in value)) return true;
  const params = value.params;
  return isPlainObject(params) && !Object.hasOwn(params, "_meta") && !Object.hasOwn(params, "__proto__");
}
