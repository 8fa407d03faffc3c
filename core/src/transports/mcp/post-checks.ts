import type { IncomingMessage } from "node:http";
import {
  isInitializeRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { parseJsonRpcMessage } from "./json-rpc-message.js";

/** The SDK transport's limit on a JSON-RPC batch (its MAX_BATCH_SIZE, which it does not export). */
const MAX_BATCH_SIZE = 100;

/** Why a POST is refused: its HTTP status and JSON-RPC error, worded as the SDK's transport words them. */
export interface PostRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
}

/**
 * The checks the SDK's StreamableHTTPServerTransport makes on a stateless POST before it hands
 * its messages to the server, in its order, with its statuses, codes and messages (clients and
 * the MCP conformance CLI read them): the Accept header, the batch size, each message against
 * the JSON-RPC schemas, one initialize per POST, and the protocol version header of every other
 * POST. Content type, body size and parse errors are the endpoint's own checks, made before.
 */
export function checkPostMessages(
  req: IncomingMessage,
  body: unknown,
): { messages: JSONRPCMessage[]; initializing: boolean } | { refusal: PostRefusal } {
  // Accept is a comma-separated list: a substring check is what the SDK does, and what clients rely on.
  const accept = req.headers.accept;
  if (accept === undefined || !accept.includes("application/json") || !accept.includes("text/event-stream")) {
    return {
      refusal: {
        status: 406,
        code: -32000,
        message: "Not Acceptable: Client must accept both application/json and text/event-stream",
      },
    };
  }
  if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
    return {
      refusal: {
        status: 400,
        code: -32600,
        message: `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`,
      },
    };
  }
  let messages: JSONRPCMessage[];
  try {
    messages = Array.isArray(body) ? body.map((message) => parseJsonRpcMessage(message)) : [parseJsonRpcMessage(body)];
  } catch {
    return { refusal: { status: 400, code: -32700, message: "Parse error: Invalid JSON-RPC message" } };
  }
  // Only a message whose method is "initialize" can be one; the schema check is for the rest of it.
  const initializing = messages.some(
    (message) => "method" in message && message.method === "initialize" && isInitializeRequest(message),
  );
  if (initializing) {
    if (messages.length > 1)
      return {
        refusal: { status: 400, code: -32600, message: "Invalid Request: Only one initialization request is allowed" },
      };
    return { messages, initializing };
  }
  const version = req.headers["mcp-protocol-version"];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
    return {
      refusal: {
        status: 400,
        code: -32000,
        message: `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      },
    };
  }
  return { messages, initializing };
}
