// Real MCP clients over Streamable HTTP (the MCP SDK's own client), and raw HTTP requests for
// what an MCP client never sends.
import { request } from "node:http";
import { connect as connectTcp } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** The typed failure codes of the orchestration contract (seed 000). */
export const FAILURE_CODES = new Set([
  "capability_denied",
  "parent_not_active",
  "provider_unavailable",
  "model_unavailable",
  "runtime_mode_escalation_denied",
  "interaction_mode_escalation_denied",
  "task_not_found",
  "task_not_cancellable",
  "thread_not_found",
  "run_not_found",
  "thread_not_sendable",
  "thread_not_interruptible",
  "invalid_request",
  "orchestration_error",
]);

/** Connects an MCP SDK client with a bearer token (or none). */
export async function connect(url, token, { name = "switchyard-reliability" } = {}) {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
  );
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/**
 * Calls a tool: `{ ok: true, value }`, or `{ ok: false, code, message }` for a typed failure, or
 * `{ ok: false, code: "untyped", message }` when the error result is not the contract's shape.
 * Transport errors throw.
 */
export async function callTool(client, name, args, { timeoutMs = 120_000 } = {}) {
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: timeoutMs,
    resetTimeoutOnProgress: true,
  });
  if (!result.isError) return { ok: true, value: result.structuredContent };
  const text = result.content?.[0]?.text ?? "";
  try {
    const { error } = JSON.parse(text);
    if (typeof error?.code === "string" && typeof error?.message === "string")
      return { ok: false, code: error.code, message: error.message };
  } catch {
    // falls through
  }
  return { ok: false, code: "untyped", message: text.slice(0, 300) };
}

/** Calls a tool that must succeed. */
export async function mustCall(client, name, args) {
  const outcome = await callTool(client, name, args);
  if (!outcome.ok) throw new Error(`${name} failed: ${outcome.code}: ${outcome.message}`);
  return outcome.value;
}

/**
 * A raw HTTP request to a loopback URL. Resolves `{ status, headers, body }`, or
 * `{ status: 0, error }` when the connection failed or nothing came back within `timeoutMs`.
 * With `headersOnly` it resolves once the answer's head arrived and drops the connection (for
 * streams that do not end: only the status says whether it was served).
 */
export function rawRequest(
  url,
  { method = "POST", headers = {}, body = null, timeoutMs = 15_000, headersOnly = false } = {},
) {
  return new Promise((resolve) => {
    const target = new URL(url);
    const req = request(
      {
        agent: false,
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method,
        headers,
        setHost: !("host" in headers),
      },
      (res) => {
        if (headersOnly) {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "" });
          res.destroy();
          req.destroy();
          return;
        }
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", (error) => {
          clearTimeout(timer);
          resolve({ status: 0, error: error.message });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on("error", (error) => {
      clearTimeout(timer);
      resolve({ status: 0, error: error.message });
    });
    if (body !== null) req.end(body);
    else req.end();
  });
}

/**
 * A POST whose answer is lost on the way back: the request is written on a plain socket and
 * whatever comes back is thrown away unread, as when a client's connection drops after the
 * server received the call. Resolves once the request is written; `close()` ends the socket.
 */
export function postAndLoseAnswer(url, { headers = {}, body }) {
  const target = new URL(url);
  const payload = Buffer.from(body);
  const head = [
    `POST ${target.pathname}${target.search} HTTP/1.1`,
    `host: ${target.host}`,
    `content-length: ${payload.length}`,
    "connection: close",
  ];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ host: target.hostname, port: Number(target.port) }, () => {
      socket.write(`${head.join("\r\n")}\r\n\r\n`);
      socket.write(payload, () => resolve({ close: () => socket.destroy() }));
    });
    socket.on("data", () => undefined);
    socket.once("error", reject);
    socket.on("error", () => undefined);
  });
}

/** The headers a Streamable HTTP client sends with a JSON-RPC POST. */
export function mcpHeaders(token, extra = {}) {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...extra,
  };
}

/** Reads the JSON-RPC message out of a Streamable HTTP answer (JSON or one SSE `data:` event). */
export function jsonRpcMessage(body) {
  const trimmed = body.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return null;
    }
  }
  const data = trimmed
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
  for (const line of data) {
    try {
      return JSON.parse(line);
    } catch {
      // next event
    }
  }
  return null;
}
