import type { IncomingMessage, ServerResponse } from "node:http";
import type { Caller } from "../../../services/caller.js";
import type { McpSessionRegistry } from "../../../services/credentials/mcp-session-registry.js";
import { callerFromScope } from "../../mcp/caller-from-scope.js";

/**
 * The caller of an HTTP API request from its `Authorization: Bearer` token, the same tokens and
 * rules as /mcp, checked before anything is read. Tokens are never taken from a URL. Answers 401
 * itself and returns null when the token is missing, malformed or not valid. (A browser UI will
 * authenticate with a cookie: it resolves its caller elsewhere and calls the same handlers.)
 */
export function bearerCaller(req: IncomingMessage, res: ServerResponse, registry: McpSessionRegistry): Caller | null {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) {
    unauthorized(res, header === undefined ? "Missing Authorization header" : "Malformed Authorization header");
    return null;
  }
  const resolved = registry.resolve(match[1]!);
  if ("rejection" in resolved) {
    unauthorized(res, resolved.rejection === "unknown" ? "Unknown token" : `Token ${resolved.rejection.replace("_", " ")}`);
    return null;
  }
  return callerFromScope(resolved.scope);
}

function unauthorized(res: ServerResponse, description: string): void {
  res.writeHead(401, {
    "content-type": "application/json",
    "www-authenticate": `Bearer realm="switchyard", error="invalid_token", error_description="${description}"`,
  });
  res.end(JSON.stringify({ error: { code: "invalid_token", message: `${description}: send Authorization: Bearer <token> (switchyard token issue).`, details: {} } }));
}
