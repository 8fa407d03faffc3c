// The HTTP API (/api/v1) as a router or script calls it: raw requests with a bearer token, or
// with a web UI session's cookies, answered with the status and the parsed JSON body.
import { rawRequest } from "./mcp.js";

/**
 * Calls `method path` below /api/v1. `token` goes in Authorization; `headers` are added as
 * they are (cookies, Origin); `stream` only waits for the answer's head (the event stream).
 */
export async function api(server, method, path, { token = null, body, headers = {}, stream = false } = {}) {
  const answer = await rawRequest(`${server.url}/api/v1${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: body === undefined ? null : JSON.stringify(body),
    headersOnly: stream,
  });
  let json = null;
  try {
    json = answer.body ? JSON.parse(answer.body) : null;
  } catch {
    // not JSON
  }
  return { ...answer, json };
}

/** Whether an answer served the request (2xx). */
export const served = (answer) => answer.status >= 200 && answer.status < 300;

/** `HTTP 403 capability_denied`, for the report. */
export const describeAnswer = (answer) =>
  `HTTP ${answer.status}${answer.json?.error?.code ? ` ${answer.json.error.code}` : typeof answer.json?.error === "string" ? ` ${answer.json.error}` : ""}${answer.error ? ` ${answer.error}` : ""}`;
